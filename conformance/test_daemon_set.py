"""Ports of the DaemonSet [Conformance] tests of test/e2e/apps/daemon_set.go
(kubernetes/kubernetes, v1.32), SIGDescribe("Daemon set", framework.WithSerial()): "should
run and stop simple daemon", "should run and stop complex daemon", "should retry creating
failed daemon pods", "should update pod when spec was updated and update strategy is
RollingUpdate", "should rollback without unnecessary restarts", "should list and delete a
collection of DaemonSets" and "should verify changes to a daemon set status", with the
Describe's BeforeEach and AfterEach. The helpers they call (daemon_set.go's own,
test/e2e/framework/daemonset, pkg/controller/daemon's NodeShouldRunDaemonPod and Match,
e2eresource.DeleteResourceAndWaitForGC) are in e2e_daemonset.py.

They need shepherd-controller-manager's daemon set controller and garbage collector, the
scheduler and the two nodes (conftest.py): the pods run for real. The tests are [Serial]
upstream; pytest runs one test at a time.

Image substitutions (the nodes never pull; see e2e_daemonset.py):
* WebserverImage (imageutils.Httpd: httpd, serving until stopped), the image of every
  DaemonSet here, becomes the pause image (registry.k8s.io/pause:3.10): a long-running
  image. No ported test connects to the web server.
* AgnhostImage (imageutils.Agnhost), the image the RollingUpdate test updates to, becomes
  AGNHOST_IMAGE (agnhost-lite, default command `pause`, as agnhost's): a second,
  different, long-running image, as the test needs.
* The image the rollback test means to be missing stays as it is: "foo:non-existent" (the
  nodes report ErrImagePull, as a kubelet would).
"""

import json

from kubernetes import client

from e2e_daemonset import (AGNHOST, DAEMONSET_COLOR_LABEL, DAEMONSET_NAME_LABEL,
                           DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, DS_RETRY_PERIOD,
                           DS_RETRY_TIMEOUT, WEBSERVER, DaemonSetDescribe, _sanitize,
                           check_at_least_one_new_pod, check_daemon_pod_on_nodes,
                           check_daemon_pods_image_and_availability,
                           check_daemon_set_pods_labels, check_daemon_status,
                           check_running_on_all_nodes, check_running_on_no_nodes,
                           create_daemon_set,
                           cur_history, expect_no_err, get_daemon_set_image_patch,
                           list_daemon_histories, list_daemon_pods, new_daemon_set,
                           new_daemon_set_with_label, poll_until_context_timeout,
                           separate_daemon_set_node_labels, set_daemon_set_node_labels,
                           update_daemon_set_with_retries, wait_failed_daemon_pod_deleted,
                           wait_for_history_created)
from e2e_framework import (by, conformance, expect_no_error, fail, get_ready_schedulable_nodes,
                           logf, raw_call, retry_on_conflict, selector_from_set, to_model,
                           watch_until)
from e2e_rc import get_random_ready_schedulable_node

IMAGE = WEBSERVER         # image := WebserverImage
DS_NAME = "daemon-set"    # dsName


def daemon_set_describe(new_framework):
    """SIGDescribe("Daemon set", framework.WithSerial()): NewDefaultFramework("daemonsets"),
    NamespacePodSecurityLevel baseline, with its BeforeEach and AfterEach."""
    return DaemonSetDescribe(new_framework, "daemonsets")


def _is_daemon_set(event):
    return isinstance(event.get("object"), client.V1DaemonSet)


def _have_len_1(daemon_set_labels):
    """gomega.Expect(daemonSetLabels).To(gomega.HaveLen(1))"""
    if len(daemon_set_labels) != 1:
        fail("Expected\n    <map[string]string | len:%d>: %s\nto have length 1",
             len(daemon_set_labels), daemon_set_labels)


# Release: v1.10
# Testname: DaemonSet-Creation
# Description: A conformant Kubernetes distribution MUST support the creation of DaemonSets.
# When a DaemonSet Pod is deleted, the DaemonSet controller MUST create a replacement Pod.
@conformance("[sig-apps] Daemon set [Serial] should run and stop simple daemon [Conformance]")
def test_run_and_stop_simple_daemon(new_framework):
    daemon_set_describe(new_framework).run(_test_run_and_stop_simple_daemon)


