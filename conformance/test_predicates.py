"""Port of test/e2e/scheduling/predicates.go (kubernetes/kubernetes, v1.32), the [Conformance]
tests "validates that NodeSelector is respected if not matching", "validates resource limits
of pods that are allowed to run", "validates that NodeSelector is respected if matching" and
"validates that there exists conflict between pods with same hostPort and protocol but one
using 0.0.0.0 hostIP", with the helpers they use from test/e2e/scheduling/framework.go
(WaitForStableCluster), test/e2e/scheduling/events.go (WaitForSchedulerAfterAction's
observeEventAfterAction and scheduleFailureEvent), the SchedulerPredicates
BeforeEach/AfterEach and the node label helpers of test/e2e/framework/node and test/utils
(e2e_deployment.py).

The cluster is the session's (conftest.py): two real worker nodes and one
shepherd-scheduler; the [Serial] tests assume they are alone on the nodes.

Image substitutions: imageutils.GetPauseImageName() is the same reference as upstream's
(registry.k8s.io/pause:3.10, built offline). imageutils.Agnhost (createHostPortPodOnNode's
`netexec --http-port=8080 --udp-port=8080` with a readiness probe on /hostname) becomes
AGNHOST_IMAGE (agnhost-lite) with the same arguments. agnhost-lite has no `netexec` yet: the
container exits at once and restarts (the pod is Running, never ready); the test only checks
whether the pods leave Pending, i.e. where (and whether) they are scheduled.

Timing: "validates that there exists conflict ... 0.0.0.0 hostIP" waits, as upstream, the
whole PodStartTimeout (5 min) for pod5 to leave Pending (createHostPortPodOnNode with
expectScheduled=false ignores the result), so it needs SHEPHERD_CONFORMANCE_TEST_TIMEOUT
above ~330 s (conftest.py's default per-test limit is 150 s).
"""

import decimal
import math
import random
import threading
import time

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_deployment import (add_or_update_label_on_node, expect_node_has_label,
                            remove_label_off_node)
from e2e_framework import (AGNHOST_IMAGE, Watcher, WatchClosed, all_nodes_ready, by,
                           check_testing_ns_deleted_except, conformance, describe_error,
                           expect_no_error, fail, get_ready_schedulable_nodes, logf, new_uuid,
                           wait_for_pod_not_pending, wait_for_pod_running,
                           wait_timeout_for_pod_running)

# imageutils.GetPauseImageName() in v1.32 (test/utils/image/manifest.go: GcRegistry
# "registry.k8s.io", "pause", "3.10"). Kept as upstream names it: nothing pulls it here.
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"

# e2epod.DefaultNonRootUser
DEFAULT_NON_ROOT_USER = 1000

POD_START_SHORT_TIMEOUT = 2 * 60  # f.Timeouts.PodStartShort

# test/e2e/scheduling/framework.go
STABLE_CLUSTER_TIMEOUT = 10 * 60  # timeout
STABLE_CLUSTER_WAIT = 2.0         # waitTime

# variable populated in BeforeEach, never modified afterwards (a package-level
# sets.Set[string] upstream, so it accumulates over the suite like this module global)
worker_nodes = set()


# --------------------------------------------------------------------------- framework.go


def pod_terminated(p):
    return p.status is not None and p.status.phase in ("Succeeded", "Failed")


def get_pods_scheduled(worker_nodes_set, pods):
    """GetPodsScheduled: scheduled and not scheduled pods on worker nodes."""
    scheduled_pods, not_scheduled_pods = [], []
    for pod in pods.items:
        node_name = pod.spec.node_name if pod.spec is not None else None
        if node_name and node_name in worker_nodes_set:
            conds = (pod.status.conditions if pod.status is not None else None) or []
            scheduled_condition = next((c for c in conds if c.type == "PodScheduled"), None)
            if scheduled_condition is None:
                fail("Did not find 'scheduled' condition for pod %s/%s", pod.metadata.namespace,
                     pod.metadata.name)
            if scheduled_condition.status != "True":
                fail("PodStatus isn't 'true' for pod %s/%s", pod.metadata.namespace,
                     pod.metadata.name)
            scheduled_pods.append(pod)
        elif not node_name:
            not_scheduled_pods.append(pod)
    return scheduled_pods, not_scheduled_pods


