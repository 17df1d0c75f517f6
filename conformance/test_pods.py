"""Ports of the Pods [Conformance] tests of test/e2e/common/node/pods.go (kubernetes/kubernetes)
that need a scheduler and a node but no controller: "should get a host IP", "should be
submitted and removed", "should allow activeDeadlineSeconds to be updated", "should delete a
collection of pods", "should patch a pod status", "should run through the lifecycle of
Pods and PodStatus", "should support remote command execution over websockets" and
"should support retrieving logs from the container over websockets".

Pods really run on the session's two nodes (conftest.py). Image substitutions: the pause
image is the same reference as upstream's; agnhost with its default arguments (`pause`)
becomes AGNHOST_IMAGE (agnhost-lite, same Entrypoint/Cmd); the lifecycle test's second
image, httpd (runs forever from its own defaults), becomes the pause image.
"""

import json
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (AGNHOST_IMAGE, BUSYBOX_IMAGE, DEFAULT_POD_DELETION_TIMEOUT, PAUSE_IMAGE,
                           POD_DELETE_TIMEOUT, POD_START_TIMEOUT, IndexerInformerWatcher,
                           PodClient, by, conformance, describe_error, expect_no_error, fail,
                           is_not_found, is_pod_ready, logf, mixin_restricted_pod_security,
                           new_uuid, open_websocket_for_url, rand_string, raw_call, retry_on_conflict,
                           to_model, websocket_receive,
                           wait_for_pod_name_running, wait_for_pod_running,
                           wait_for_pod_terminated, wait_for_pods_running_ready, watch_until)

POD_RETRY_PERIOD = 1.0  # podRetryPeriod


def time_value():
    """strconv.Itoa(time.Now().Nanosecond())"""
    return str(time.time_ns() % 1_000_000_000)


def pods_framework(new_framework):
    """SIGDescribe("Pods"): NewDefaultFramework("pods"), NamespacePodSecurityLevel
    restricted; podClient = e2epod.NewPodClient(f)."""
    f = new_framework("pods", "restricted")
    return f, PodClient(f)


def check_host_ip(pod_client, pod):
    """testHostIP"""
    by("creating pod")
    pod_client.create_sync(pod)

    # Try to make sure we get a hostIP for each pod.
    host_ip_timeout = 2 * 60
    t = time.monotonic()
    while True:
        p = expect_no_error(pod_client.get, pod.metadata.name,
                            explain="Failed to get pod %r" % pod.metadata.name)
        if p.status is not None and p.status.host_ip:
            logf("Pod %s has hostIP: %s", p.metadata.name, p.status.host_ip)
            break
        if time.monotonic() - t >= host_ip_timeout:
            fail("Gave up waiting for hostIP of pod %s after %s seconds", p.metadata.name,
                 time.monotonic() - t)
        logf("Retrying to get the hostIP of pod %s", p.metadata.name)
        time.sleep(5)


# Release: v1.9
# Testname: Pods, assigned hostip
# Description: Create a Pod. Pod status MUST return successfully and contains a valid IP
# address.
@conformance("[sig-node] Pods should get a host IP [NodeConformance] [Conformance]")
def test_pods_host_ip(new_framework):
    f, pod_client = pods_framework(new_framework)
    name = "pod-hostip-" + new_uuid()
    check_host_ip(pod_client, mixin_restricted_pod_security(client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(containers=[client.V1Container(name="test",
                                                             image=PAUSE_IMAGE)]))))


# Release: v1.9
# Testname: Pods, lifecycle
# Description: A Pod is created with a unique label. Pod MUST be accessible when queried using
# the label selector upon creation. Add a watch, check if the Pod is running. Pod then deleted,
# The pod deletion timestamp is observed. The watch MUST return the pod deleted event. Query
# with the original selector for the Pod MUST return empty list.
@conformance("[sig-node] Pods should be submitted and removed [NodeConformance] "
             "[Conformance]")