def _test_run_and_stop_simple_daemon(t):
    c, apps, ns, f = t.c, t.apps, t.ns, t.f
    label = {DAEMONSET_NAME_LABEL: DS_NAME}

    by('Creating simple DaemonSet "%s"' % DS_NAME)
    ds = create_daemon_set(apps, ns,
                           new_daemon_set(DS_NAME, IMAGE, label))

    by("Check that daemon pods launch on every node of the cluster.")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_all_nodes(f, ds))
    expect_no_err(err, "error waiting for daemon pod to start")
    expect_no_err(check_daemon_status(f, apps, DS_NAME))

    by("Stop a daemon pod, check that the daemon pod is revived.")
    pod_list = list_daemon_pods(c, ns, label)
    pod = pod_list.items[0]
    expect_no_error(c.delete_namespaced_pod, pod.metadata.name, ns,
                    body=client.V1DeleteOptions())
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_all_nodes(f, ds))
    expect_no_err(err, "error waiting for daemon pod to revive")


# Release: v1.10
# Testname: DaemonSet-NodeSelection
# Description: A conformant Kubernetes distribution MUST support DaemonSet Pod node selection
# via label selectors.
@conformance("[sig-apps] Daemon set [Serial] should run and stop complex daemon [Conformance]")
def test_run_and_stop_complex_daemon(new_framework):
    daemon_set_describe(new_framework).run(_test_run_and_stop_complex_daemon)


def _test_run_and_stop_complex_daemon(t):
    c, apps, ns, f = t.c, t.apps, t.ns, t.f
    complex_label = {DAEMONSET_NAME_LABEL: DS_NAME}
    node_selector = {DAEMONSET_COLOR_LABEL: "blue"}
    logf("Creating daemon %r with a node selector", DS_NAME)
    ds = new_daemon_set(DS_NAME, IMAGE, complex_label)
    ds.spec.template.spec.node_selector = dict(node_selector)
    ds = create_daemon_set(apps, ns, ds)

    by("Initially, daemon pods should not be running on any nodes.")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_no_nodes(f, ds))
    expect_no_err(err, "error waiting for daemon pods to be running on no nodes")

    by("Change node label to blue, check that daemon pod is launched.")
    node, err = get_random_ready_schedulable_node(f.core)
    expect_no_err(err)
    new_node, err = set_daemon_set_node_labels(c, node.metadata.name, node_selector)
    expect_no_err(err, "error setting labels on node")
    daemon_set_labels, _ = separate_daemon_set_node_labels(new_node.metadata.labels)
    _have_len_1(daemon_set_labels)
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_daemon_pod_on_nodes(f, ds, [new_node.metadata.name]))
    expect_no_err(err, "error waiting for daemon pods to be running on new nodes")
    expect_no_err(check_daemon_status(f, apps, DS_NAME))

    by("Update the node label to green, and wait for daemons to be unscheduled")
    node_selector[DAEMONSET_COLOR_LABEL] = "green"
    green_node, err = set_daemon_set_node_labels(c, node.metadata.name, node_selector)
    expect_no_err(err, "error removing labels on node")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_no_nodes(f, ds))
    expect_no_err(err, "error waiting for daemon pod to not be running on nodes")

    by("Update DaemonSet node selector to green, and change its update strategy to "
       "RollingUpdate")
    patch = ('{"spec":{"template":{"spec":{"nodeSelector":{"%s":"%s"}}},"updateStrategy":'
             '{"type":"RollingUpdate"}}}' % (DAEMONSET_COLOR_LABEL,
                                             green_node.metadata.labels[DAEMONSET_COLOR_LABEL]))
    ds = expect_no_error(apps.patch_namespaced_daemon_set, DS_NAME, ns, json.loads(patch),
                         explain="error patching daemon set")  # strategic merge patch
    daemon_set_labels, _ = separate_daemon_set_node_labels(green_node.metadata.labels)
    _have_len_1(daemon_set_labels)
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_daemon_pod_on_nodes(f, ds,
                                                               [green_node.metadata.name]))
    expect_no_err(err, "error waiting for daemon pods to be running on new nodes")
    expect_no_err(check_daemon_status(f, apps, DS_NAME))


# Release: v1.10
# Testname: DaemonSet-FailedPodCreation
# Description: A conformant Kubernetes distribution MUST create new DaemonSet Pods when they
# fail.
@conformance("[sig-apps] Daemon set [Serial] should retry creating failed daemon pods "
             "[Conformance]")
