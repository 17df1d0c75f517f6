"""Port of test/e2e/apimachinery/discovery.go (kubernetes/kubernetes), the [Conformance] test
"should validate PreferredVersion for each APIGroup"."""

from e2e_framework import conformance, expect_no_error, fail, logf, raw_call


@conformance("[sig-api-machinery] Discovery should validate PreferredVersion for each APIGroup "
             "[Conformance]")
def test_discovery_preferred_version(new_framework):
    f = new_framework("discovery")

    # get list of APIGroup endpoints
    # (Discovery().RESTClient().Get().AbsPath("/apis/") keeps the trailing slash)
    lst = expect_no_error(raw_call, f.api_client, "GET", "/apis/",
                          response_type="V1APIGroupList", explain="Failed to find /apis/")
    assert lst.groups, "Missing APIGroups"

    for group in lst.groups:
        if group.name.endswith(".example.com"):
            # ignore known example dynamic API groups that are added/removed during the e2e
            # test run
            continue
        logf("Checking APIGroup: %s", group.name)

        # locate APIGroup endpoint
        api_path = "/apis/" + group.name + "/"
        check_group = expect_no_error(raw_call, f.api_client, "GET", api_path,
                                      response_type="V1APIGroup",
                                      explain="Fail to access: %s" % api_path)
        assert check_group.versions, "No version found for %s" % group.name
        preferred = check_group.preferred_version.group_version \
            if check_group.preferred_version else ""
        logf("PreferredVersion.GroupVersion: %s", preferred)
        logf("Versions found %s", [v.group_version for v in check_group.versions])

        # confirm that the PreferredVersion is a valid version
        match = False
        for version in check_group.versions:
            if version.group_version == preferred:
                logf("%s matches %s", version.group_version, preferred)
                match = True
                break
        if not match:
            fail("Failed to find a valid version for PreferredVersion %s in versions:\n%s",
                 preferred, check_group.versions)