def test_pods_submitted_and_removed(new_framework):
    f, pod_client = pods_framework(new_framework)
    ns = f.namespace.metadata.name
    by("creating the pod")
    name = "pod-submit-remove-" + new_uuid()
    value = time_value()
    pod = mixin_restricted_pod_security(client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"name": "foo", "time": value}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="pause",
                                                             image=PAUSE_IMAGE)])))

    by("setting up watch")
    selector = "time=" + value
    pods = expect_no_error(f.core.list_namespaced_pod, ns, label_selector=selector,
                           explain="failed to query for pods")
    assert len(pods.items) == 0, "expected no pods, got %d" % len(pods.items)

    w = IndexerInformerWatcher(f.core.list_namespaced_pod, ns, label_selector=selector)
    try:
        # cache.WaitForCacheSync(ctxUntil.Done(), informer.HasSynced), wait.ForeverTestTimeout
        if not w.synced.wait(30):
            fail("Timeout while waiting to Pod informer to sync")

        by("submitting the pod to kubernetes")
        pod_client.create(pod)

        by("verifying the pod is in kubernetes")
        pods = expect_no_error(f.core.list_namespaced_pod, ns, label_selector=selector,
                               explain="failed to query for pods")
        assert len(pods.items) == 1, "expected 1 pod, got %d" % len(pods.items)

        by("verifying pod creation was observed")
        event = w.result(POD_START_TIMEOUT)
        if event is None:
            fail("Timeout while waiting for pod creation")
        if event["type"] != "ADDED":
            fail("Failed to observe pod creation: %s %s", event["type"],
                 event["object"].metadata.name)

        # We need to wait for the pod to be running, otherwise the deletion
        # may be carried out immediately rather than gracefully.
        err = wait_for_pod_name_running(f.core, pod.metadata.name, ns)
        if err is not None:
            fail("unexpected error: %s", err)
        # save the running pod
        pod = expect_no_error(pod_client.get, pod.metadata.name,
                              explain="failed to GET scheduled pod")

        by("deleting the pod gracefully")
        expect_no_error(pod_client.delete, pod.metadata.name, 30,
                        explain="failed to delete pod")

        by("verifying pod deletion was observed")
        deleted = False
        last_pod = None
        deadline = time.monotonic() + DEFAULT_POD_DELETION_TIMEOUT
        while not deleted:
            remaining = deadline - time.monotonic()
            event = w.result(remaining) if remaining > 0 else None
            if event is None:
                fail("timed out waiting for pod deletion")
            if event["type"] == "DELETED":
                last_pod = event["object"]
                deleted = True
            elif event["type"] == "ERROR":
                logf("received a watch error: %s", event["object"])
                fail("watch closed with error")
        if not deleted:
            fail("Failed to observe pod deletion")

        assert last_pod.metadata.deletion_timestamp is not None, \
            "expected the deleted pod to have a deletionTimestamp"
        # gomega.Expect(lastPod.Spec.TerminationGracePeriodSeconds).ToNot(gomega.BeZero()):
        # the *int64 must not be nil
        assert last_pod.spec.termination_grace_period_seconds is not None, \
            "expected the deleted pod to have spec.terminationGracePeriodSeconds"

        pods = expect_no_error(f.core.list_namespaced_pod, ns, label_selector=selector,
                               explain="failed to query for pods")
        assert len(pods.items) == 0, "expected no pods, got %d" % len(pods.items)
    finally:
        w.stop()


# Release: v1.9
# Testname: Pods, ActiveDeadlineSeconds
# Description: Create a Pod with a unique label. Query for the Pod with the label as selector
# MUST be successful. The Pod is updated with ActiveDeadlineSeconds set on the Pod spec. Pod
# MUST terminate of the specified time elapses.
@conformance("[sig-node] Pods should allow activeDeadlineSeconds to be updated "
             "[NodeConformance] [Conformance]")
def test_pods_active_deadline_seconds(new_framework):
    f, pod_client = pods_framework(new_framework)
    ns = f.namespace.metadata.name
    by("creating the pod")
    name = "pod-update-activedeadlineseconds-" + new_uuid()
    value = time_value()
    pod = mixin_restricted_pod_security(client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"name": "foo", "time": value}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="pause",
                                                             image=PAUSE_IMAGE)])))

    by("submitting the pod to kubernetes")
    pod_client.create_sync(pod)

    by("verifying the pod is in kubernetes")
    pods = expect_no_error(f.core.list_namespaced_pod, ns, label_selector="time=" + value,
                           explain="failed to query for pods")
    assert len(pods.items) == 1, "expected 1 pod, got %d" % len(pods.items)

    by("updating the pod")

    def set_deadline(p):
        p.spec.active_deadline_seconds = 5

    pod_client.update(name, set_deadline)

    err = wait_for_pod_terminated(f.core, pod.metadata.name, "DeadlineExceeded", ns)
    if err is not None:
        fail("unexpected error: %s", err)