def test_retry_creating_failed_daemon_pods(new_framework):
    daemon_set_describe(new_framework).run(_test_retry_creating_failed_daemon_pods)


def _test_retry_creating_failed_daemon_pods(t):
    c, apps, ns, f = t.c, t.apps, t.ns, t.f
    label = {DAEMONSET_NAME_LABEL: DS_NAME}

    by('Creating a simple DaemonSet "%s"' % DS_NAME)
    ds = create_daemon_set(apps, ns,
                           new_daemon_set(DS_NAME, IMAGE, label))

    by("Check that daemon pods launch on every node of the cluster.")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_all_nodes(f, ds))
    expect_no_err(err, "error waiting for daemon pod to start")
    expect_no_err(check_daemon_status(f, apps, DS_NAME))

    by("Set a daemon pod's phase to 'Failed', check that the daemon pod is revived.")
    pod_list = list_daemon_pods(c, ns, label)
    pod = pod_list.items[0]
    pod.metadata.resource_version = None  # pod.ResourceVersion = "" (omitted on the wire)
    pod.status.phase = "Failed"
    expect_no_error(c.replace_namespaced_pod_status, pod.metadata.name, ns, pod,
                    explain="error failing a daemon pod")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_all_nodes(f, ds))
    expect_no_err(err, "error waiting for daemon pod to revive")

    by("Wait for the failed daemon pod to be completely deleted.")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     wait_failed_daemon_pod_deleted(c, pod))
    expect_no_err(err, "error waiting for the failed daemon pod to be completely deleted")


# Release: v1.10
# Testname: DaemonSet-RollingUpdate
# Description: A conformant Kubernetes distribution MUST support DaemonSet RollingUpdates.
@conformance("[sig-apps] Daemon set [Serial] should update pod when spec was updated and "
             "update strategy is RollingUpdate [Conformance]")
def test_rolling_update(new_framework):
    daemon_set_describe(new_framework).run(_test_rolling_update)


def _expect_revision(history, revision):
    """gomega.Expect(cur.Revision).To(gomega.Equal(int64(revision)))"""
    if history.revision != revision:
        fail("Expected\n    <int64>: %s\nto equal\n    <int64>: %d", history.revision, revision)


def _test_rolling_update(t):
    c, apps, ns, f = t.c, t.apps, t.ns, t.f
    label = {DAEMONSET_NAME_LABEL: DS_NAME}

    logf("Creating simple daemon set %s", DS_NAME)
    ds = new_daemon_set(DS_NAME, IMAGE, label)
    ds.spec.update_strategy = client.V1DaemonSetUpdateStrategy(type="RollingUpdate")
    ds = create_daemon_set(apps, ns, ds)

    by("Check that daemon pods launch on every node of the cluster.")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_all_nodes(f, ds))
    expect_no_err(err, "error waiting for daemon pod to start")

    # Check history and labels
    ds = expect_no_error(apps.read_namespaced_daemon_set, ds.metadata.name, ns)
    wait_for_history_created(apps, ns, label, 1)
    cur = cur_history(list_daemon_histories(apps, f.api_client, ns, label), ds)
    hash_ = (cur.metadata.labels or {}).get(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, "")
    _expect_revision(cur, 1)
    check_daemon_set_pods_labels(list_daemon_pods(c, ns, label), hash_)

    by("Update daemon pods image.")
    patch = get_daemon_set_image_patch(ds.spec.template.spec.containers[0].name, AGNHOST)
    ds = expect_no_error(apps.patch_namespaced_daemon_set, DS_NAME, ns, json.loads(patch))

    # Time to complete the rolling upgrade is proportional to the number of nodes in the
    # cluster. Get the number of nodes, and set the timeout appropriately.
    nodes = expect_no_error(c.list_node)
    node_count = len(nodes.items)
    retry_timeout = DS_RETRY_TIMEOUT + node_count * 30

    by("Check that daemon pods images are updated.")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, retry_timeout, True,
                                     check_daemon_pods_image_and_availability(c, ds, AGNHOST, 1))
    expect_no_err(err)

    by("Check that daemon pods are still running on every node of the cluster.")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_all_nodes(f, ds))
    expect_no_err(err, "error waiting for daemon pod to start")

    # Check history and labels
    ds = expect_no_error(apps.read_namespaced_daemon_set, ds.metadata.name, ns)
    wait_for_history_created(apps, ns, label, 2)
    cur = cur_history(list_daemon_histories(apps, f.api_client, ns, label), ds)
    hash_ = (cur.metadata.labels or {}).get(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, "")
    _expect_revision(cur, 2)
    check_daemon_set_pods_labels(list_daemon_pods(c, ns, label), hash_)