def get_scheduled_and_unscheduled_pods(core, worker_nodes_set):
    """getScheduledAndUnscheduledPods: all namespaces, succeeded and failed pods filtered out."""
    pods = expect_no_error(core.list_pod_for_all_namespaces,
                           explain='listing all pods in namespace "" while waiting for stable '
                                   'cluster')
    pods.items = [p for p in pods.items if not pod_terminated(p)]
    return get_pods_scheduled(worker_nodes_set, pods)


def wait_for_stable_cluster(core, worker_nodes_set):
    """WaitForStableCluster: waits until all existing pods are scheduled; returns their number."""
    start = time.monotonic()
    all_scheduled, all_not_scheduled = get_scheduled_and_unscheduled_pods(core, worker_nodes_set)
    while all_not_scheduled:
        time.sleep(STABLE_CLUSTER_WAIT)
        if time.monotonic() - start > STABLE_CLUSTER_TIMEOUT:
            logf("Timed out waiting for the following pods to schedule")
            for p in all_not_scheduled:
                logf("%s/%s", p.metadata.namespace, p.metadata.name)
            fail("Timed out after %ss waiting for stable cluster.", STABLE_CLUSTER_TIMEOUT)
        all_scheduled, all_not_scheduled = get_scheduled_and_unscheduled_pods(core,
                                                                              worker_nodes_set)
    return len(all_scheduled)


# --------------------------------------------------------------------------- events.go


def schedule_failure_event(pod_name):
    """scheduleFailureEvent"""

    def predicate(e):
        return ((e.metadata.name or "").startswith(pod_name) and
                e.type == "Warning" and
                e.reason == "FailedScheduling")

    return predicate


class _EventInformer:
    """cache.NewInformerWithOptions over core/v1 events of one namespace, with only an
    AddFunc (the reflector's list, then watch from the list's resourceVersion).

    As in the shared informer's processDeltas, an object the store does not hold yet is
    delivered to AddFunc (ADDED, or MODIFIED for an unknown object); one it holds is an
    update, which has no handler here."""

    PAGE_SIZE = 500  # pager.New's default page size, kept by the reflector for RV "0"

    def __init__(self, core, ns, on_add):
        self.core = core
        self.ns = ns
        self.on_add = on_add
        self.store = set()
        self.watcher = None
        self.error = None
        self._stop = threading.Event()
        self.started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def run(self):
        self._thread.start()

    def _key(self, obj):
        return "%s/%s" % (obj.metadata.namespace, obj.metadata.name)

    def _deliver(self, obj):
        key = self._key(obj)
        if key in self.store:
            return  # OnUpdate: no UpdateFunc registered
        self.store.add(key)
        self.on_add(obj)

    def _run(self):
        try:
            # reflector.list: ResourceVersion "0" through a pager (limit 500, continue)
            opts = {"resource_version": "0", "limit": self.PAGE_SIZE}
            rv = None
            while True:
                lst = self.core.list_namespaced_event(self.ns, **opts)
                rv = lst.metadata.resource_version
                for item in lst.items:
                    self._deliver(item)
                cont = lst.metadata._continue
                if not cont:
                    break
                opts = {"limit": self.PAGE_SIZE, "_continue": cont}
            if self._stop.is_set():
                return
            # reflector.watch: from the list's resourceVersion, with bookmarks and a
            # timeout of minWatchTimeout (5 min) * (1 + rand); re-watched from the last
            # resourceVersion when the server ends it.
            self.watcher = Watcher(self.core.list_namespaced_event, self.ns, retry=True,
                                   resource_version=rv, allow_watch_bookmarks=True,
                                   timeout_seconds=int(300 * (1 + random.random())))
            self.watcher.started.wait()
            self.started.set()  # WatchFunc: defer informerStartedGuard.Do(close(...))
            while not self._stop.is_set():
                try:
                    event = self.watcher.next(0.2)
                except WatchClosed as err:
                    self.error = str(err)
                    return
                if event is None:
                    continue
                obj = event["object"]
                if event["type"] in ("ADDED", "MODIFIED"):
                    self._deliver(obj)
                elif event["type"] == "DELETED":
                    self.store.discard(self._key(obj))
        except ApiException as err:
            self.error = describe_error(err)
        finally:
            self.started.set()

    def stop(self):
        self._stop.set()
        if self.watcher is not None:
            self.watcher.stop()