def check_pod_list_quantity(f, label, quantity):
    """checkPodListQuantity: (done, error text or None)."""
    try:
        lst = f.core.list_namespaced_pod(f.namespace.metadata.name, label_selector=label)
    except ApiException as err:
        return False, describe_error(err)
    if len(lst.items) != quantity:
        logf("Pod quantity %d is different from expected quantity %d", len(lst.items),
             quantity)
        return False, None
    return True, None


# Release: v1.19
# Testname: Pods, delete a collection
# Description: A set of pods is created with a label selector which MUST be found when listed.
# The set of pods is deleted and MUST NOT show up when listed by its label selector.
@conformance("[sig-node] Pods should delete a collection of pods [Conformance]")
def test_pods_delete_collection(new_framework):
    f, _ = pods_framework(new_framework)
    ns = f.namespace.metadata.name
    pod_test_names = ["test-pod-1", "test-pod-2", "test-pod-3"]
    one = 1

    by("Create set of pods")
    # create a set of pods in test namespace
    for pod_test_name in pod_test_names:
        expect_no_error(f.core.create_namespaced_pod, ns, mixin_restricted_pod_security(
            client.V1Pod(
                metadata=client.V1ObjectMeta(name=pod_test_name, labels={"type": "Testing"}),
                spec=client.V1PodSpec(
                    termination_grace_period_seconds=one,
                    containers=[client.V1Container(image=AGNHOST_IMAGE, name="token-test")],
                    restart_policy="Never"))),
            explain="failed to create pod")
        logf("created %s", pod_test_name)

    # wait as required for all 3 pods to be running
    by("waiting for all 3 pods to be running")
    err = wait_for_pods_running_ready(f.core, client.AppsV1Api(f.api_client), ns, 3, 0,
                                      POD_START_TIMEOUT)
    if err is not None:
        fail("3 pods not found running.: %s", err)

    # delete Collection of pods with a label in the current namespace
    expect_no_error(f.core.delete_collection_namespaced_pod, ns,
                    body=client.V1DeleteOptions(grace_period_seconds=one),
                    label_selector="type=Testing",
                    explain="failed to delete collection of pods")

    # wait for all pods to be deleted
    by("waiting for all pods to be deleted")
    # wait.PollUntilContextTimeout(ctx, podRetryPeriod, f.Timeouts.PodDelete, true, ...)
    deadline = time.monotonic() + POD_DELETE_TIMEOUT
    while True:
        done, err = check_pod_list_quantity(f, "type=Testing", 0)
        if err is not None:
            fail("found a pod(s): %s", err)
        if done:
            break
        if time.monotonic() + POD_RETRY_PERIOD > deadline:
            fail("found a pod(s): context deadline exceeded")
        time.sleep(POD_RETRY_PERIOD)


# Release: v1.20
# Testname: Pods, completes the lifecycle of a Pod and the PodStatus
# Description: A Pod is created with a static label which MUST succeed. It MUST succeed when
# patching the label and the pod data. When checking and replacing the PodStatus it MUST
# succeed. It MUST succeed when deleting the Pod.
@conformance("[sig-node] Pods should run through the lifecycle of Pods and PodStatus "
             "[Conformance]")