# Release: v1.10
# Testname: DaemonSet-Rollback
# Description: A conformant Kubernetes distribution MUST support automated, minimally
# disruptive rollback of updates to a DaemonSet.
@conformance("[sig-apps] Daemon set [Serial] should rollback without unnecessary restarts "
             "[Conformance]")
def test_rollback_without_unnecessary_restarts(new_framework):
    daemon_set_describe(new_framework).run(_test_rollback_without_unnecessary_restarts)


def _test_rollback_without_unnecessary_restarts(t):
    c, apps, ns, f = t.c, t.apps, t.ns, t.f
    schedulable_nodes, err = get_ready_schedulable_nodes(c)
    expect_no_err(err)
    if not len(schedulable_nodes.items) > 1:
        fail("Conformance test suite needs a cluster with at least 2 nodes.\nExpected\n    "
             "<int>: %d\nto be >\n    <int>: 1", len(schedulable_nodes.items))
    logf("Create a RollingUpdate DaemonSet")
    label = {DAEMONSET_NAME_LABEL: DS_NAME}
    ds = new_daemon_set(DS_NAME, IMAGE, label)
    ds.spec.update_strategy = client.V1DaemonSetUpdateStrategy(type="RollingUpdate")
    ds = create_daemon_set(apps, ns, ds)

    logf("Check that daemon pods launch on every node of the cluster")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_all_nodes(f, ds))
    expect_no_err(err, "error waiting for daemon pod to start")

    logf("Update the DaemonSet to trigger a rollout")
    # We use a nonexistent image here, so that we make sure it won't finish
    new_image = "foo:non-existent"

    def set_new_image(update):
        update.spec.template.spec.containers[0].image = new_image

    new_ds, err = update_daemon_set_with_retries(apps, ns, ds.metadata.name, set_new_image)
    expect_no_err(err)

    # Make sure we're in the middle of a rollout
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_at_least_one_new_pod(c, ns, label, new_image))
    expect_no_err(err)

    pods = list_daemon_pods(c, ns, label)
    existing_pods, new_pods = [], []
    for pod in pods.items:
        image = pod.spec.containers[0].image
        if image == ds.spec.template.spec.containers[0].image:
            existing_pods.append(pod)
        elif image == new_ds.spec.template.spec.containers[0].image:
            new_pods.append(pod)
        else:
            fail("unexpected pod found, image = %s", image)
    schedulable_nodes, err = get_ready_schedulable_nodes(c)
    expect_no_err(err)
    if len(schedulable_nodes.items) < 2:
        if existing_pods:
            fail("Expected\n    %s\nto be empty", [p.metadata.name for p in existing_pods])
    elif not existing_pods:
        fail("Expected\n    <[]*v1.Pod | len:0>: []\nnot to be empty")
    if not new_pods:
        fail("Expected\n    <[]*v1.Pod | len:0>: []\nnot to be empty")

    logf("Roll back the DaemonSet before rollout is complete")

    def set_old_image(update):
        update.spec.template.spec.containers[0].image = IMAGE

    rollback_ds, err = update_daemon_set_with_retries(apps, ns, ds.metadata.name,
                                                      set_old_image)
    expect_no_err(err)

    logf("Make sure DaemonSet rollback is complete")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_daemon_pods_image_and_availability(
                                         c, rollback_ds, IMAGE, 1))
    expect_no_err(err)

    # After rollback is done, compare current pods with previous old pods during rollout, to
    # make sure they're not restarted
    pods = list_daemon_pods(c, ns, label)
    rollback_pods = {pod.metadata.name for pod in pods.items}
    for pod in existing_pods:
        if pod.metadata.name not in rollback_pods:
            fail("unexpected pod %s be restarted", pod.metadata.name)


# Release: v1.22
# Testname: DaemonSet, list and delete a collection of DaemonSets
# Description: When a DaemonSet is created it MUST succeed. It MUST succeed when listing
# DaemonSets via a label selector. It MUST succeed when deleting the DaemonSet via
# deleteCollection.
@conformance("[sig-apps] Daemon set [Serial] should list and delete a collection of "
             "DaemonSets [Conformance]")
