"""Ports of the Kubelet [Conformance] tests of test/e2e/common/node/kubelet.go
(kubernetes/kubernetes) that need a scheduler and a node but no controller: "when scheduling
a busybox command in a pod should print the output to logs" and "when scheduling an agnhost
Pod with hostAliases should write entries to /etc/hosts".

Pods really run on the session's two nodes (conftest.py). Image substitutions:
framework.BusyBoxImage becomes BUSYBOX_IMAGE (the local busybox image); agnhost's
`etc-hosts` subcommand runs in AGNHOST_IMAGE (agnhost-lite, whose /agnhost prints
/etc/hosts followed by a newline, as agnhost's fmt.Println does).
"""

import datetime
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (BUSYBOX_IMAGE, PodClient, by, conformance, describe_error, fail,
                           go_time, logf, new_agnhost_pod, new_uuid, read_pod_log,
                           wait_for_pod_no_longer_running)


def kubelet_framework(new_framework):
    """SIGDescribe("Kubelet"): NewDefaultFramework("kubelet-test"), NamespacePodSecurityLevel
    baseline; podClient = e2epod.NewPodClient(f)."""
    f = new_framework("kubelet-test", "baseline")
    return f, PodClient(f)


# Release: v1.13
# Testname: Kubelet, log output, default
# Description: By default the stdout and stderr from the process being executed in a pod
# MUST be sent to the pod's logs.
@conformance("[sig-node] Kubelet when scheduling a busybox command in a pod should print the "
             "output to logs [NodeConformance] [Conformance]")
def test_kubelet_busybox_prints_output_to_logs(new_framework):
    f, pod_client = kubelet_framework(new_framework)
    ns = f.namespace.metadata.name
    pod_name = "busybox-scheduling-" + new_uuid()
    pod_client.create_sync(client.V1Pod(
        metadata=client.V1ObjectMeta(name=pod_name),
        spec=client.V1PodSpec(
            # Don't restart the Pod since it is expected to exit
            restart_policy="Never",
            containers=[client.V1Container(
                image=BUSYBOX_IMAGE, name=pod_name,
                command=["sh", "-c", "echo 'Hello World' ; sleep 240"])])))

    def logs():
        # sinceTime: metav1.NewTime(time.Now().Add(-1 * time.Hour)), sent as RFC 3339
        since_time = go_time(datetime.datetime.now(datetime.timezone.utc) -
                             datetime.timedelta(hours=1), False)
        try:
            return read_pod_log(f.api_client, ns, pod_name, {"sinceTime": since_time})
        except ApiException as err:
            logf("getting logs of pod %s: %s", pod_name, describe_error(err))
            return ""

    # gomega.Eventually(ctx, ..., time.Minute, time.Second*4).Should(gomega.Equal(...))
    deadline = time.monotonic() + 60
    while True:
        got = logs()
        if got == "Hello World\n":
            break
        if time.monotonic() + 4 > deadline:
            fail("Timed out after 60s.\nExpected\n%r\nto equal\n%r", got, "Hello World\n")
        time.sleep(4)


# Release: v1.13
# Testname: Kubelet, hostAliases
# Description: Create a Pod with hostAliases and a container with command to output
# /etc/hosts entries. Pod's logs MUST have matching entries of specified hostAliases to the
# output of /etc/hosts entries.
@conformance("[sig-node] Kubelet when scheduling an agnhost Pod with hostAliases should write "
             "entries to /etc/hosts [NodeConformance] [Conformance]")
def test_kubelet_host_aliases(new_framework):
    f, pod_client = kubelet_framework(new_framework)
    ns = f.namespace.metadata.name
    pod_name = "agnhost-host-aliases" + new_uuid()
    pod = new_agnhost_pod(ns, pod_name, None, None, None, "etc-hosts")
    # Don't restart the Pod since it is expected to exit
    pod.spec.restart_policy = "Never"
    pod.spec.host_aliases = [client.V1HostAlias(ip="123.45.67.89", hostnames=["foo", "bar"])]

    pod = pod_client.create(pod)
    by("Waiting for pod completion")
    err = wait_for_pod_no_longer_running(f.core, pod.metadata.name, ns)
    if err is not None:
        fail("unexpected error: %s", err)

    # podClient.GetLogs(podName, &v1.PodLogOptions{}).Stream(ctx)
    try:
        hosts_file_content = read_pod_log(f.api_client, ns, pod_name, {})
    except ApiException as err:
        fail("unexpected error: %s", describe_error(err))

    err_msg = ("expected hosts file to contain entries from HostAliases. Got:\n%s"
               % hosts_file_content)
    assert "123.45.67.89\tfoo\tbar" in hosts_file_content, err_msg
