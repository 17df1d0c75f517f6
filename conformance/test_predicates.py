"""Port of test/e2e/scheduling/predicates.go (kubernetes/kubernetes), the [Conformance] test
"validates that NodeSelector is respected if not matching", with the helpers it uses from
test/e2e/scheduling/framework.go (WaitForStableCluster), test/e2e/scheduling/events.go
(WaitForSchedulerAfterAction's observeEventAfterAction and scheduleFailureEvent) and the
SchedulerPredicates BeforeEach/AfterEach.

The cluster is the session's (conftest.py): two fake worker nodes registered through the
API and one shepherd-scheduler. Nothing runs the pause pod; it is only scheduled (or not).
"""

import random
import threading
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (Watcher, WatchClosed, all_nodes_ready, by,
                           check_testing_ns_deleted_except, conformance, describe_error,
                           expect_no_error, fail, get_ready_schedulable_nodes, logf)

# imageutils.GetPauseImageName() in v1.32 (test/utils/image/manifest.go: GcRegistry
# "registry.k8s.io", "pause", "3.10"). Kept as upstream names it: nothing pulls it here.
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"

# e2epod.DefaultNonRootUser
DEFAULT_NON_ROOT_USER = 1000

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
