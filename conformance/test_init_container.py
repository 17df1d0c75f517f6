"""Port of the InitContainer [Conformance] test of test/e2e/common/node/init_container.go
(kubernetes/kubernetes) "should invoke init containers on a RestartNever pod".

The pod really runs on one of the session's nodes (conftest.py). Image substitution:
imageutils.BusyBox becomes BUSYBOX_IMAGE (the local busybox image).

Upstream records the watch events with recordEvents(events, ...), which appends to a copy of
the (nil) slice, and ignores checkInvariants' result: the invariants are never enforced (as
written, `initialized` would also flag every init container that is no longer waiting, and
the first event of a pod that is not yet initialized). The port records the events for real
and only logs what checkInvariants reports, without failing.
"""

import time

from kubernetes import client

from e2e_framework import (BUSYBOX_IMAGE, POD_START_TIMEOUT, PodClient, by, conformance, fail,
                           get_pod_condition, logf, new_uuid, watch_until)


def initialized(pod):
    """initialized: (all init containers done, one failed, error text or None)."""
    all_init = True
    init_failed = False
    for s in (pod.status.init_container_statuses or []):
        state = s.state or client.V1ContainerState()
        if init_failed and state.waiting is None:
            return all_init, init_failed, ("container %s is after a failed container but "
                                           "isn't waiting" % s.name)
        if all_init and state.waiting is None:
            return all_init, init_failed, ("container %s is after an initializing container "
                                           "but isn't waiting" % s.name)
        if state.terminated is None:
            all_init = False
        elif state.terminated.exit_code != 0:
            all_init = False
            init_failed = True
        elif not s.ready:
            return all_init, init_failed, ("container %s initialized but isn't marked as ready"
                                           % s.name)
    return all_init, init_failed, None


def init_containers_invariants(pod):
    """initContainersInvariants: None or the violated invariant."""
    all_init, init_failed, err = initialized(pod)
    if err is not None:
        return err
    if not all_init or init_failed:
        for s in (pod.status.container_statuses or []):
            waiting = s.state.waiting if s.state else None
            if waiting is None or s.restart_count != 0:
                return "container %s is not waiting but initialization not complete" % s.name
            if waiting.reason != "PodInitializing":
                return "container %s should have reason PodInitializing: %s" % (s.name,
                                                                                  waiting.reason)
    c = get_pod_condition(pod, "Initialized")
    if c is None:
        return "pod does not have initialized condition"
    if c.last_transition_time is None:
        return "PodInitialized condition should always have a transition time"
    if c.status == "Unknown":
        return "PodInitialized condition should never be Unknown"
    if c.status == "True" and (init_failed or not all_init):
        return "PodInitialized condition was True but all not all containers initialized"
    if c.status == "False" and (not init_failed and all_init):
        return "PodInitialized condition was False but all containers initialized"
    return None


def container_init_invariant(older, newer):
    """containerInitInvariant"""
    if not older.spec.init_containers:
        return None
    if len(older.spec.init_containers) != len(newer.spec.init_containers or []):
        return "init container list changed"
    if older.metadata.uid != newer.metadata.uid:
        return "two different pods exist in the condition: %s vs %s" % (older.metadata.uid,
                                                                          newer.metadata.uid)
    for p in (older, newer):
        err = init_containers_invariants(p)
        if err is not None:
            return err
    old_init, _, _ = initialized(older)
    new_init, _, _ = initialized(newer)
    if old_init and not new_init:
        return "pod cannot be initialized and then regress to not being initialized"
    return None


def check_invariants(events, *fns):
    """checkInvariants: None or the invariants violated between successive events."""
    errs = set()
    for i in range(len(events) - 1):
        for fn in fns:
            err = fn(events[i]["object"], events[i + 1]["object"])
            if err is not None:
                errs.add(err)
    if errs:
        return "invariants violated:\n* " + "\n* ".join(sorted(errs))
    return None


def pod_completed(event):
    """conditions.PodCompleted: a DELETED event is a NotFound error."""
    if event["type"] == "DELETED":
        return False, 'pods "" not found'
    pod = event.get("object")
    if isinstance(pod, client.V1Pod) and pod.status is not None and \
            pod.status.phase in ("Failed", "Succeeded"):
        return True, None
    return False, None


def record_events(events, fn):
    """recordEvents"""

    def record(event):
        events.append(event)
        return fn(event)

    return record


# Release: v1.12
# Testname: init-container-starts-app-restartnever-pod
# Description: Ensure that all InitContainers are started and all containers in pod are
# voluntarily terminated with exit status 0, and the system is not going to restart any of
# these containers when Pod has restart policy as RestartNever.
@conformance("[sig-node] InitContainer [NodeConformance] should invoke init containers on a "
             "RestartNever pod [Conformance]")
def test_init_container_restart_never(new_framework):
    # SIGDescribe("InitContainer"): NewDefaultFramework("init-container"), baseline
    f = new_framework("init-container", "baseline")
    pod_client = PodClient(f)
    ns = f.namespace.metadata.name

    by("creating the pod")
    name = "pod-init-" + new_uuid()
    value = str(time.time_ns() % 1_000_000_000)  # strconv.Itoa(time.Now().Nanosecond())
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"name": "foo", "time": value}),
        spec=client.V1PodSpec(
            restart_policy="Never",
            init_containers=[
                client.V1Container(name="init1", image=BUSYBOX_IMAGE, command=["/bin/true"]),
                client.V1Container(name="init2", image=BUSYBOX_IMAGE, command=["/bin/true"]),
            ],
            containers=[
                client.V1Container(name="run1", image=BUSYBOX_IMAGE, command=["/bin/true"]),
            ]))
    logf("PodSpec: initContainers in spec.initContainers")
    started_pod = pod_client.create(pod)

    # watchtools.Until(ctx with PodStartTimeout, startedPod.ResourceVersion, ListWatch with
    # fieldSelector metadata.name=<pod>, recordEvents(events, conditions.PodCompleted))
    events = []
    event, err = watch_until(POD_START_TIMEOUT, started_pod.metadata.resource_version,
                             f.core.list_namespaced_pod, ns,
                             conditions=[record_events(events, pod_completed)],
                             field_selector="metadata.name=" + started_pod.metadata.name)
    if err is not None:
        fail("unexpected error: %s", err)

    violations = check_invariants(events, container_init_invariant)
    if violations is not None:
        logf("(not enforced upstream) %s", violations)
    end_pod = event["object"]
    assert end_pod.status.phase == "Succeeded", "Expected\n%r\nto equal\n%r" % (
        end_pod.status.phase, "Succeeded")
    init = get_pod_condition(end_pod, "Initialized")
    assert init is not None, "Expected the pod to have an Initialized condition"
    assert init.status == "True", "Expected\n%r\nto equal\n%r" % (init.status, "True")

    init_statuses = end_pod.status.init_container_statuses or []
    assert len(init_statuses) == 2, "Expected\n%d\nto equal\n2" % len(init_statuses)
    for status in init_statuses:
        if not status.ready:
            fail("init container %s should be in Ready status", status.name)
        assert status.state.terminated is not None, \
            "Expected init container %s to be terminated: %s" % (status.name, status.state)
        assert status.state.terminated.exit_code == 0, \
            "Expected\n%r\nto be zero-valued" % status.state.terminated.exit_code

