"""Ports of the Probing container [Conformance] tests of
test/e2e/common/node/container_probe.go (kubernetes/kubernetes): "should be restarted with a
exec "cat /tmp/health" liveness probe" and "with readiness probe that fails should never be
ready and never restart".

Pods really run on the session's nodes (conftest.py). Image substitutions: imageutils.BusyBox
becomes BUSYBOX_IMAGE (the local busybox image); agnhost's `test-webserver` (an HTTP file
server for / on port 80) runs in AGNHOST_IMAGE (agnhost-lite, where it is busybox httpd).
"""

import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (AGNHOST_IMAGE, BUSYBOX_IMAGE, PodClient, by, conformance,
                           container_statuses, describe_error, fail, get_existing_container_status,
                           is_not_found, is_pod_ready, logf, new_uuid, pod_running_ready,
                           wait_for_pod_condition)

PROBE_TEST_INITIAL_DELAY_SECONDS = 15  # probeTestInitialDelaySeconds
DEFAULT_OBSERVATION_TIMEOUT = 4 * 60   # defaultObservationTimeout


def probe_framework(new_framework):
    """SIGDescribe("Probing container"): NewDefaultFramework("container-probe"), baseline;
    podClient = e2epod.NewPodClient(f)."""
    f = new_framework("container-probe", "baseline")
    return f, PodClient(f)


def exec_handler(cmd):
    """execHandler (the v1.ProbeHandler's fields)"""
    return {"_exec": client.V1ExecAction(command=cmd)}


def http_get_handler(path, port):
    """httpGetHandler"""
    return {"http_get": client.V1HTTPGetAction(path=path, port=port)}


class WebserverProbeBuilder:
    """webserverProbeBuilder"""

    def __init__(self, failing=False, initial_delay=False):
        self.failing = failing
        self.initial_delay = initial_delay

    def with_failing(self):
        return WebserverProbeBuilder(True, self.initial_delay)

    def with_initial_delay(self):
        return WebserverProbeBuilder(self.failing, True)

    def build(self):
        probe = client.V1Probe(**http_get_handler("/", 80))
        if self.initial_delay:
            probe.initial_delay_seconds = PROBE_TEST_INITIAL_DELAY_SECONDS
        if self.failing:
            probe.http_get.port = 81
        return probe


def get_restart_count(p):
    """getRestartCount: the sum over init and app containers."""
    return sum(s.restart_count for s in container_statuses(p, init=True) +
               container_statuses(p))


def web_server_pod_spec(readiness_probe, liveness_probe, container_name, port):
    """testWebServerPodSpec"""
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name="test-webserver-" + new_uuid()),
        spec=client.V1PodSpec(containers=[client.V1Container(
            name=container_name, image=AGNHOST_IMAGE, args=["test-webserver"],
            ports=[client.V1ContainerPort(container_port=port)],
            liveness_probe=liveness_probe, readiness_probe=readiness_probe)]))



def busy_box_pod_spec(readiness_probe, liveness_probe, cmd):
    """busyBoxPodSpec"""
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name="busybox-" + new_uuid(), labels={"test": "liveness"}),
        spec=client.V1PodSpec(containers=[client.V1Container(
            name="busybox", image=BUSYBOX_IMAGE, command=cmd,
            liveness_probe=liveness_probe, readiness_probe=readiness_probe)]))


def run_liveness_test(f, pod, expect_num_restarts, timeout):
    """RunLivenessTest: verifies the number of restarts of the pod's first container."""
    assert pod.spec.containers, "Expected the pod to have containers"
    container_name = pod.spec.containers[0].name
    _run_liveness_test(f, pod, expect_num_restarts, timeout, container_name)