def test_pods_lifecycle(new_framework):
    f, _ = pods_framework(new_framework)
    test_namespace_name = f.namespace.metadata.name
    test_pod_name = "pod-test"
    test_pod_image = AGNHOST_IMAGE   # imageutils.Agnhost (default arguments: pause)
    test_pod_image2 = PAUSE_IMAGE    # imageutils.Httpd: runs until stopped, from its defaults
    test_pod_labels = {"test-pod-static": "true"}
    test_pod_labels_flat = "test-pod-static=true"
    one = 1

    # w: a ListWatch whose WatchFunc watches the test namespace with the label selector
    watch_args = (f.core.list_namespaced_pod, test_namespace_name)
    watch_kwargs = {"label_selector": test_pod_labels_flat}

    pods_list = expect_no_error(f.core.list_pod_for_all_namespaces,
                                label_selector=test_pod_labels_flat,
                                explain="failed to list Pods")

    test_pod = mixin_restricted_pod_security(client.V1Pod(
        metadata=client.V1ObjectMeta(name=test_pod_name, labels=dict(test_pod_labels)),
        spec=client.V1PodSpec(
            termination_grace_period_seconds=one,
            containers=[client.V1Container(name=test_pod_name, image=test_pod_image)])))
    by("creating a Pod with a static label")
    expect_no_error(f.core.create_namespaced_pod, test_namespace_name, test_pod,
                    explain="failed to create Pod %s in namespace %s" % (
                        test_pod.metadata.name, test_namespace_name))

    by("watching for Pod to be ready")

    def running(event):
        pod = event.get("object")
        if isinstance(pod, client.V1Pod):
            found = (pod.metadata.name == test_pod.metadata.name and
                     pod.metadata.namespace == test_namespace_name and
                     (pod.metadata.labels or {}).get("test-pod-static") == "true" and
                     pod.status is not None and pod.status.phase == "Running")
            conds = [(c.type, c.status) for c in
                     ((pod.status.conditions if pod.status else None) or [])]
            if not found:
                logf("observed Pod %s in namespace %s in phase %s with labels: %s & "
                     "conditions %s", pod.metadata.name, pod.metadata.namespace,
                     pod.status.phase if pod.status else None, pod.metadata.labels, conds)
                return False, None
            logf("Found Pod %s in namespace %s in phase %s with labels: %s & conditions %s",
                 pod.metadata.name, pod.metadata.namespace, pod.status.phase,
                 pod.metadata.labels, conds)
            return found, None
        logf("Observed event: %s", event.get("raw_object"))
        return False, None

    _, err = watch_until(POD_START_TIMEOUT, pods_list.metadata.resource_version, *watch_args,
                         conditions=[running], **watch_kwargs)
    if err is not None:
        logf("failed to see event that pod is created: %s", err)
    p = expect_no_error(f.core.read_namespaced_pod, test_pod_name, test_namespace_name,
                        explain="failed to get Pod %s in namespace %s" % (
                            test_pod_name, test_namespace_name))
    assert p.status.phase == "Running", "failed to see Pod %s in namespace %s running" % (
        p.metadata.name, test_namespace_name)

    by("patching the Pod with a new Label and updated data")
    pre_patch_resource_version = p.metadata.resource_version
    # json.Marshal(v1.Pod{ObjectMeta: {Labels}, Spec: {TerminationGracePeriodSeconds,
    # Containers: [{Name, Image}]}}): what encoding/json writes for it
    pod_patch = {
        "metadata": {"creationTimestamp": None, "labels": {"test-pod": "patched"}},
        "spec": {"containers": [{"name": test_pod_name, "image": test_pod_image2,
                                 "resources": {}}],
                 "terminationGracePeriodSeconds": one},
        "status": {},
    }
    expect_no_error(f.core.patch_namespaced_pod, test_pod_name, test_namespace_name,
                    pod_patch,
                    explain="failed to patch Pod %s in namespace %s" % (
                        test_pod_name, test_namespace_name))  # strategic merge patch

    def modified(event):
        if event["type"] == "MODIFIED":
            pod = event.get("object")
            if isinstance(pod, client.V1Pod):
                found = ((pod.metadata.labels or {}).get("test-pod-static") == "true")
                return found, None
        else:
            logf("observed event type %s", event["type"])
        return False, None

    _, err = watch_until(30, pre_patch_resource_version, *watch_args, conditions=[modified],
                         **watch_kwargs)
    if err is not None:
        logf("failed to see %s event: %s", "MODIFIED", err)

    by("getting the Pod and ensuring that it's patched")
    pod = expect_no_error(f.core.read_namespaced_pod, test_pod_name, test_namespace_name,
                          explain="failed to fetch Pod %s in namespace %s" % (
                              test_pod_name, test_namespace_name))
    assert (pod.metadata.labels or {}).get("test-pod") == "patched", \
        "failed to patch Pod - missing label: %s" % pod.metadata.labels
    assert pod.spec.containers[0].image == test_pod_image2, \
        "failed to patch Pod - wrong image: %s" % pod.spec.containers[0].image

    by("replacing the Pod's status Ready condition to False")
    result = {}

    def replace_status():
        # dc.Resource(pods).Namespace(ns).Get(ctx, name, GetOptions{}, "status")
        try:
            pod_status_unstructured = raw_call(
                f.api_client, "GET", "/api/v1/namespaces/%s/pods/%s/status" % (
                    test_namespace_name, test_pod_name))
        except ApiException as err:
            fail("failed to fetch PodStatus of Pod %s in namespace %s: %s", test_pod_name,
                 test_namespace_name, describe_error(err))
        pod_status_updated = to_model(pod_status_unstructured, "V1Pod")
        pod_status_field_patch_count = 0
        pod_status_field_patch_count_total = 2
        for cond in (pod_status_updated.status.conditions or []):
            if (cond.type == "Ready" and cond.status == "True") or \
                    (cond.type == "ContainersReady" and cond.status == "True"):
                cond.status = "False"
                pod_status_field_patch_count += 1
        assert pod_status_field_patch_count == pod_status_field_patch_count_total, \
            "failed to patch all relevant Pod conditions: %d of %d were True; conditions %s" % (
                pod_status_field_patch_count, pod_status_field_patch_count_total,
                pod_status_unstructured.get("status", {}).get("conditions"))
        result["update"] = f.core.replace_namespaced_pod_status(
            test_pod_name, test_namespace_name, pod_status_updated)

    try:
        retry_on_conflict(replace_status)
    except ApiException as err:
        fail("failed to update PodStatus of Pod %s in namespace %s: %s", test_pod_name,
             test_namespace_name, describe_error(err))
    pod_status_update = result["update"]

    by("check the Pod again to ensure its Ready conditions are False")
    pod_status_field_patch_count = 0
    pod_status_field_patch_count_total = 2
    for cond in (pod_status_update.status.conditions or []):
        if (cond.type == "Ready" and cond.status == "False") or \
                (cond.type == "ContainersReady" and cond.status == "False"):
            pod_status_field_patch_count += 1
    assert pod_status_field_patch_count == pod_status_field_patch_count_total, \
        "failed to update PodStatus - field patch count doesn't match the total: %s" % [
            (c.type, c.status) for c in (pod_status_update.status.conditions or [])]

    by("deleting the Pod via a Collection with a LabelSelector")
    pre_delete_resource_version = pod_status_update.metadata.resource_version
    expect_no_error(f.core.delete_collection_namespaced_pod, test_namespace_name,
                    body=client.V1DeleteOptions(grace_period_seconds=one),
                    label_selector=test_pod_labels_flat,
                    explain="failed to delete Pod by collection")

    by("watching for the Pod to be deleted")

    def deleted(event):
        if event["type"] == "DELETED":
            pod = event.get("object")
            if isinstance(pod, client.V1Pod):
                found = ((pod.metadata.labels or {}).get("test-pod-static") == "true")
                return found, None
            logf("observed event type %s that was not a pod: %s", event["type"],
                 type(pod).__name__)
        else:
            logf("observed event type %s", event["type"])
        return False, None

    _, err = watch_until(POD_DELETE_TIMEOUT, pre_delete_resource_version, *watch_args,
                         conditions=[deleted], **watch_kwargs)
    if err is not None:
        logf("failed to see %s event: %s", "DELETED", err)
    try:
        post_delete_pod = f.core.read_namespaced_pod(test_pod_name, test_namespace_name)
    except ApiException as err:
        if not is_not_found(err):
            fail("expected IsNotFound error, got %s", describe_error(err))
        return
    fail("pod %s found in namespace %s, but it should be deleted: %s", test_pod_name,
         test_namespace_name, json.dumps(f.api_client.sanitize_for_serialization(
             post_delete_pod)))