def observe_event_after_action(core, ns, event_predicate, action):
    """observeEventAfterAction: (observed, error message or None)."""
    observed = {"matching": False}

    def add_func(e):
        by("Considering event: \nType = [%s], Name = [%s], Reason = [%s], Message = [%s]"
           % (e.type, e.metadata.name, e.reason, e.message))
        if event_predicate(e):
            observed["matching"] = True

    informer = _EventInformer(core, ns, add_func)
    informer.run()
    try:
        # Start the informer and block this goroutine waiting for the started signal.
        informer.started.wait()
        if informer.error is not None and informer.watcher is None:
            # client-go's reflector would retry the failed list with back-off; report it
            fail("listing events in %s for the event informer failed: %s", ns, informer.error)

        # Invoke the action function.
        err = action()
        if err is not None:
            return False, err

        # Poll whether the informer has found a matching event with a timeout.
        # Wait up 2 minutes polling every second.
        timeout, interval = 120.0, 1.0
        deadline = time.monotonic() + timeout
        while True:  # wait.PollUntilContextTimeout(ctx, interval, timeout, false, ...)
            time.sleep(interval)
            if observed["matching"]:
                return True, None
            if time.monotonic() + interval > deadline:
                # PollUntilContextTimeout's error is the context's
                return False, "context deadline exceeded" + (
                    " (event informer: %s)" % informer.error if informer.error else "")
    finally:
        informer.stop()


# --------------------------------------------------------------------------- predicates.go


def init_pause_pod(conf):
    """initPausePod"""
    grace_period = 1
    labels = {}
    labels.update(conf.get("labels") or {})
    annotations = {}
    annotations.update(conf.get("annotations") or {})
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(
            name=conf.get("name", ""),
            namespace=conf.get("namespace", ""),
            # map fields are `json:",omitempty"`: an empty map is not written
            labels=labels or None,
            annotations=annotations or None,
            owner_references=conf.get("owner_references"),
            finalizers=conf.get("finalizers")),
        spec=client.V1PodSpec(
            security_context=client.V1PodSecurityContext(  # e2epod.GetRestrictedPodSecurityContext
                run_as_non_root=True,
                run_as_user=DEFAULT_NON_ROOT_USER,
                seccomp_profile=client.V1SeccompProfile(type="RuntimeDefault")),
            node_selector=conf.get("node_selector"),
            affinity=conf.get("affinity"),
            topology_spread_constraints=conf.get("topology_spread_constraints"),
            runtime_class_name=conf.get("runtime_class_handler"),
            containers=[client.V1Container(
                name=conf.get("name", ""),
                image=PAUSE_IMAGE,
                ports=conf.get("ports"),
                # e2epod.GetRestrictedContainerSecurityContext
                security_context=client.V1SecurityContext(
                    allow_privilege_escalation=False,
                    capabilities=client.V1Capabilities(drop=["ALL"])),
                # Container.Resources is a struct: encoding/json writes "resources": {}
                resources=conf.get("resources") or client.V1ResourceRequirements())],
            tolerations=conf.get("tolerations"),
            priority_class_name=conf.get("priority_class_name"),
            termination_grace_period_seconds=grace_period))
    # (SchedulingGates: conf.SchedulingGates is left out, this client's V1PodSpec predates the
    # field and no ported test sets it)
    if conf.get("deletion_grace_period_seconds") is not None:
        pod.metadata.deletion_grace_period_seconds = conf["deletion_grace_period_seconds"]
    return pod


def create_pause_pod_action(f, conf):
    """createPausePodAction: a closure that creates a pause pod; returns the error or None."""

    def action():
        try:
            f.core.create_namespaced_pod(f.namespace.metadata.name, init_pause_pod(conf))
        except ApiException as err:
            return describe_error(err)
        return None

    return action


def wait_for_scheduler_after_action(f, action, ns, pod_name, expect_success):
    """WaitForSchedulerAfterAction (only the failure predicate is needed here)."""
    assert not expect_success, "scheduleSuccessEvent is not ported"
    predicate = schedule_failure_event(pod_name)
    observed, err = observe_event_after_action(f.core, f.namespace.metadata.name, predicate,
                                               action)
    if err is not None:
        fail("unexpected error: %s", err)  # framework.ExpectNoError(err)
    if not expect_success and not observed:
        fail("Did not observe failed event after performing the supplied action for pod %s",
             pod_name)


