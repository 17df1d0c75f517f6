"""Port of the Containers [Conformance] test of test/e2e/common/node/containers.go
(kubernetes/kubernetes) "should use the image defaults if command and args are blank".

The pod really runs on one of the session's nodes (conftest.py). Image substitution:
agnhost becomes AGNHOST_IMAGE (agnhost-lite), which has agnhost's image config
(Entrypoint ["/agnhost"], Cmd ["pause"]) and whose `pause` prints "Paused" as agnhost's.
"""

import time

from e2e_framework import (POLL, PodClient, conformance, fail, get_pod_logs, new_agnhost_pod,
                           new_uuid, wait_for_pod_name_running)


def entrypoint_test_pod(namespace, *entrypoint_args):
    """entrypointTestPod: a prototypical entrypoint test pod."""
    pod_name = "client-containers-" + new_uuid()
    pod = new_agnhost_pod(namespace, pod_name, None, None, None, *entrypoint_args)
    pod.spec.termination_grace_period_seconds = 1
    pod.spec.restart_policy = "Never"
    return pod


# Release: v1.9
# Testname: Containers, without command and arguments
# Description: Default command and arguments from the container image entrypoint MUST be used
# when Pod does not specify the container command
@conformance("[sig-node] Containers should use the image defaults if command and args are "
             "blank [NodeConformance] [Conformance]")
def test_containers_image_defaults(new_framework):
    # SIGDescribe("Containers"): NewDefaultFramework("containers"), baseline
    f = new_framework("containers", "baseline")
    ns = f.namespace.metadata.name
    pod = entrypoint_test_pod(ns)
    pod.spec.containers[0].args = None
    pod = PodClient(f).create(pod)
    err = wait_for_pod_name_running(f.core, pod.metadata.name, ns)
    if err is not None:
        fail("Expected pod %r to be running, got error: %s", pod.metadata.name, err)

    def poll_logs():
        return get_pod_logs(f.api_client, ns, pod.metadata.name, pod.spec.containers[0].name)

    # The agnhost's image default entrypoint / args are: "/agnhost pause"
    # which will print out "Paused".
    # gomega.Eventually(ctx, pollLogs, 3, framework.Poll).Should(ContainSubstring("Paused")):
    # a 3 s timeout, polled every framework.Poll (2 s).
    deadline = time.monotonic() + 3
    while True:
        logs, err = poll_logs()
        if err is None and "Paused" in logs:
            return
        if time.monotonic() + POLL > deadline:
            if err is not None:
                fail("Timed out after 3s.\nThe function passed to Eventually returned the "
                     "following error: %s", err)
            fail("Timed out after 3s.\nExpected\n%r\nto contain substring\n%r", logs, "Paused")
        time.sleep(POLL)
