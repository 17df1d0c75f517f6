"""Ports of the LimitRange [Conformance] tests of test/e2e/scheduling/limit_range.go
(kubernetes/kubernetes v1.32), SIGDescribe("LimitRange") with NewDefaultFramework(
"limitrange") and NamespacePodSecurityLevel baseline: "should create a LimitRange with
defaults and ensure pod has those defaults applied." and "should list, patch and delete a
LimitRange by collection". The file's helpers (getResourceList, newLimitRange, newTestPod,
equalResourceRequirement, checkLimitRangeListQuantity) and resource.Quantity's comparison
and canonical form are in e2e_quota.py.

Upstream source: limit_range.go as stored at kubernetes/kubernetes@029d314e (context-taking
API, NewIndexerInformerWatcherWithLogger, the 30 s retry of the last pod create): the v1.32
text. Later versions add HaveValidResourceVersion / CompareResourceVersion assertions to
the second test; v1.32 has none, so there are none here.

They need shepherd-apiserver's LimitRange and the LimitRanger admission plugin (defaults
and min/max on pod create). The pods of the first test are only created (upstream never
waits for them to run); the scheduler may place them on the nodes.

Images: newTestPod runs imageutils.GetPauseImageName() (registry.k8s.io/pause:3.10), the
same reference as the nodes' offline pause image (PAUSE_IMAGE): no substitution.

Deviations forced by the client:
* Quantities: the Python client holds the server's strings; comparisons go through
  e2e_quota.Quantity: Cmp where upstream uses Cmp (equalResourceList) or Semantic.DeepEqual,
  Go struct equality where it uses reflect.DeepEqual; the patch payload is json.Marshal of
  the typed LimitRange (Go's field order, quantities in canonical form, empty maps omitted).
* ginkgo.NodeTimeout(wait.ForeverTestTimeout) of the second test: the test's context ends
  30 s after it starts; here each step checks the deadline and fails once it has passed, and
  the last poll is cut at the deadline (the harness's own limit is longer).
* The first test's time limit (test_timeout) is the sum of upstream's waits, so a failing
  wait reports upstream's error instead of the harness's default 150 s abort.
"""

import copy
import json
import time
import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (CONTEXT_DEADLINE, IndexerInformerWatcher, by, conformance,
                           describe_error, expect_no_error, fail, go_time, logf, rand_string,
                           selector_from_set)
from e2e_quota import (LIMIT_TYPE_CONTAINER, POD_NAME, _poll, check_limit_range_list_quantity,
                       equal_resource_requirement, format_resource_list, get_resource_list,
                       go_deep_equal_lists, new_limit_range, new_test_pod, quantity_of,
                       reencode_resource_list, semantic_equal_lists)

FOREVER_TEST_TIMEOUT = 30        # wait.ForeverTestTimeout
RESPONDING_TIMEOUT = 2 * 60      # e2eservice.RespondingTimeout


def lr_framework(new_framework):
    """SIGDescribe("LimitRange"): NewDefaultFramework("limitrange"),
    NamespacePodSecurityLevel baseline."""
    return new_framework("limitrange", "baseline")


def expect_ok(err, explain=None):
    """framework.ExpectNoError(err[, explain]) for the helpers' error texts."""
    if err is not None:
        if explain:
            fail("%s: %s", explain, err)
        fail("unexpected error: %s", err)


def expect_error(fn, *args, **kwargs):
    """gomega.Expect(err).To(gomega.HaveOccurred()) around one API call."""
    try:
        fn(*args, **kwargs)
    except ApiException as err:
        logf("got the expected error: %s", describe_error(err))
        return err
    fail("Expected an error to have occurred.  Got:\n    <nil>: nil")


def _pod_repr(pod):
    return json.dumps(client.ApiClient().sanitize_for_serialization(pod))


def _check_pod_requirements(pod, expected):
    for container in pod.spec.containers:
        err = equal_resource_requirement(expected, container.resources or
                                         client.V1ResourceRequirements())
        if err is not None:
            # Print the pod to help in debugging.
            logf("Pod %s does not have the expected requirements", _pod_repr(pod))
            fail("unexpected error: %s", err)