def verify_result(core, expected_scheduled, expected_not_scheduled, ns):
    """verifyResult"""
    all_pods = expect_no_error(core.list_namespaced_pod, ns)
    scheduled_pods, not_scheduled_pods = get_pods_scheduled(worker_nodes, all_pods)
    if len(not_scheduled_pods) != expected_not_scheduled:
        fail("Not scheduled Pods: %s\nExpected <[]v1.Pod | len:%d> to have length %d",
             [p.to_dict() for p in not_scheduled_pods], len(not_scheduled_pods),
             expected_not_scheduled)
    if len(scheduled_pods) != expected_scheduled:
        fail("Scheduled Pods: %s\nExpected <[]v1.Pod | len:%d> to have length %d",
             [p.to_dict() for p in scheduled_pods], len(scheduled_pods), expected_scheduled)


def print_all_pods_on_node(core, node_name):
    """printAllPodsOnNode"""
    try:
        pod_list = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=" + node_name)
    except ApiException as err:
        logf("Unable to retrieve pods for node %s: %s", node_name, describe_error(err))
        return
    for p in pod_list.items:
        statuses = (p.status.container_statuses if p.status is not None else None) or []
        logf("%s from %s started at %s (%d container statuses recorded)", p.metadata.name,
             p.metadata.namespace, p.status.start_time if p.status is not None else None,
             len(statuses))
        for c in statuses:
            logf("\tContainer %s ready: %s, restart count %s", c.name, c.ready, c.restart_count)


class SchedulerPredicates:
    """SIGDescribe("SchedulerPredicates", framework.WithSerial(), ...): BeforeEach/AfterEach."""

    def __init__(self, new_framework):
        self.f = new_framework("sched-pred", "privileged")
        self.cs = self.f.core
        self.ns = self.f.namespace.metadata.name
        self.rc_name = ""

    def before_each(self):
        cs = self.cs
        # e2enode.AllNodesReady(ctx, cs, time.Minute): the error is not checked upstream
        all_nodes_ready(cs, 60)

        node_list, err = get_ready_schedulable_nodes(cs)
        if err is not None:
            logf("Unexpected error occurred: %s", err)
            fail("unexpected error: %s", err)  # framework.ExpectNoErrorWithOffset(0, err)
        self.node_list = node_list
        for n in node_list.items:
            worker_nodes.add(n.metadata.name)

        err = check_testing_ns_deleted_except(cs, self.ns)
        if err is not None:
            fail("unexpected error: %s", err)

        for node in node_list.items:
            logf("\nLogging pods the apiserver thinks is on node %s before test",
                 node.metadata.name)
            print_all_pods_on_node(cs, node.metadata.name)

    def after_each(self):
        # rc, err := cs.CoreV1().ReplicationControllers(ns).Get(ctx, RCName, ...): RCName is
        # never set by this test, and client-go's Get with an empty name fails in the client
        # ("resource name may not be empty") without a request, so err != nil: nothing to do.
        if not self.rc_name:
            return
        try:
            rc = self.cs.read_namespaced_replication_controller(self.rc_name, self.ns)
        except ApiException:
            return
        if rc.spec.replicas != 0:
            fail("Cleaning up the replication controller is not ported (RC %s)", self.rc_name)


def create_pause_pod(f, conf):
    """createPausePod"""
    namespace = conf.get("namespace") or f.namespace.metadata.name
    return expect_no_error(f.core.create_namespaced_pod, namespace, init_pause_pod(conf))


def run_pause_pod(f, conf):
    """runPausePod"""
    pod = create_pause_pod(f, conf)
    err = wait_timeout_for_pod_running(f.core, pod.metadata.name, pod.metadata.namespace,
                                       POD_START_SHORT_TIMEOUT)
    if err is not None:
        fail("unexpected error: %s", err)
    return expect_no_error(f.core.read_namespaced_pod, conf.get("name", ""),
                           pod.metadata.namespace)


