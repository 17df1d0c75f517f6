"""Ports of the Container Runtime [Conformance] tests of test/e2e/common/node/runtime.go
(kubernetes/kubernetes): "blackbox test when starting a container that exits should run with
the expected status" and "blackbox test on terminated container should report termination
message from log output if TerminationMessagePolicy FallbackToLogsOnError is set".

ConformanceContainer, GetContainerState and the ContainerStatus timeouts are those of
test/e2e/common/node/container.go. Pods really run on the session's nodes (conftest.py).
Image substitution: imageutils.BusyBox becomes BUSYBOX_IMAGE (the local busybox image).
"""

import copy
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (BUSYBOX_IMAGE, PodClient, by, conformance, container_state_name,
                           describe_error, fail, is_not_found, is_pod_ready, logf, new_uuid)

# container.go
CONTAINER_STATUS_RETRY_TIMEOUT = 5 * 60  # ContainerStatusRetryTimeout
CONTAINER_STATUS_POLL_INTERVAL = 1.0     # ContainerStatusPollInterval


class ConformanceContainer:
    """ConformanceContainer: one pod with one container."""

    def __init__(self, pod_client, container, restart_policy, volumes=None,
                 image_pull_secrets=(), node_name=None, pod_security_context=None):
        self.pod_client = pod_client
        self.container = container
        self.restart_policy = restart_policy
        self.volumes = volumes
        self.image_pull_secrets = list(image_pull_secrets)
        self.node_name = node_name
        self.pod_security_context = pod_security_context
        self.pod_name = None

    def create(self):
        self.pod_name = self.container.name + new_uuid()
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(name=self.pod_name),
            spec=client.V1PodSpec(
                restart_policy=self.restart_policy,
                containers=[self.container],
                node_name=self.node_name,
                security_context=self.pod_security_context,
                volumes=self.volumes,
                # []v1.LocalObjectReference{} (omitempty: not sent when empty)
                image_pull_secrets=[client.V1LocalObjectReference(name=s)
                                    for s in self.image_pull_secrets] or None))
        return self.pod_client.create(pod)

    def delete(self):
        """Delete with metav1.NewDeleteOptions(0); returns None or the ApiException."""
        try:
            self.pod_client.delete(self.pod_name, 0)
        except ApiException as err:
            return err
        return None

    def is_ready(self):
        try:
            pod = self.pod_client.get(self.pod_name)
        except ApiException as err:
            return False, err
        return is_pod_ready(pod), None

    def get_phase(self):
        try:
            pod = self.pod_client.get(self.pod_name)
        except ApiException as err:
            # it doesn't matter what phase to return as error would not be nil
            return "Succeeded", err
        return (pod.status.phase if pod.status else None), None

    def get_status(self):
        try:
            pod = self.pod_client.get(self.pod_name)
        except ApiException as err:
            return client.V1ContainerStatus(name="", image="", image_id="", ready=False,
                                            restart_count=0), err
        statuses = (pod.status.container_statuses if pod.status else None) or []
        if len(statuses) != 1 or statuses[0].name != self.container.name:
            return client.V1ContainerStatus(name="", image="", image_id="", ready=False,
                                            restart_count=0), \
                "unexpected container statuses %s" % [s.to_dict() for s in statuses]
        return statuses[0], None

    def present(self):
        try:
            self.pod_client.get(self.pod_name)
        except ApiException as err:
            if is_not_found(err):
                return False, None
            return False, err
        return True, None


def _err_text(err):
    return describe_error(err) if isinstance(err, ApiException) else str(err)


def eventually_equal(fn, expected, what, timeout=CONTAINER_STATUS_RETRY_TIMEOUT,
                     interval=CONTAINER_STATUS_POLL_INTERVAL):
    """gomega.Eventually(ctx, fn, timeout, interval).Should(gomega.Equal(expected)) for a
    function returning (value, error): an attempt with an error counts as not matching."""
    deadline = time.monotonic() + timeout
    while True:
        value, err = fn()
        if err is None and value == expected:
            return
        if time.monotonic() + interval > deadline:
            if err is not None:
                fail("%s: Timed out after %ss.\nThe function passed to Eventually returned the "
                     "following error: %s", what, timeout, _err_text(err))
            fail("%s: Timed out after %ss.\nExpected\n%r\nto equal\n%r", what, timeout, value,
                 expected)
        time.sleep(interval)


def ignore_not_found_delete(c):
    """ginkgo.DeferCleanup(framework.IgnoreNotFound(c.Delete))"""
    if c.pod_name is None:
        return
    err = c.delete()
    if err is not None and not is_not_found(err):
        fail("cleanup: deleting pod %s: %s", c.pod_name, _err_text(err))


def container_runtime_framework(new_framework):
    """SIGDescribe("Container Runtime"): NewDefaultFramework("container-runtime"),
    privileged (custom registry pods need HostPorts)."""
    return new_framework("container-runtime", "privileged")


# It failed at the 1st run, then succeeded at 2nd run, then run forever
CMD_SCRIPTS = """
f=%s
count=$(echo 'hello' >> $f ; wc -l $f | awk {'print $1'})
if [ $count -eq 1 ]; then
	exit 1
fi
if [ $count -eq 2 ]; then
	exit 0
fi
while true; do sleep 1; done
"""


# Release: v1.13
# Testname: Container Runtime, Restart Policy, Pod Phases
# Description: If the restart policy is set to 'Always', Pod MUST be restarted when terminated,
# If restart policy is 'OnFailure', Pod MUST be started only if it is terminated with non-zero
# exit code. If the restart policy is 'Never', Pod MUST never be restarted. All these three
# test cases MUST verify the restart counts accordingly.
@conformance("[sig-node] Container Runtime blackbox test when starting a container that exits "
             "should run with the expected status [NodeConformance] [Conformance]")