def test_list_and_delete_collection(new_framework):
    daemon_set_describe(new_framework).run(_test_list_and_delete_collection)


def _test_list_and_delete_collection(t):
    apps, ns, f = t.apps, t.ns, t.f
    label = {DAEMONSET_NAME_LABEL: DS_NAME}
    label_selector = selector_from_set(label)
    one = 1

    by('Creating simple DaemonSet "%s"' % DS_NAME)
    test_daemonset = create_daemon_set(apps, ns,
                                       new_daemon_set_with_label(DS_NAME, IMAGE, label))

    by("Check that daemon pods launch on every node of the cluster.")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_all_nodes(f, test_daemonset))
    expect_no_err(err, "error waiting for daemon pod to start")
    expect_no_err(check_daemon_status(f, apps, DS_NAME))

    by("listing all DaemonSets")
    ds_list = expect_no_error(apps.list_daemon_set_for_all_namespaces,
                              label_selector=label_selector, explain="failed to list Daemon Sets")
    if len(ds_list.items) != 1:
        fail("filtered list wasn't found\nExpected\n    <[]v1.DaemonSet | len:%d>\nto have "
             "length 1", len(ds_list.items))

    by("DeleteCollection of the DaemonSets")
    expect_no_error(apps.delete_collection_namespaced_daemon_set, ns,
                    label_selector=label_selector,
                    body=client.V1DeleteOptions(grace_period_seconds=one),
                    explain="failed to delete DaemonSets")

    by("Verify that ReplicaSets have been deleted")
    ds_list = expect_no_error(apps.list_daemon_set_for_all_namespaces,
                              label_selector=label_selector, explain="failed to list DaemonSets")
    if ds_list.items:
        fail("filtered list should have no daemonset\nExpected\n    %s\nto be empty",
             [d.metadata.name for d in ds_list.items])


# Release: v1.22
# Testname: DaemonSet, status sub-resource
# Description: When a DaemonSet is created it MUST succeed. Attempt to read, update and patch
# its status sub-resource; all mutating sub-resource operations MUST be visible to subsequent
# reads.
@conformance("[sig-apps] Daemon set [Serial] should verify changes to a daemon set status "
             "[Conformance]")
def test_verify_daemon_set_status(new_framework):
    daemon_set_describe(new_framework).run(_test_verify_daemon_set_status)


# json.Marshal(appsv1.DaemonSet{Status: {Conditions: [{Type: "StatusPatched", Status:
# "True"}]}}): every struct and non-omitempty field of the otherwise empty DaemonSet.
STATUS_PATCH_PAYLOAD = (
    '{"metadata":{"creationTimestamp":null},"spec":{"selector":null,"template":{"metadata":'
    '{"creationTimestamp":null},"spec":{"containers":null}},"updateStrategy":{}},"status":'
    '{"currentNumberScheduled":0,"numberMisscheduled":0,"desiredNumberScheduled":0,'
    '"numberReady":0,"conditions":[{"type":"StatusPatched","status":"True",'
    '"lastTransitionTime":null}]}}')