def run_pod_and_get_node_name(f, conf):
    """runPodAndGetNodeName"""
    # launch a pod to find a node which can launch a pod. We intentionally do
    # not just take the node list and choose the first of them. Depending on the
    # cluster and the scheduler it might be that a "normal" pod cannot be
    # scheduled onto it.
    pod = run_pause_pod(f, conf)

    by("Explicitly delete pod here to free the resource it takes.")
    expect_no_error(f.core.delete_namespaced_pod, pod.metadata.name, f.namespace.metadata.name,
                    body=client.V1DeleteOptions(grace_period_seconds=0))  # NewDeleteOptions(0)

    return pod.spec.node_name


def get_node_that_can_run_pod(f):
    """GetNodeThatCanRunPod: trying to launch a pod without a label to get a node which can
    launch it"""
    by("Trying to launch a pod without a label to get a node which can launch it.")
    return run_pod_and_get_node_name(f, {"name": "without-label"})


def _milli_value(quantity):
    """resource.Quantity.MilliValue() (rounded up)"""
    if quantity is None:
        return 0
    from kubernetes.utils import parse_quantity
    return int(math.ceil(parse_quantity(quantity) * decimal.Decimal(1000)))


def new_milli_quantity(milli):
    """resource.NewMilliQuantity(milli, DecimalSI) as it is written."""
    if milli % 1000 == 0:
        return str(milli // 1000)
    return "%dm" % milli


def get_requested_cpu(pod):
    """getRequestedCPU"""
    result = 0
    for container in pod.spec.containers:
        requests = (container.resources.requests if container.resources else None) or {}
        result += _milli_value(requests.get("cpu"))
    return result


def create_host_port_pod_on_node(f, pod_name, ns, host_ip, port, protocol, node_selector,
                                 expect_scheduled):
    """createHostPortPodOnNode: a pod using hostport on the specified node according to the
    nodeSelector; it starts an http server on the exposed port."""
    host_port_pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name=pod_name),
        spec=client.V1PodSpec(
            containers=[client.V1Container(
                name="agnhost",
                image=AGNHOST_IMAGE,  # imageutils.GetE2EImage(imageutils.Agnhost)
                args=["netexec", "--http-port=8080", "--udp-port=8080"],
                ports=[client.V1ContainerPort(host_port=port, container_port=8080,
                                              protocol=protocol, host_ip=host_ip or None)],
                readiness_probe=client.V1Probe(
                    http_get=client.V1HTTPGetAction(path="/hostname", port=8080,
                                                    scheme="HTTP")))],
            node_selector=node_selector))
    expect_no_error(f.core.create_namespaced_pod, ns, host_port_pod)

    err = wait_for_pod_not_pending(f.core, ns, pod_name)
    if expect_scheduled and err is not None:
        fail("unexpected error: %s", err)


def get_node_host_ip(f, node_name):
    """getNodeHostIP: the first internal IP on the node matching the main Cluster IP family
    (IPv4 here)"""
    node = expect_no_error(f.core.read_node, node_name)
    # e2enode.GetAddressesByTypeAndFamily(node, v1.NodeInternalIP, v1.IPv4Protocol)
    ips = [a.address for a in ((node.status.addresses if node.status else None) or [])
           if a.type == "InternalIP" and ":" not in a.address]
    if not ips:
        fail("Expected\n    %s\nnot to be empty", ips)
    return ips[0]


# Test Nodes does not have any label, hence it should be impossible to schedule Pod with
# nonempty Selector set.
#   Release: v1.9
#   Testname: Scheduler, node selector not matching
#   Description: Create a Pod with a NodeSelector set to a value that does not match a node in
#   the cluster. Since there are no nodes matching the criteria the Pod MUST not be scheduled.
@conformance("[sig-scheduling] SchedulerPredicates [Serial] validates that NodeSelector is "
             "respected if not matching [Conformance]")
def test_node_selector_not_matching(new_framework):
    d = SchedulerPredicates(new_framework)
    d.before_each()
    try:
        cs, ns = d.cs, d.ns
        by("Trying to schedule Pod with nonempty NodeSelector.")
        pod_name = "restricted-pod"

        wait_for_stable_cluster(cs, worker_nodes)

        conf = {
            "name": pod_name,
            "labels": {"name": "restricted"},
            "node_selector": {
                "label": "nonempty",
            },
        }

        wait_for_scheduler_after_action(d.f, create_pause_pod_action(d.f, conf), ns, pod_name,
                                        False)
        verify_result(cs, 0, 1, ns)
    finally:
        d.after_each()