# Release: v1.25
# Testname: Pods, patching status
# Description: A pod is created which MUST succeed and be found running. The pod status when
# patched MUST succeed. Given the patching of the pod status, the fields MUST equal the new
# values.
@conformance("[sig-node] Pods should patch a pod status [Conformance]")
def test_pods_patch_status(new_framework):
    f, _ = pods_framework(new_framework)
    ns = f.namespace.metadata.name
    pod_name = "pod-" + rand_string(5)
    label = {"e2e": pod_name}

    by("Create a pod")
    test_pod = mixin_restricted_pod_security(client.V1Pod(
        metadata=client.V1ObjectMeta(name=pod_name, labels=label),
        spec=client.V1PodSpec(
            termination_grace_period_seconds=1,
            containers=[client.V1Container(name="agnhost", image=AGNHOST_IMAGE)])))
    pod = expect_no_error(f.core.create_namespaced_pod, ns, test_pod,
                          explain="failed to create Pod %s in namespace %s" % (
                              test_pod.metadata.name, ns))
    err = wait_for_pod_running(f.core, pod)
    if err is not None:
        fail("Pod didn't start within time out period: %s", err)

    by("patching /status")
    # json.Marshal(v1.PodStatus{Message: "Patched by e2e test", Reason: "E2E"})
    p_status = {"message": "Patched by e2e test", "reason": "E2E"}
    try:
        p = raw_call(f.api_client, "PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (
            ns, pod_name), body={"metadata": {"annotations": {"patchedstatus": "true"}},
                                 "status": p_status},
            headers={"Content-Type": "application/merge-patch+json"})
    except ApiException as err:
        fail("failed to patch pod: %r: %s", pod_name, describe_error(err))
    p_status_obj = to_model(p, "V1Pod")
    assert p_status_obj.status.message == "Patched by e2e test", \
        "Status.Message for %r was %r but expected it to be \"Patched by e2e test\"" % (
            pod_name, p_status_obj.status.message)
    assert p_status_obj.status.reason == "E2E", \
        "Status.Reason for %r was %r but expected it to be \"E2E\"" % (
            pod_name, p_status_obj.status.reason)
    logf("Status Message: %r and Reason: %r", p_status_obj.status.message,
         p_status_obj.status.reason)