# Release: v1.18
# Testname: LimitRange, resources
# Description: Creating a Limitrange and verifying the creation of Limitrange, updating the
# Limitrange and validating the Limitrange. Creating Pods with resources and validate the
# pod resources are applied to the Limitrange
@pytest.mark.test_timeout(FOREVER_TEST_TIMEOUT + RESPONDING_TIMEOUT + 20 + RESPONDING_TIMEOUT
                          + 30 + 30)
@conformance("[sig-scheduling] LimitRange should create a LimitRange with defaults and ensure "
             "pod has those defaults applied. [Conformance]")
def test_limit_range_defaults(new_framework):
    f = lr_framework(new_framework)
    core = f.core
    ns = f.namespace.metadata.name

    by("Creating a LimitRange")
    min_ = get_resource_list("50m", "100Mi", "100Gi")
    max_ = get_resource_list("500m", "500Mi", "500Gi")
    default_limit = get_resource_list("500m", "500Mi", "500Gi")
    default_request = get_resource_list("100m", "200Mi", "200Gi")
    max_limit_request_ratio = {}
    # strconv.Itoa(time.Now().Nanosecond()) + string(uuid.NewUUID())
    value = str(time.time_ns() % 1000000000) + str(uuid.uuid1())
    limit_range = new_limit_range("limit-range", value, LIMIT_TYPE_CONTAINER, min_, max_,
                                  default_limit, default_request, max_limit_request_ratio)

    by("Setting up watch")
    selector = selector_from_set({"time": value})

    try:
        limit_ranges = core.list_namespaced_limit_range(ns, label_selector=selector)
    except ApiException as err:
        fail("failed to query for limitRanges: %s", describe_error(err))
    if limit_ranges.items:
        fail("Expected\n    <[]v1.LimitRange | len:%d>\nto be empty", len(limit_ranges.items))

    w = IndexerInformerWatcher(core.list_namespaced_limit_range, ns, label_selector=selector)
    try:
        if not w.synced.wait(FOREVER_TEST_TIMEOUT):
            fail("Timeout while waiting for LimitRange informer to sync")

        by("Submitting a LimitRange")
        limit_range = expect_no_error(core.create_namespaced_limit_range, ns, limit_range)

        by("Verifying LimitRange creation was observed")
        event = w.result(RESPONDING_TIMEOUT)
        if event is None:
            fail("Timeout while waiting for LimitRange creation")
        if event["type"] != "ADDED":
            fail("Failed to observe limitRange creation : %s", event)
    finally:
        w.stop()

    by("Fetching the LimitRange to ensure it has proper values")
    limit_range = expect_no_error(core.read_namespaced_limit_range, limit_range.metadata.name,
                                  ns)
    expected = client.V1ResourceRequirements(requests=default_request, limits=default_limit)
    actual = client.V1ResourceRequirements(requests=limit_range.spec.limits[0].default_request,
                                           limits=limit_range.spec.limits[0].default)
    expect_ok(equal_resource_requirement(expected, actual))

    by("Creating a Pod with no resource requirements")
    pod = new_test_pod("pod-no-resources", {}, {})
    pod = expect_no_error(core.create_namespaced_pod, ns, pod)

    by("Ensuring Pod has resource requirements applied from LimitRange")
    pod = expect_no_error(core.read_namespaced_pod, pod.metadata.name, ns)
    _check_pod_requirements(pod, expected)

    by("Creating a Pod with partial resource requirements")
    pod = new_test_pod("pod-partial-resources", get_resource_list("", "150Mi", "150Gi"),
                       get_resource_list("300m", "", ""))
    pod = expect_no_error(core.create_namespaced_pod, ns, pod)

    by("Ensuring Pod has merged resource requirements applied from LimitRange")
    pod = expect_no_error(core.read_namespaced_pod, pod.metadata.name, ns)
    # This is an interesting case, so it's worth a comment
    # If you specify a Limit, and no Request, the Limit will default to the Request
    # This means that the LimitRange.DefaultRequest will ONLY take affect if a
    # container.resources.limit is not supplied
    expected = client.V1ResourceRequirements(
        requests=get_resource_list("300m", "150Mi", "150Gi"),
        limits=get_resource_list("300m", "500Mi", "500Gi"))
    _check_pod_requirements(pod, expected)

    by("Failing to create a Pod with less than min resources")
    pod = new_test_pod(POD_NAME, get_resource_list("10m", "50Mi", "50Gi"), {})
    expect_error(core.create_namespaced_pod, ns, pod)

    by("Failing to create a Pod with more than max resources")
    pod = new_test_pod(POD_NAME, get_resource_list("600m", "600Mi", "600Gi"), {})
    expect_error(core.create_namespaced_pod, ns, pod)

    by("Updating a LimitRange")
    new_min = get_resource_list("9m", "49Mi", "49Gi")
    limit_range.spec.limits[0].min = new_min
    reencode_limit_range(limit_range)
    limit_range = expect_no_error(core.replace_namespaced_limit_range,
                                  limit_range.metadata.name, ns, limit_range)

    by("Verifying LimitRange updating is effective")
    current = {"lr": limit_range}

    def updated():
        current["lr"] = expect_no_error(core.read_namespaced_limit_range,
                                        current["lr"].metadata.name, ns)
        return go_deep_equal_lists(current["lr"].spec.limits[0].min,
                                   {k: quantity_of(v) for k, v in new_min.items()}), None

    expect_ok(_poll(2, 20, updated, immediate=False))
    limit_range = current["lr"]

    by("Creating a Pod with less than former min resources")
    pod = new_test_pod(POD_NAME, get_resource_list("10m", "50Mi", "50Gi"), {})
    expect_no_error(core.create_namespaced_pod, ns, pod)

    by("Failing to create a Pod with more than max resources")
    pod = new_test_pod(POD_NAME, get_resource_list("600m", "600Mi", "600Gi"), {})
    expect_error(core.create_namespaced_pod, ns, pod)

    by("Deleting a LimitRange")
    expect_no_error(core.delete_namespaced_limit_range, limit_range.metadata.name, ns,
                    body=client.V1DeleteOptions(grace_period_seconds=30))

    by("Verifying the LimitRange was deleted")

    def deleted():
        try:
            limit_ranges = core.list_namespaced_limit_range(ns)
        except ApiException as err:
            logf("Unable to retrieve LimitRanges: %s", describe_error(err))
            return False, None
        if not limit_ranges.items:
            logf("limitRange is already deleted")
            return True, None
        for lr in limit_ranges.items:
            logf("LimitRange %s/%s has not yet been deleted", lr.metadata.namespace,
                 lr.metadata.name)
        return False, None

    expect_ok(_poll(5, RESPONDING_TIMEOUT, deleted, immediate=False))

    by("Creating a Pod with more than former max resources")
    pod = new_test_pod(POD_NAME + "2", get_resource_list("600m", "600Mi", "600Gi"), {})
    # When the LimitRanger admission plugin find 0 items from the LimitRange informer cache,
    # it will try to lookup LimitRanges from the local LiveLookupCache which liveTTL is 30s.
    # If a LimitRange was deleted from the apiserver, informer watch the delete event and
    # then handle it lead to the informer cache doesn't have any other items, but the local
    # LiveLookupCache has it and not expired at the same time, the LimitRanger admission
    # plugin will use the deleted LimitRange to validate the request. So the request will
    # be rejected by the plugin till the item is expired.
    #
    # With the following retry, we can make sure the item is expired and the request will
    # be validated as expected.
    # framework.Gomega().Eventually(ctx, create).WithPolling(5s).WithTimeout(30s)
    #     .ShouldNot(gomega.HaveOccurred())
    deadline = time.monotonic() + 30
    last = None
    while True:
        try:
            core.create_namespaced_pod(ns, pod)
            last = None
            break
        except ApiException as err:
            last = err
        if time.monotonic() + 5 > deadline:
            break
        time.sleep(5)
    if last is not None:
        fail("unexpected error: Timed out after 30.000s.\nExpected success, but got an "
             "error:\n    %s", describe_error(last))