# This test verifies we don't allow scheduling of pods in a way that sum of
# resource requests of pods is greater than machines capacity.
# It assumes that cluster add-on pods stay stable and cannot be run in parallel
# with any other test that touches Nodes or Pods.
# It is so because we need to have precise control on what's running in the cluster.
# Test scenario:
# 1. Find the amount CPU resources on each node.
# 2. Create one pod with affinity to each node that uses 70% of the node CPU.
# 3. Wait for the pods to be scheduled.
# 4. Create another pod with no affinity to any node that need 50% of the largest node CPU.
# 5. Make sure this additional pod is not scheduled.
#   Release: v1.9
#   Testname: Scheduler, resource limits
#   Description: Scheduling Pods MUST fail if the resource requests exceed Machine capacity.
@conformance("[sig-scheduling] SchedulerPredicates [Serial] validates resource limits of pods "
             "that are allowed to run [Conformance]")
def test_resource_limits(new_framework):
    d = SchedulerPredicates(new_framework)
    d.before_each()
    try:
        cs, ns, f = d.cs, d.ns, d.f
        wait_for_stable_cluster(cs, worker_nodes)
        node_max_allocatable = 0
        node_to_allocatable_map = {}
        try:
            for node in d.node_list.items:
                node_ready = False
                for condition in (node.status.conditions if node.status else None) or []:
                    if condition.type == "Ready" and condition.status == "True":
                        node_ready = True
                        break
                if not node_ready:
                    continue
                # Apply node label to each node
                add_or_update_label_on_node(cs, node.metadata.name, "node", node.metadata.name)
                expect_node_has_label(cs, node.metadata.name, "node", node.metadata.name)
                # Find allocatable amount of CPU.
                allocatable = ((node.status.allocatable if node.status else None) or {}).get("cpu")
                if allocatable is None:
                    fail("node.Status.Allocatable %s does not contain entry %s",
                         node.status.allocatable, "cpu")
                node_to_allocatable_map[node.metadata.name] = _milli_value(allocatable)
                if node_max_allocatable < _milli_value(allocatable):
                    node_max_allocatable = _milli_value(allocatable)

            pods = expect_no_error(cs.list_pod_for_all_namespaces)
            for pod in pods.items:
                found = pod.spec.node_name in node_to_allocatable_map
                phase = pod.status.phase if pod.status else None
                if found and phase != "Succeeded" and phase != "Failed":
                    logf("Pod %s requesting resource cpu=%dm on Node %s", pod.metadata.name,
                         get_requested_cpu(pod), pod.spec.node_name)
                    node_to_allocatable_map[pod.spec.node_name] -= get_requested_cpu(pod)

            by("Starting Pods to consume most of the cluster CPU.")
            # Create one pod per node that requires 70% of the node remaining CPU.
            filler_pods = []
            for node_name, cpu in node_to_allocatable_map.items():
                requested_cpu = cpu * 7 // 10
                logf("Creating a pod which consumes cpu=%dm on Node %s", requested_cpu,
                     node_name)
                filler_pods.append(create_pause_pod(f, {
                    "name": "filler-pod-" + new_uuid(),
                    "resources": client.V1ResourceRequirements(
                        limits={"cpu": new_milli_quantity(requested_cpu)},
                        requests={"cpu": new_milli_quantity(requested_cpu)}),
                    "affinity": client.V1Affinity(node_affinity=client.V1NodeAffinity(
                        required_during_scheduling_ignored_during_execution=client.V1NodeSelector(
                            node_selector_terms=[client.V1NodeSelectorTerm(match_expressions=[
                                client.V1NodeSelectorRequirement(key="node", operator="In",
                                                                 values=[node_name])])]))),
                }))
            # Wait for filler pods to schedule.
            for pod in filler_pods:
                err = wait_for_pod_running(cs, pod)
                if err is not None:
                    fail("unexpected error: %s", err)
            by("Creating another pod that requires unavailable amount of CPU.")
            # Create another pod that requires 50% of the largest node CPU resources.
            # This pod should remain pending as at least 70% of CPU of other nodes in
            # the cluster are already consumed.
            pod_name = "additional-pod"
            conf = {
                "name": pod_name,
                "labels": {"name": "additional"},
                "resources": client.V1ResourceRequirements(
                    limits={"cpu": new_milli_quantity(node_max_allocatable * 5 // 10)},
                    requests={"cpu": new_milli_quantity(node_max_allocatable * 5 // 10)}),
            }
            wait_for_scheduler_after_action(f, create_pause_pod_action(f, conf), ns, pod_name,
                                            False)
            verify_result(cs, len(filler_pods), 1, ns)
        finally:
            # Clean up added labels after this test.
            for node_name in node_to_allocatable_map:
                remove_label_off_node(cs, node_name, "node")
    finally:
        d.after_each()


#   Release: v1.9
#   Testname: Scheduler, node selector matching
#   Description: Create a label on the node {k: v}. Then create a Pod with a NodeSelector set
#   to {k: v}. Check to see if the Pod is scheduled. When the NodeSelector matches then Pod
#   MUST be scheduled on that node.
@conformance("[sig-scheduling] SchedulerPredicates [Serial] validates that NodeSelector is "
             "respected if matching [Conformance]")
def test_node_selector_matching(new_framework):
    d = SchedulerPredicates(new_framework)
    d.before_each()
    try:
        cs, ns, f = d.cs, d.ns, d.f
        node_name = get_node_that_can_run_pod(f)

        by("Trying to apply a random label on the found node.")
        k = "kubernetes.io/e2e-%s" % new_uuid()
        v = "42"
        add_or_update_label_on_node(cs, node_name, k, v)
        try:
            expect_node_has_label(cs, node_name, k, v)

            by("Trying to relaunch the pod, now with labels.")
            label_pod_name = "with-labels"
            create_pause_pod(f, {"name": label_pod_name, "node_selector": {k: v}})

            # check that pod got scheduled. We intentionally DO NOT check that the
            # pod is running because this will create a race condition with the
            # kubelet and the scheduler: the scheduler might have scheduled a pod
            # already when the kubelet does not know about its new label yet. The
            # kubelet will then refuse to launch the pod.
            err = wait_for_pod_not_pending(cs, ns, label_pod_name)
            if err is not None:
                fail("unexpected error: %s", err)
            label_pod = expect_no_error(cs.read_namespaced_pod, label_pod_name, ns)
            if label_pod.spec.node_name != node_name:
                fail("Expected\n    <string>: %r\nto equal\n    <string>: %r",
                     label_pod.spec.node_name, node_name)
        finally:
            remove_label_off_node(cs, node_name, k)
    finally:
        d.after_each()


#   Release: v1.16
#   Testname: Scheduling, HostPort and Protocol match, HostIPs different but one is default
#   HostIP (0.0.0.0)
#   Description: Pods with the same HostPort and Protocol, but different HostIPs, MUST NOT
#   schedule to the same node if one of those IPs is the default HostIP of 0.0.0.0, which
#   represents all IPs on the host.
@conformance("[sig-scheduling] SchedulerPredicates [Serial] validates that there exists "
             "conflict between pods with same hostPort and protocol but one using 0.0.0.0 "
             "hostIP [Conformance]")
@pytest.mark.test_timeout(420)  # upstream waits 5 minutes for pod5 to stay unschedulable
def test_host_port_conflict_with_default_host_ip(new_framework):
    d = SchedulerPredicates(new_framework)
    d.before_each()
    try:
        cs, ns, f = d.cs, d.ns, d.f
        node_name = get_node_that_can_run_pod(f)
        host_ip = get_node_host_ip(f, node_name)
        # use nodeSelector to make sure the testing pods get assigned on the same node to
        # explicitly verify there exists conflict or not
        by("Trying to apply a random label on the found node.")
        k = "kubernetes.io/e2e-%s" % new_uuid()
        v = "95"

        node_selector = {k: v}

        add_or_update_label_on_node(cs, node_name, k, v)
        try:
            expect_node_has_label(cs, node_name, k, v)

            port = 54322
            by("Trying to create a pod(pod4) with hostport %d and hostIP 0.0.0.0(empty string "
               "here) and expect scheduled" % port)
            create_host_port_pod_on_node(f, "pod4", ns, "", port, "TCP", node_selector, True)

            by("Trying to create another pod(pod5) with hostport %d but hostIP %s on the node "
               "which pod4 resides and expect not scheduled" % (port, host_ip))
            create_host_port_pod_on_node(f, "pod5", ns, host_ip, port, "TCP", node_selector,
                                         False)
        finally:
            remove_label_off_node(cs, node_name, k)
    finally:
        d.after_each()
