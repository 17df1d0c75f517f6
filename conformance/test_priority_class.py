"""Port of one [Conformance] test of test/e2e/scheduling/preemption.go (kubernetes/kubernetes,
v1.32): "[sig-scheduling] SchedulerPreemption [Serial] PriorityClass endpoints verify
PriorityClass endpoints can be operated with different HTTP methods", with the parts of the
SIGDescribe("SchedulerPreemption") BeforeEach/AfterEach it runs under, the "PriorityClass
endpoints" context's own BeforeEach/AfterEach, and the helpers patchPriorityClass and
patchNode. Upstream read: preemption.go as stored at kubernetes/kubernetes@9e8be126 (its
newest conformance test is the v1.31 "validates pod disruption condition is added to the
preempted pod"), and e2enode.WaitForTotalHealthy from test/e2e/framework/node/wait.go.

The other SchedulerPreemption tests need scheduler preemption and are not ported here.

What runs, in Ginkgo's order:

1. framework "sched-preemption" (NamespacePodSecurityLevel baseline) makes its namespace;
2. the SchedulerPreemption BeforeEach: creates the PriorityClasses
   sched-preemption-{low,medium,high}-priority (1, 100, 1000; AlreadyExists is fine),
   e2enode.WaitForTotalHealthy(ctx, cs, time.Minute) (its error is not checked upstream),
   GetReadySchedulableNodes, CheckTestingNSDeletedExcept;
3. framework "sched-preemption-path" (privileged) makes its namespace;
4. the context's BeforeEach creates PriorityClasses p1 and p2 (values 1 and 2, label
   e2e=<uuid made once per suite>);
5. the test; then the context's AfterEach (on failure it logs every PriorityClass; then a
   DeleteCollection by the e2e=<uuid> label), the SchedulerPreemption AfterEach (deletes
   the three PriorityClasses with gracePeriodSeconds 0, ignoring errors, and patches every
   node's status to drop the scheduling.k8s.io/foo extended resource: an empty strategic
   merge patch "{}" here, since nothing added it), and the namespaces are deleted.

Timing: WaitForTotalHealthy wants, on every schedulable untainted node, running kube-system
pods matching .*kube-proxy.*, .*fluentd-elasticsearch.* and .*node-problem-detector.*. The
test cluster runs none, so, as on most upstream clusters (kind, ...), it polls every 2 s for
its whole minute and its error is dropped: the test takes a little over 60 s.

Images: none (no pod is created).

Go-only details: ``json.Marshal`` of the typed objects and
``strategicpatch.CreateTwoWayMergePatch`` are emulated by two_way_merge_patch over the
objects as the client serialises them (PriorityClass and the node status patch have no
list the patch strategy would merge); the patches sent are {"value":10} and
{"description":"updated description"} as upstream. The PriorityClass and Node models of the
installed python3-kubernetes (22.6) have every field these patches touch.
"""

import json
import re
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (check_testing_ns_deleted_except, conformance, describe_error, fail,
                           get_ready_schedulable_nodes, is_already_exists,
                           is_condition_set_as_expected, is_node_schedulable,
                           is_node_untainted, logf, new_uuid, reason_for, to_model)

# testExtendedResource
TEST_EXTENDED_RESOURCE = "scheduling.k8s.io/foo"

# package-level sets.Set[string] upstream (workerNodes, filled by the BeforeEach)
worker_nodes = set()

# ginkgo.Context("PriorityClass endpoints"): testUUID := uuid.New().String(), evaluated once
# when the spec tree is built.
TEST_UUID = new_uuid()

# e2enode's package-level poll (test/e2e/framework/node/wait.go)
NODE_POLL = 2.0

# e2enode requiredPerNodePods
REQUIRED_PER_NODE_PODS = [re.compile(".*kube-proxy.*"),
                          re.compile(".*fluentd-elasticsearch.*"),
                          re.compile(".*node-problem-detector.*")]