def reencode_limit_range(lr):
    """The quantities of a decoded LimitRange as client-go writes them back (String())."""
    for item in lr.spec.limits or []:
        for attr in ("max", "min", "default", "default_request", "max_limit_request_ratio"):
            setattr(item, attr, reencode_resource_list(getattr(item, attr)))
    return lr


def _go_limit_range_item(item):
    """json.Marshal of a v1.LimitRangeItem: Go's field order, empty maps omitted,
    quantities as String() writes them."""
    out = {"type": item.type}
    for attr, key in (("max", "max"), ("min", "min"), ("default", "default"),
                      ("default_request", "defaultRequest"),
                      ("max_limit_request_ratio", "maxLimitRequestRatio")):
        rl = getattr(item, attr)
        if rl:
            out[key] = {k: quantity_of(v).string() for k, v in sorted(rl.items())}
    return out


# Release: v1.26
# Testname: LimitRange, list, patch and delete a LimitRange by collection
# Description: When two limitRanges are created in different namespaces, both MUST succeed.
# Listing limitRanges across all namespaces with a labelSelector MUST find both
# limitRanges. When patching the first limitRange it MUST succeed and the fields MUST equal
# the new values. When deleting the limitRange by collection with a labelSelector it MUST
# delete only one limitRange.
@conformance("[sig-scheduling] LimitRange should list, patch and delete a LimitRange by "
             "collection [Conformance]")