def websocket_pod(name, command):
    """The pod of the two websocket tests: one container "main" running busybox."""
    return mixin_restricted_pod_security(client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(containers=[client.V1Container(
            name="main", image=BUSYBOX_IMAGE, command=["/bin/sh", "-c", command])])))


# Release: v1.13
# Testname: Pods, remote command execution over websocket
# Description: A Pod is created. Websocket is created to retrieve exec command output from this
# pod. Message retrieved form Websocket MUST match with expected exec command output.
@conformance("[sig-node] Pods should support remote command execution over websockets "
             "[NodeConformance] [Conformance]")
def test_pods_exec_over_websockets(new_framework):
    f, pod_client = pods_framework(new_framework)
    by("creating the pod")
    name = "pod-exec-websocket-" + new_uuid()
    pod = websocket_pod(name, "echo container is alive; sleep 600")
    by("submitting the pod to kubernetes")
    pod_client.create_sync(pod)

    path = ("/api/v1/namespaces/%s/pods/%s/exec?stderr=1&stdout=1&container=main&command=echo"
            "&command=remote+execution+test" % (f.namespace.metadata.name, name))
    ws = open_websocket_for_url(f.api_client, path, ["channel.k8s.io"])
    try:
        # gomega.Eventually(..., time.Minute, 10*time.Second): the first pass reads the whole
        # stream; later passes find it ended, as upstream's.
        deadline = time.monotonic() + 60
        buf = b""
        while True:
            while True:
                msg = websocket_receive(ws)
                if msg is None:
                    break
                if len(msg) == 0:
                    continue
                if msg[0] != 1:
                    if len(msg) == 1:
                        continue  # skip an empty message on a stream other than stdout
                    fail("Got message from server that didn't start with channel 1 (STDOUT): %r", msg)
                buf += msg[1:]
            err = None
            if len(buf) == 0:
                err = "unexpected output from server"
            elif b"remote execution test" not in buf:
                err = "expected to find 'remote execution test' in %r" % buf
            if err is None:
                break
            if time.monotonic() > deadline:
                fail("%s", err)
            time.sleep(10)
    finally:
        ws.close()


# Release: v1.13
# Testname: Pods, logs from websockets
# Description: A Pod is created. Websocket is created to retrieve log of a container from this
# pod. Message retrieved form Websocket MUST match with container's output.
@conformance("[sig-node] Pods should support retrieving logs from the container over websockets "
             "[NodeConformance] [Conformance]")
def test_pods_logs_over_websockets(new_framework):
    f, pod_client = pods_framework(new_framework)
    by("creating the pod")
    name = "pod-logs-websocket-" + new_uuid()
    pod = websocket_pod(name, "echo container is alive; sleep 10000")
    by("submitting the pod to kubernetes")
    pod_client.create_sync(pod)

    path = "/api/v1/namespaces/%s/pods/%s/log?container=main" % (f.namespace.metadata.name, name)
    ws = open_websocket_for_url(f.api_client, path, ["binary.k8s.io"])
    try:
        buf = b""
        while True:
            msg = websocket_receive(ws)
            if msg is None:
                break
            if len(msg.strip()) == 0:
                continue
            buf += msg
        if buf != b"container is alive\n":
            fail("Unexpected websocket logs:\n%s", buf.decode(errors="replace"))
    finally:
        ws.close()