def expect_no_error(err, explain="unexpected error"):
    """framework.ExpectNoError for an error text."""
    if err is not None:
        fail("%s: %s", explain, err)


def go_error(err):
    """err.Error() of a client-go API error: the Status message."""
    if isinstance(err, ApiException) and err.body:
        try:
            body = json.loads(err.body)
            if isinstance(body, dict) and body.get("message"):
                return body["message"]
        except ValueError:
            pass
    return describe_error(err)


# --------------------------------------------------------------------------- e2enode


def wait_for_total_healthy(core, timeout):
    """e2enode.WaitForTotalHealthy: PollUntilContextTimeout(poll, timeout, immediate) until
    every node is Ready and every schedulable untainted node runs the required kube-system
    pods. Returns None or the error text."""
    logf("Waiting up to %ss for all nodes to be ready", timeout)
    not_ready = []
    missing_pods_per_node = {}
    deadline = time.monotonic() + timeout
    while True:
        not_ready = []
        # It should be OK to list unschedulable Nodes here.
        try:
            nodes = core.list_node(resource_version="0")
        except ApiException as err:
            return describe_error(err)
        for node in nodes.items:
            if not is_condition_set_as_expected(node, "Ready", True):
                not_ready.append(node)
        try:
            pods = core.list_pod_for_all_namespaces(resource_version="0")
        except ApiException as err:
            return describe_error(err)

        system_pods_per_node = {}
        for pod in pods.items:
            if pod.metadata.namespace == "kube-system" and pod.status is not None and \
                    pod.status.phase == "Running":
                if pod.spec.node_name:
                    system_pods_per_node.setdefault(pod.spec.node_name, []).append(
                        pod.metadata.name)
        missing_pods_per_node = {}
        for node in nodes.items:
            # isNodeSchedulableWithoutTaints
            if is_node_schedulable(node) and is_node_untainted(node):
                for required_pod in REQUIRED_PER_NODE_PODS:
                    found_required = any(required_pod.match(present_pod)
                                         for present_pod in
                                         system_pods_per_node.get(node.metadata.name, []))
                    if not found_required:
                        missing_pods_per_node.setdefault(node.metadata.name, []).append(
                            required_pod.pattern)
        if not not_ready and not missing_pods_per_node:
            break
        if time.monotonic() + NODE_POLL > deadline:
            break  # wait.Interrupted: not an error by itself
        time.sleep(NODE_POLL)

    if not_ready:
        return "Not ready nodes: %s" % [n.metadata.name for n in not_ready]
    if missing_pods_per_node:
        return "Not running system Pods: %s" % missing_pods_per_node
    return None


# --------------------------------------------------------------------------- patches


def two_way_merge_patch(old, new):
    """strategicpatch.CreateTwoWayMergePatch for JSON objects whose changed fields are not
    lists with a patch strategy (a changed list is replaced whole); a removed key is null."""
    patch = {}
    for key in sorted(set(old) | set(new)):
        if key not in new:
            patch[key] = None
        elif key not in old:
            patch[key] = new[key]
        elif isinstance(old[key], dict) and isinstance(new[key], dict):
            sub = two_way_merge_patch(old[key], new[key])
            if sub:
                patch[key] = sub
        elif old[key] != new[key]:
            patch[key] = new[key]
    return patch


def patch_priority_class(api_client, cs, old, new):
    """patchPriorityClass: a strategic merge patch from old to new. Returns the
    ApiException or None."""
    old_data = api_client.sanitize_for_serialization(old)  # json.Marshal(old)
    new_data = api_client.sanitize_for_serialization(new)
    patch_bytes = two_way_merge_patch(old_data, new_data)
    try:
        # a dict body: the official client sends a strategic merge patch
        cs.patch_priority_class(old.metadata.name, patch_bytes)
    except ApiException as err:
        return err
    return None


