"""Port of test/e2e/apimachinery/chunking.go (kubernetes/kubernetes), the [Conformance] test
"should return chunks of results for list calls" with its BeforeEach."""

import pytest
from concurrent.futures import ThreadPoolExecutor

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import by, conformance, describe_error, expect_no_error, fail, logf

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage

NUMBER_OF_TOTAL_RESOURCES = 400


def create_resources(f):
    """BeforeEach: 400 pod templates, created by 20 workers (workqueue.ParallelizeUntil)."""
    ns = f.namespace.metadata.name
    c = f.core
    by("creating a large number of resources")

    def create(i):
        for _tries in range(4):  # for tries := 3; tries >= 0; tries--
            try:
                c.create_namespaced_pod_template(ns, client.V1PodTemplate(
                    metadata=client.V1ObjectMeta(name="template-%04d" % i),
                    template=client.V1PodTemplateSpec(spec=client.V1PodSpec(
                        containers=[client.V1Container(name="test", image="test2")]))))
                return None
            except ApiException as err:
                logf("Got an error creating template %d: %s", i, describe_error(err))
        return "Unable to create template %d, exiting" % i

    with ThreadPoolExecutor(max_workers=20) as pool:
        errors = [e for e in pool.map(create, range(NUMBER_OF_TOTAL_RESOURCES)) if e]
    if errors:
        fail(errors[0])


@conformance("[sig-api-machinery] Servers with support for API chunking should return chunks "
             "of results for list calls [Conformance]")
def test_chunking_return_chunks(new_framework):
    f = new_framework("chunking", "privileged")
    create_resources(f)

    ns = f.namespace.metadata.name
    c = f.core
    by("retrieving those results in paged fashion several times")
    for _ in range(3):
        opts = {}
        found = 0
        last_rv = ""
        while True:
            # With numberOfTotalResources=400, we want to ensure that both
            # number of items per page and number of pages are non-trivial.
            opts["limit"] = 17
            lst = expect_no_error(
                c.list_namespaced_pod_template, ns, **opts,
                explain="failed to list pod templates in namespace: %s, given limit: %d"
                        % (ns, opts["limit"]))
            logf("Retrieved %d/%d results with rv %s and continue %s", len(lst.items),
                 opts["limit"], lst.metadata.resource_version, lst.metadata._continue)
            assert len(lst.items) <= opts["limit"]

            if not last_rv:
                last_rv = lst.metadata.resource_version
            assert lst.metadata.resource_version == last_rv
            if not lst.metadata._continue:
                assert lst.metadata.remaining_item_count is None
            else:
                assert lst.metadata.remaining_item_count is not None
                assert (lst.metadata.remaining_item_count + len(lst.items) + found
                        == NUMBER_OF_TOTAL_RESOURCES)
            for item in lst.items:
                assert item.metadata.name == "template-%04d" % found
                found += 1
            if not lst.metadata._continue:
                break
            opts["_continue"] = lst.metadata._continue
        assert found == NUMBER_OF_TOTAL_RESOURCES

    by("retrieving those results all at once")
    limit = NUMBER_OF_TOTAL_RESOURCES + 1
    lst = expect_no_error(
        c.list_namespaced_pod_template, ns, limit=limit,
        explain="failed to list pod templates in namespace: %s, given limit: %d" % (ns, limit))
    assert len(lst.items) == NUMBER_OF_TOTAL_RESOURCES