def test_limit_range_list_patch_delete_collection(new_framework):
    f = lr_framework(new_framework)
    # ginkgo.NodeTimeout(wait.ForeverTestTimeout): the spec's context (after BeforeEach)
    node_deadline = time.monotonic() + FOREVER_TEST_TIMEOUT

    def check_node_timeout():
        if time.monotonic() > node_deadline:
            fail("[TIMEDOUT] A node timeout occurred (NodeTimeout %ds): %s",
                 FOREVER_TEST_TIMEOUT, CONTEXT_DEADLINE)

    ns = f.namespace.metadata.name
    core = f.core
    lr_name = "e2e-limitrange-" + rand_string(5)
    e2e_label_selector = "e2e-test=" + lr_name
    patched_label_selector = lr_name + "=patched"

    min_ = get_resource_list("50m", "100Mi", "100Gi")
    max_ = get_resource_list("500m", "500Mi", "500Gi")
    default_limit = get_resource_list("500m", "500Mi", "500Gi")
    default_request = get_resource_list("100m", "200Mi", "200Gi")
    max_limit_request_ratio = {}

    limit_range = client.V1LimitRange(
        metadata=client.V1ObjectMeta(name=lr_name, labels={"e2e-test": lr_name,
                                                           lr_name: "created"}),
        spec=client.V1LimitRangeSpec(limits=[client.V1LimitRangeItem(
            type=LIMIT_TYPE_CONTAINER, min=min_, max=max_, default=default_limit,
            default_request=default_request,
            max_limit_request_ratio=max_limit_request_ratio or None)]))
    # Create a copy to be used in a second namespace
    limit_range2 = copy.deepcopy(limit_range)

    by("Creating LimitRange %r in namespace %r" % (lr_name, ns))
    try:
        limit_range = core.create_namespaced_limit_range(ns, limit_range)
    except ApiException as err:
        fail("Failed to create limitRange %r: %s", lr_name, describe_error(err))
    check_node_timeout()

    by("Creating another limitRange in another namespace")
    lr_namespace = f.create_namespace(lr_name)
    logf("Namespace %r created", lr_namespace.metadata.name)
    logf("Creating LimitRange %r in namespace %r", lr_name, lr_namespace.metadata.name)
    try:
        core.create_namespaced_limit_range(lr_namespace.metadata.name, limit_range2)
    except ApiException as err:
        fail("Failed to create limitRange %r in %r namespace: %s", lr_name,
             lr_namespace.metadata.name, describe_error(err))
    check_node_timeout()

    # Listing across all namespaces to verify api endpoint:
    # listCoreV1LimitRangeForAllNamespaces
    by("Listing all LimitRanges with label %r" % e2e_label_selector)
    try:
        limit_range_list = core.list_limit_range_for_all_namespaces(
            label_selector=e2e_label_selector)
    except ApiException as err:
        fail("Failed to list any limitRanges: %s: %s", describe_error(err), describe_error(err))
    if len(limit_range_list.items) != 2:
        fail("Failed to find the correct limitRange count\nExpected\n    <[]v1.LimitRange | "
             "len:%d>\nto have length 2", len(limit_range_list.items))
    logf("Found %d limitRanges", len(limit_range_list.items))
    check_node_timeout()

    by("Patching LimitRange %r in %r namespace" % (lr_name, ns))
    new_min = get_resource_list("9m", "49Mi", "49Gi")
    limit_range.spec.limits[0].min = new_min

    # json.Marshal(v1.LimitRange{ObjectMeta: {CreationTimestamp, Labels}, Spec: {Limits}})
    metadata = {}
    if limit_range.metadata.creation_timestamp is not None:
        metadata["creationTimestamp"] = go_time(limit_range.metadata.creation_timestamp, False)
    else:
        metadata["creationTimestamp"] = None
    metadata["labels"] = {lr_name: "patched"}
    limit_range_payload = json.dumps(
        {"metadata": metadata,
         "spec": {"limits": [_go_limit_range_item(i) for i in limit_range.spec.limits]}},
        separators=(",", ":"))

    try:
        patched_limit_range = core.patch_namespaced_limit_range(lr_name, ns,
                                                                json.loads(limit_range_payload))
    except ApiException as err:
        fail("Failed to patch limitRange %r: %s", lr_name, describe_error(err))
    patched_labels = patched_limit_range.metadata.labels or {}
    if patched_labels.get(lr_name, "") != "patched":
        fail("%r label didn't have value 'patched' for this limitRange. Current labels: %s\n"
             "Expected\n    <string>: %s\nto equal\n    <string>: patched", lr_name,
             patched_labels, patched_labels.get(lr_name, ""))
    check_min_limit_range = semantic_equal_lists(patched_limit_range.spec.limits[0].min,
                                                 new_min)
    if not check_min_limit_range:
        fail("LimitRange does not have the correct min limitRange. Currently is %s ",
             format_resource_list(patched_limit_range.spec.limits[0].min))
    logf("LimitRange %r has been patched", lr_name)
    check_node_timeout()

    by("Delete LimitRange %r by Collection with labelSelector: %r" % (lr_name,
                                                                     patched_label_selector))
    try:
        core.delete_collection_namespaced_limit_range(
            ns, label_selector=patched_label_selector, body=client.V1DeleteOptions())
    except ApiException as err:
        fail("failed to delete the LimitRange by Collection: %s", describe_error(err))
    check_node_timeout()

    by("Confirm that the limitRange %r has been deleted" % lr_name)
    err = _poll(1, min(10, max(node_deadline - time.monotonic(), 0)),
                check_limit_range_list_quantity(f, patched_label_selector, 0), immediate=True)
    expect_ok(err, "failed to count the required limitRanges")
    logf("LimitRange %r has been deleted.", lr_name)
    check_node_timeout()

    by("Confirm that a single LimitRange still exists with label %r" % e2e_label_selector)
    try:
        limit_range_list = core.list_limit_range_for_all_namespaces(
            label_selector=e2e_label_selector)
    except ApiException as err:
        fail("Failed to list any limitRanges: %s: %s", describe_error(err), describe_error(err))
    if len(limit_range_list.items) != 1:
        fail("Failed to find the correct limitRange count\nExpected\n    <[]v1.LimitRange | "
             "len:%d>\nto have length 1", len(limit_range_list.items))
    logf("Found %d limitRange", len(limit_range_list.items))
    check_node_timeout()