def patch_node(api_client, core, old, new):
    """patchNode: a strategic merge patch of nodes/<name>/status from old to new. Returns
    the ApiException or None."""
    old_data = api_client.sanitize_for_serialization(old)
    new_data = api_client.sanitize_for_serialization(new)
    patch_bytes = two_way_merge_patch(old_data, new_data)
    try:
        core.patch_node_status(old.metadata.name, patch_bytes)
    except ApiException as err:
        return err
    return None


def deep_copy(api_client, obj, model_name):
    """obj.DeepCopy()"""
    return to_model(api_client.sanitize_for_serialization(obj), model_name)


# --------------------------------------------------------------------------- describe


class SchedulerPreemption:
    """SIGDescribe("SchedulerPreemption", framework.WithSerial(), ...):
    NewDefaultFramework("sched-preemption"), baseline; its BeforeEach/AfterEach."""

    def __init__(self, new_framework):
        self.f = new_framework("sched-preemption", "baseline")
        self.api_client = self.f.api_client
        self.cs = self.f.core
        self.scheduling = client.SchedulingV1Api(self.api_client)
        self.node_list = client.V1NodeList(items=[])
        base_name = self.f.base_name
        low_priority, medium_priority, high_priority = 1, 100, 1000
        self.priority_pairs = [
            (base_name + "-low-priority", low_priority),
            (base_name + "-medium-priority", medium_priority),
            (base_name + "-high-priority", high_priority),
        ]

    def before_each(self):
        self.ns = self.f.namespace.metadata.name
        self.node_list = client.V1NodeList(items=[])
        for name, value in self.priority_pairs:
            try:
                self.scheduling.create_priority_class(client.V1PriorityClass(
                    metadata=client.V1ObjectMeta(name=name), value=value))
            except ApiException as err:
                if not is_already_exists(err):
                    fail("expected 'alreadyExists' as error, got instead: %s", go_error(err))

        wait_for_total_healthy(self.cs, 60)  # the error is not checked upstream
        node_list, err = get_ready_schedulable_nodes(self.cs)
        if err is not None:
            logf("Unexpected error occurred: %s", err)
        expect_no_error(err)  # framework.ExpectNoErrorWithOffset(0, err)
        self.node_list = node_list
        for n in node_list.items:
            worker_nodes.add(n.metadata.name)

        err = check_testing_ns_deleted_except(self.cs, self.ns)
        expect_no_error(err)

    def after_each(self):
        for name, _ in self.priority_pairs:
            try:
                self.scheduling.delete_priority_class(
                    name, body=client.V1DeleteOptions(grace_period_seconds=0))
            except ApiException:
                pass
        for node in self.node_list.items:
            node_copy = deep_copy(self.api_client, node, "V1Node")
            if node_copy.status is not None:
                (node_copy.status.capacity or {}).pop(TEST_EXTENDED_RESOURCE, None)
                (node_copy.status.allocatable or {}).pop(TEST_EXTENDED_RESOURCE, None)
            err = patch_node(self.api_client, self.cs, node, node_copy)
            if err is not None:
                fail("unexpected error: %s", describe_error(err))


class PriorityClassEndpoints:
    """ginkgo.Context("PriorityClass endpoints"): NewDefaultFramework("sched-preemption-path"),
    privileged; its BeforeEach/AfterEach."""

    def __init__(self, new_framework):
        self.f = new_framework("sched-preemption-path", "privileged")
        self.pcs = []

    def before_each(self):
        self.cs = client.SchedulingV1Api(self.f.api_client)
        # Create 2 PriorityClass: p1, p2.
        for i in (1, 2):
            name, val = "p%d" % i, i
            try:
                pc = self.cs.create_priority_class(client.V1PriorityClass(
                    metadata=client.V1ObjectMeta(name=name, labels={"e2e": TEST_UUID}),
                    value=val))
            except ApiException as err:
                logf("Failed to create priority '%s/%s'. Reason: %s. Msg: %s", name, val,
                     reason_for(err), go_error(err))
                if not is_already_exists(err):
                    fail("expected 'alreadyExists' as error, got instead: %s", go_error(err))
                # client-go's Create returns an empty object with the error
                pc = client.V1PriorityClass(metadata=client.V1ObjectMeta())
            self.pcs.append(pc)

    def after_each(self, failed):
        # Print out additional info if tests failed.
        if failed:
            # List existing PriorityClasses.
            try:
                priority_list = self.cs.list_priority_class()
            except ApiException as err:
                logf("Unable to list PriorityClasses: %s", describe_error(err))
            else:
                logf("List existing PriorityClasses:")
                for p in priority_list.items:
                    logf("%s/%s created at %s", p.metadata.name, p.value,
                         p.metadata.creation_timestamp)

        # Collection deletion on created PriorityClasses.
        try:
            self.cs.delete_collection_priority_class(label_selector="e2e=%s" % TEST_UUID)
        except ApiException as err:
            fail("unexpected error: %s", describe_error(err))