def test_container_runtime_exit_status(new_framework):
    f = container_runtime_framework(new_framework)
    restart_count_volume_name = "restart-count"
    restart_count_volume_path = "/restart-count"
    test_container = client.V1Container(
        name="", image=BUSYBOX_IMAGE,
        volume_mounts=[client.V1VolumeMount(mount_path=restart_count_volume_path,
                                            name=restart_count_volume_name)])
    test_volumes = [client.V1Volume(
        name=restart_count_volume_name,
        empty_dir=client.V1EmptyDirVolumeSource(medium="Memory"))]
    # Name, RestartPolicy, Phase, State, RestartCount, Ready
    test_cases = [
        ("terminate-cmd-rpa", "Always", "Running", "Running", 2, True),
        ("terminate-cmd-rpof", "OnFailure", "Succeeded", "Terminated", 1, False),
        ("terminate-cmd-rpn", "Never", "Failed", "Terminated", 0, False),
    ]
    cleanups = []
    try:
        for name, restart_policy, phase, state, restart_count, ready in test_cases:
            tmp_cmd = CMD_SCRIPTS % (restart_count_volume_path + "/restartCount")
            test_container.name = name
            test_container.command = ["sh", "-c", tmp_cmd]
            terminate_container = ConformanceContainer(
                PodClient(f), copy.deepcopy(test_container), restart_policy,
                volumes=test_volumes)
            terminate_container.create()
            cleanups.append(terminate_container)

            by("Container '%s': should get the expected 'RestartCount'" % name)

            def restart_count_of():
                status, err = terminate_container.get_status()
                return status.restart_count, err

            eventually_equal(restart_count_of, restart_count,
                             "Container '%s' RestartCount" % name)

            by("Container '%s': should get the expected 'Phase'" % name)
            eventually_equal(terminate_container.get_phase, phase,
                             "Container '%s' Phase" % name)

            by("Container '%s': should get the expected 'Ready' condition" % name)
            eventually_equal(terminate_container.is_ready, ready,
                             "Container '%s' Ready" % name)

            status, err = terminate_container.get_status()
            if err is not None:
                fail("unexpected error: %s", _err_text(err))

            by("Container '%s': should get the expected 'State'" % name)
            got_state = container_state_name(status.state)
            assert got_state == state, "Expected\n%r\nto equal\n%r" % (got_state, state)

            by("Container '%s': should be possible to delete" % name)
            err = terminate_container.delete()
            if err is not None:
                fail("Expected success, but got an error: %s", _err_text(err))

            def present():
                return terminate_container.present()

            deadline = time.monotonic() + CONTAINER_STATUS_RETRY_TIMEOUT
            while True:
                is_present, err = present()
                if err is None and not is_present:
                    break
                if time.monotonic() + CONTAINER_STATUS_POLL_INTERVAL > deadline:
                    fail("container '%s': should have been terminated by now. (%s)", name,
                         _err_text(err) if err is not None else "still present")
                time.sleep(CONTAINER_STATUS_POLL_INTERVAL)
    finally:
        for c in reversed(cleanups):
            ignore_not_found_delete(c)


def match_termination_message(f, container, expected_phase, expected_msg):
    """matchTerminationMessage: create and then terminate the container under the expected
    PodPhase, check its termination message (gomega.Equal(expected_msg)), delete it."""
    container.name = "termination-message-container"
    c = ConformanceContainer(PodClient(f), container, "Never")

    by("create the container")
    c.create()
    try:
        by("wait for the container to reach %s" % expected_phase)
        eventually_equal(c.get_phase, expected_phase, "phase")

        by("get the container status")
        status, err = c.get_status()
        if err is not None:
            fail("unexpected error: %s", _err_text(err))

        by("the container should be terminated")
        got_state = container_state_name(status.state)
        assert got_state == "Terminated", "Expected\n%r\nto equal\n%r" % (got_state,
                                                                         "Terminated")

        by("the termination message should be set")
        logf("Expected: %r to match Container's Termination Message: %r --", expected_msg,
             status.state.terminated.message)
        assert status.state.terminated.message == expected_msg, \
            "Expected\n%r\nto equal\n%r" % (status.state.terminated.message, expected_msg)

        by("delete the container")
        err = c.delete()
        if err is not None:
            fail("Expected success, but got an error: %s", _err_text(err))
    finally:
        ignore_not_found_delete(c)


# Release: v1.15
# Testname: Container Runtime, TerminationMessage, from container's log output of failing
# container
# Description: Create a pod with an container. Container's output is recorded in log and
# container exits with an error. When container is terminated, termination message MUST match
# the expected output recorded from container's log.
@conformance("[sig-node] Container Runtime blackbox test on terminated container should report "
             "termination message from log output if TerminationMessagePolicy "
             "FallbackToLogsOnError is set [NodeConformance] [Conformance]")
def test_container_runtime_termination_message_fallback_to_logs(new_framework):
    f = container_runtime_framework(new_framework)
    container = client.V1Container(
        name="", image=BUSYBOX_IMAGE,
        command=["/bin/sh", "-c"],
        args=["/bin/echo -n DONE; /bin/false"],
        termination_message_path="/dev/termination-log",
        termination_message_policy="FallbackToLogsOnError")
    match_termination_message(f, container, "Failed", "DONE")