def _test_verify_daemon_set_status(t):
    apps, ns, f = t.apps, t.ns, t.f
    label = {DAEMONSET_NAME_LABEL: DS_NAME}
    label_selector = selector_from_set(label)

    ds_list = expect_no_error(apps.list_daemon_set_for_all_namespaces,
                              label_selector=label_selector, explain="failed to list Daemon Sets")

    by('Creating simple DaemonSet "%s"' % DS_NAME)
    test_daemonset = create_daemon_set(apps, ns,
                                       new_daemon_set_with_label(DS_NAME, IMAGE, label))

    by("Check that daemon pods launch on every node of the cluster.")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_all_nodes(f, test_daemonset))
    expect_no_err(err, "error waiting for daemon pod to start")
    expect_no_err(check_daemon_status(f, apps, DS_NAME))

    by("Getting /status")
    # f.DynamicClient.Resource(daemonsets).Namespace(ns).Get(ctx, dsName, {}, "status")
    ds_status_unstructured = expect_no_error(
        raw_call, f.api_client, "GET",
        "/apis/apps/v1/namespaces/%s/daemonsets/%s/status" % (ns, DS_NAME),
        explain="Failed to fetch the status of daemon set %s in namespace %s" % (DS_NAME, ns))
    ds_status = to_model(ds_status_unstructured, "V1DaemonSet")
    logf("Daemon Set %s has Conditions: %s", DS_NAME,
         _sanitize(ds_status.status.conditions if ds_status.status else None))

    by("updating the DaemonSet Status")
    updated = []

    def update():
        status_to_update = expect_no_error(apps.read_namespaced_daemon_set, DS_NAME, ns,
                                           explain="Unable to retrieve daemon set %s" % DS_NAME)
        if status_to_update.status is None:
            status_to_update.status = client.V1DaemonSetStatus(
                current_number_scheduled=0, desired_number_scheduled=0,
                number_misscheduled=0, number_ready=0)
        status_to_update.status.conditions = (status_to_update.status.conditions or []) + [
            client.V1DaemonSetCondition(type="StatusUpdate", status="True", reason="E2E",
                                        message="Set from e2e test")]
        updated.append(apps.replace_namespaced_daemon_set_status(DS_NAME, ns,
                                                                 status_to_update))
        return updated[-1]

    expect_no_error(retry_on_conflict, update, explain="Failed to update status.")
    logf("updatedStatus.Conditions: %s", _sanitize(updated[-1].status.conditions))

    def matches(ds_obj):
        return (ds_obj.metadata.name == test_daemonset.metadata.name and
                ds_obj.metadata.namespace == test_daemonset.metadata.namespace and
                (ds_obj.metadata.labels or {}).get(DAEMONSET_NAME_LABEL) == DS_NAME)

    def observed_other(event):
        obj = event.get("object")
        kind = type(obj).__name__ if obj is not None else "<nil>"
        logf("Observed %s event: %s", kind, event["type"])

    def make_condition(is_wanted):
        def condition(event):
            if _is_daemon_set(event):
                ds_obj = event["object"]
                conditions = (ds_obj.status.conditions if ds_obj.status else None) or []
                found = matches(ds_obj)
                if not found:
                    logf("Observed daemon set %s in namespace %s with annotations: %s & "
                         "Conditions: %s", ds_obj.metadata.name, ds_obj.metadata.namespace,
                         ds_obj.metadata.annotations, _sanitize(conditions))
                    return False, None
                for cond in conditions:
                    if is_wanted(cond):
                        logf("Found daemon set %s in namespace %s with labels: %s annotations: "
                             "%s & Conditions: %s", ds_obj.metadata.name,
                             ds_obj.metadata.namespace, ds_obj.metadata.labels,
                             ds_obj.metadata.annotations, _sanitize(conditions))
                        return found, None
                    logf("Observed daemon set %s in namespace %s with annotations: %s & "
                         "Conditions: %s", ds_obj.metadata.name, ds_obj.metadata.namespace,
                         ds_obj.metadata.annotations, _sanitize(conditions))
            observed_other(event)
            return False, None
        return condition

    by("watching for the daemon set status to be updated")
    _, err = watch_until(DS_RETRY_TIMEOUT, ds_list.metadata.resource_version,
                         apps.list_namespaced_daemon_set, ns, label_selector=label_selector,
                         conditions=[make_condition(
                             lambda cond: cond.type == "StatusUpdate" and cond.reason == "E2E"
                             and cond.message == "Set from e2e test")])
    if err is not None:
        fail("failed to locate daemon set %s in namespace %s: %s",
             test_daemonset.metadata.name, ns, err)
    logf("Daemon set %s has an updated status", DS_NAME)

    by("patching the DaemonSet Status")
    expect_no_error(raw_call, f.api_client, "PATCH",
                    "/apis/apps/v1/namespaces/%s/daemonsets/%s/status" % (ns, DS_NAME),
                    body=json.loads(STATUS_PATCH_PAYLOAD),
                    headers={"Content-Type": "application/merge-patch+json"},
                    response_type="V1DaemonSet", explain="Failed to patch daemon set status")

    by("watching for the daemon set status to be patched")
    _, err = watch_until(DS_RETRY_TIMEOUT, ds_list.metadata.resource_version,
                         apps.list_namespaced_daemon_set, ns, label_selector=label_selector,
                         conditions=[make_condition(lambda cond: cond.type == "StatusPatched")])
    if err is not None:
        fail("failed to locate daemon set %s in namespace %s: %s",
             test_daemonset.metadata.name, ns, err)
    logf("Daemon set %s has a patched status", DS_NAME)