#   Release: v1.20
#   Testname: Scheduler, Verify PriorityClass endpoints
#   Description: Verify that PriorityClass endpoints can be listed. When any mutable field is
#   either patched or updated it MUST succeed. When any immutable field is either patched or
#   updated it MUST fail.
@conformance("[sig-scheduling] SchedulerPreemption [Serial] PriorityClass endpoints verify "
             "PriorityClass endpoints can be operated with different HTTP methods "
             "[Conformance]")
def test_priority_class_endpoints(new_framework):
    outer = SchedulerPreemption(new_framework)
    failed = True
    try:
        outer.before_each()
        ctx = PriorityClassEndpoints(new_framework)
        try:
            ctx.before_each()
            _priority_class_endpoints(outer.api_client, ctx.cs, ctx.pcs)
            failed = False
        finally:
            ctx.after_each(failed)
    finally:
        outer.after_each()


def _priority_class_endpoints(api_client, cs, pcs):
    # 1. Patch/Update on immutable fields will fail.
    pc_copy = deep_copy(api_client, pcs[0], "V1PriorityClass")
    pc_copy.value = pc_copy.value * 10
    err = patch_priority_class(api_client, cs, pcs[0], pc_copy)
    assert err is not None, "expect a patch error on an immutable field"
    logf("%s", go_error(err))

    pc_copy = deep_copy(api_client, pcs[1], "V1PriorityClass")
    pc_copy.value = pc_copy.value * 10
    err = None
    try:
        cs.replace_priority_class(pc_copy.metadata.name, pc_copy)
    except ApiException as e:
        err = e
    assert err is not None, "expect an update error on an immutable field"
    logf("%s", go_error(err))

    # 2. Patch/Update on mutable fields will succeed.
    new_desc = "updated description"
    pc_copy = deep_copy(api_client, pcs[0], "V1PriorityClass")
    pc_copy.description = new_desc
    err = patch_priority_class(api_client, cs, pcs[0], pc_copy)
    if err is not None:
        fail("unexpected error: %s", describe_error(err))

    pc_copy = deep_copy(api_client, pcs[1], "V1PriorityClass")
    pc_copy.description = new_desc
    try:
        cs.replace_priority_class(pc_copy.metadata.name, pc_copy)
    except ApiException as e:
        fail("unexpected error: %s", describe_error(e))

    # 3. List existing PriorityClasses.
    try:
        cs.list_priority_class()
    except ApiException as e:
        fail("unexpected error: %s", describe_error(e))

    # 4. Verify fields of updated PriorityClasses.
    for pc in pcs:
        try:
            live_pc = cs.read_priority_class(pc.metadata.name)
        except ApiException as e:
            fail("unexpected error: %s", describe_error(e))
        assert live_pc.value == pc.value, "Expected\n    %r\nto equal\n    %r" % (
            live_pc.value, pc.value)
        assert (live_pc.description or "") == new_desc, \
            "Expected\n    %r\nto equal\n    %r" % (live_pc.description or "", new_desc)