def _run_liveness_test(f, pod, expect_num_restarts, timeout, container_name):
    """runLivenessTest"""
    pod_client = PodClient(f)
    ns = f.namespace.metadata.name
    name = pod.metadata.name
    try:
        by("Creating pod %s in namespace %s" % (name, ns))
        pod_client.create(pod)

        # To check for the container is ever started, we need to wait for the
        # container to be in a non-waiting state.
        def not_waiting(p):
            for c in container_statuses(p, init=True) + container_statuses(p):
                if c.name == container_name and c.state is not None and \
                        (c.state.running is not None or c.state.terminated is not None):
                    return True, None
            return False, None

        err = wait_for_pod_condition(f.core, ns, name, "container not waiting", timeout,
                                     not_waiting)
        if err is not None:
            fail("unexpected error: %s", err)

        # Check the pod's current state and verify that restartCount is present.
        by("checking the pod's current state and verifying that restartCount is present")
        try:
            pod = pod_client.get(name)
        except ApiException as e:
            fail("getting pod %s in namespace %s: %s", name, ns, describe_error(e))
        initial_restart_count = get_existing_container_status(
            container_statuses(pod, init=True) + container_statuses(pod),
            container_name).restart_count
        logf("Initial restart count of pod %s is %d", name, initial_restart_count)

        # Wait for the restart state to be as desired.
        # If initialRestartCount is not zero, there is restarting back-off time.
        deadline = time.monotonic() + timeout + initial_restart_count * 10

        last_restart_count = initial_restart_count
        observed_restarts = 0
        start = time.monotonic()
        while time.monotonic() < deadline:
            try:
                pod = pod_client.get(name)
            except ApiException as e:
                fail("getting pod %s: %s", name, describe_error(e))
            logf("Get pod %s in namespace %s", name, ns)
            restart_count = get_existing_container_status(
                container_statuses(pod, init=True) + container_statuses(pod),
                container_name).restart_count
            if restart_count != last_restart_count:
                logf("Restart count of pod %s/%s is now %d (%.3fs elapsed)", ns, name,
                     restart_count, time.monotonic() - start)
                if restart_count < last_restart_count:
                    fail("Restart count should increment monotonically: restart cont of pod "
                         "%s/%s changed from %d to %d", ns, name, last_restart_count,
                         restart_count)
            observed_restarts = restart_count - initial_restart_count
            if expect_num_restarts > 0 and observed_restarts >= expect_num_restarts:
                # Stop if we have observed more than expectNumRestarts restarts.
                break
            last_restart_count = restart_count
            time.sleep(2)

        # If we expected 0 restarts, fail if observed any restart.
        # If we expected n restarts (n > 0), fail if we observed < n restarts.
        if (expect_num_restarts == 0 and observed_restarts > 0) or \
                (expect_num_restarts > 0 and observed_restarts < expect_num_restarts):
            fail("pod %s/%s - expected number of restarts: %d, found restarts: %d. Pod status: "
                 "%s.", ns, name, expect_num_restarts, observed_restarts, pod.status)
    finally:
        # ginkgo.DeferCleanup: delete the pod with grace period 0
        by("deleting the pod")
        try:
            pod_client.delete(name, 0)
        except ApiException as e:
            if not is_not_found(e):
                fail("deleting pod %s: %s", name, describe_error(e))


# Release: v1.9
# Testname: Pod readiness probe, failure
# Description: Create a Pod with a readiness probe that fails consistently. When this Pod is
# created, then the Pod MUST never be ready, never be running and restart count MUST be zero.
@conformance("[sig-node] Probing container with readiness probe that fails should never be "
             "ready and never restart [NodeConformance] [Conformance]")
def test_probe_readiness_failing_never_ready(new_framework):
    f, pod_client = probe_framework(new_framework)
    ns = f.namespace.metadata.name
    probe = WebserverProbeBuilder()
    p = pod_client.create(web_server_pod_spec(probe.with_failing().build(), None,
                                              "test-webserver", 80))
    # gomega.Consistently(ctx, func() (bool, error) {...}, 1*time.Minute, 1*time.Second)
    #     .ShouldNot(gomega.BeTrueBecause("pod should not be ready"))
    deadline = time.monotonic() + 60
    while True:
        try:
            got = pod_client.get(p.metadata.name)
        except ApiException as e:
            fail("Consistently: the function returned an error: %s", describe_error(e))
        if is_pod_ready(got):
            fail("pod should not be ready: pod %s/%s became ready", ns, p.metadata.name)
        if time.monotonic() + 1 > deadline:
            break
        time.sleep(1)

    try:
        p = pod_client.get(p.metadata.name)
    except ApiException as e:
        fail("unexpected error: %s", describe_error(e))

    is_ready, _ = pod_running_ready(p)
    if is_ready:
        fail("pod %s/%s should be not ready", ns, p.metadata.name)

    restart_count = get_restart_count(p)
    assert restart_count == 0, "pod should have a restart count of 0 but got %d" % restart_count


# Release: v1.9
# Testname: Pod liveness probe, using local file, restart
# Description: Create a Pod with liveness probe that uses ExecAction handler to cat
# /temp/health file. The Container deletes the file /temp/health after 10 second, triggering
# liveness probe to fail. The Pod MUST now be killed and restarted incrementing restart count
# to 1.
@conformance("[sig-node] Probing container should be restarted with a exec \"cat /tmp/health\" "
             "liveness probe [NodeConformance] [Conformance]")
def test_probe_liveness_exec_restarted(new_framework):
    f, _ = probe_framework(new_framework)
    cmd = ["/bin/sh", "-c", "echo ok >/tmp/health; sleep 10; rm -rf /tmp/health; sleep 600"]
    liveness_probe = client.V1Probe(
        **exec_handler(["cat", "/tmp/health"]),
        initial_delay_seconds=15,
        timeout_seconds=5,  # default 1s can be pretty aggressive in CI environments
        failure_threshold=1)
    pod = busy_box_pod_spec(None, liveness_probe, cmd)
    run_liveness_test(f, pod, 1, DEFAULT_OBSERVATION_TIMEOUT)
