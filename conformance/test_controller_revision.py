"""Port of the ControllerRevision [Conformance] test of test/e2e/apps/controller_revision.go
(kubernetes/kubernetes, v1.32), SIGDescribe("ControllerRevision", framework.WithSerial()):
"should manage the lifecycle of a ControllerRevision", with the Describe's BeforeEach and
AfterEach (the same as the DaemonSet Describe's). The helpers are in e2e_daemonset.py.

It needs shepherd-controller-manager's daemon set controller (which makes the revisions)
and garbage collector, the scheduler and the two nodes (conftest.py).

Substitutions:
* WebserverImage (imageutils.Httpd) becomes the pause image (registry.k8s.io/pause:3.10),
  a long-running image; nothing connects to the web server.
* hashAndNameForDaemonSet's controller.ComputeHash (FNV-32a over a go-spew dump of the Go
  struct) is emulated by e2e_daemonset.compute_hash (FNV-32a over the template's Go JSON):
  the hand-made revision gets another name and hash label than under the Go e2e binary
  (whose value differs from Shepherd's own template hash too). Upstream's hash happens to
  equal the one its controller computes for the patched template, so upstream's controller
  goes through its hash-collision path once (bumping status.collisionCount); with any other
  hash function the controller simply creates the new revision. Every assertion of the test
  holds either way and is kept.
"""

import json

from kubernetes import client

from e2e_daemonset import (CONTROLLER_REVISION_RETRY_PERIOD, CONTROLLER_REVISION_RETRY_TIMEOUT,
                           DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, DS_RETRY_PERIOD,
                           DS_RETRY_TIMEOUT, WEBSERVER, DaemonSetDescribe,
                           check_controller_revision_list_quantity, check_daemon_status,
                           check_running_on_all_nodes, create_daemon_set, expect_no_err,
                           hash_and_name_for_daemon_set, new_daemon_set_with_label,
                           poll_until_context_timeout)
from e2e_framework import (by, conformance, expect_no_error, fail, go_deref, logf,
                           rand_string, retry_on_conflict, selector_from_set)

IMAGE = WEBSERVER  # image := WebserverImage


def _have_key_with_value(labels, key, value, explain):
    """gomega.Expect(labels).To(gomega.HaveKeyWithValue(key, value), explain)"""
    if (labels or {}).get(key) != value or key not in (labels or {}):
        fail("%s\nExpected\n    %s\nto have {key: value}\n    %s", explain, labels,
             {key: value})


def _have_len(items, n, explain):
    """gomega.Expect(items).To(gomega.HaveLen(n), explain)"""
    if len(items) != n:
        fail("%s\nExpected\n    <len:%d>\nto have length %d", explain, len(items), n)


# Release: v1.25
# Testname: ControllerRevision, resource lifecycle
# Description: Creating a DaemonSet MUST succeed. Listing all ControllerRevisions with a label
# selector MUST find only one. After patching the ControllerRevision with a new label, the
# label MUST be found. Creating a new ControllerRevision for the DaemonSet MUST succeed.
# Listing the ControllerRevisions by label selector MUST find only two. Deleting a
# ControllerRevision MUST succeed. Listing the ControllerRevisions by label selector MUST
# find only one. After updating the ControllerRevision with a new label, the label MUST be
# found. Patching the DaemonSet MUST succeed. Listing the ControllerRevisions by label
# selector MUST find only two. Deleting a collection of ControllerRevision via a label
# selector MUST succeed. Listing the ControllerRevisions by label selector MUST find only
# one. The current ControllerRevision revision MUST be 3.
@conformance("[sig-apps] ControllerRevision [Serial] should manage the lifecycle of a "
             "ControllerRevision [Conformance]")
def test_controller_revision_lifecycle(new_framework):
    # SIGDescribe("ControllerRevision", framework.WithSerial()):
    # NewDefaultFramework("controllerrevisions"), NamespacePodSecurityLevel baseline.
    describe = DaemonSetDescribe(new_framework, "controllerrevisions")
    ds_name = "e2e-" + rand_string(5) + "-daemon-set"
    describe.run(lambda t: _test_controller_revision_lifecycle(t, ds_name))


def _test_controller_revision_lifecycle(t, ds_name):
    f, ns = t.f, t.ns
    cs_apps_v1 = t.apps

    ds_label = {"daemonset-name": ds_name}
    ds_label_selector = selector_from_set(ds_label)

    by('Creating DaemonSet "%s"' % ds_name)
    test_daemonset = create_daemon_set(cs_apps_v1, ns,
                                       new_daemon_set_with_label(ds_name, IMAGE, ds_label))

    by("Check that daemon pods launch on every node of the cluster.")
    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                     check_running_on_all_nodes(f, test_daemonset))
    expect_no_err(err, "error waiting for daemon pod to start")
    expect_no_err(check_daemon_status(f, cs_apps_v1, ds_name))

    by('Confirm DaemonSet "%s" successfully created with "%s" label' % (ds_name,
                                                                         ds_label_selector))
    ds_list = expect_no_error(cs_apps_v1.list_daemon_set_for_all_namespaces,
                              label_selector=ds_label_selector,
                              explain="failed to list Daemon Sets")
    _have_len(ds_list.items, 1, "filtered list wasn't found")

    ds = expect_no_error(cs_apps_v1.read_namespaced_daemon_set, ds_name, ns)

    # Listing across all namespaces to verify api endpoint:
    # listAppsV1ControllerRevisionForAllNamespaces
    by('Listing all ControllerRevisions with label "%s"' % ds_label_selector)
    revs = expect_no_error(cs_apps_v1.list_controller_revision_for_all_namespaces,
                           label_selector=ds_label_selector,
                           explain="Failed to list ControllerRevision")
    _have_len(revs.items, 1, "Failed to find any controllerRevisions")

    # Locate the current ControllerRevision from the list
    initial_revision = None

    rev = revs.items[0]
    orefs = rev.metadata.owner_references or []
    if not orefs:
        fail("runtime error: index out of range [0] with length 0 (rev.OwnerReferences[0])")
    oref = orefs[0]
    if oref.kind == "DaemonSet" and oref.uid == ds.metadata.uid:
        logf("Located ControllerRevision: %r", rev.metadata.name)
        initial_revision = expect_no_error(cs_apps_v1.read_namespaced_controller_revision,
                                           rev.metadata.name, ns,
                                           explain="failed to lookup ControllerRevision")
    initial_revision = go_deref(initial_revision, "initialRevision.Name")

    by('Patching ControllerRevision "%s"' % initial_revision.metadata.name)
    payload = '{"metadata":{"labels":{"' + initial_revision.metadata.name + '":"patched"}}}'
    patched_controller_revision = expect_no_error(
        cs_apps_v1.patch_namespaced_controller_revision, initial_revision.metadata.name, ns,
        json.loads(payload),  # strategic merge patch
        explain="failed to patch ControllerRevision %s in namespace %s" % (
            initial_revision.metadata.name, ns))
    _have_key_with_value(patched_controller_revision.metadata.labels,
                         initial_revision.metadata.name, "patched",
                         "Did not find 'patched' label for this ControllerRevision. Current "
                         "labels: %s" % patched_controller_revision.metadata.labels)
    logf("%s has been patched", patched_controller_revision.metadata.name)

    by("Create a new ControllerRevision")
    ds.spec.template.spec.termination_grace_period_seconds = 1
    new_hash, new_name = hash_and_name_for_daemon_set(ds)
    new_labels = dict(ds.spec.template.metadata.labels or {})  # labelsutil.CloneAndAddLabel
    new_labels[DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY] = new_hash
    new_revision = client.V1ControllerRevision(
        metadata=client.V1ObjectMeta(
            name=new_name, namespace=ds.metadata.namespace, labels=new_labels,
            annotations=ds.metadata.annotations,
            # metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))
            owner_references=[client.V1OwnerReference(
                api_version="apps/v1", kind="DaemonSet", name=ds.metadata.name,
                uid=ds.metadata.uid, block_owner_deletion=True, controller=True)]),
        data=initial_revision.data,
        revision=initial_revision.revision + 1)
    new_controller_revision = expect_no_error(
        cs_apps_v1.create_namespaced_controller_revision, ns, new_revision,
        explain="Failed to create ControllerRevision")
    logf("Created ControllerRevision: %s", new_controller_revision.metadata.name)

    by("Confirm that there are two ControllerRevisions")
    err = poll_until_context_timeout(CONTROLLER_REVISION_RETRY_PERIOD,
                                     CONTROLLER_REVISION_RETRY_TIMEOUT, True,
                                     check_controller_revision_list_quantity(
                                         f, cs_apps_v1, ds_label_selector, 2))
    expect_no_err(err, "failed to count required ControllerRevisions")

    by('Deleting ControllerRevision "%s"' % initial_revision.metadata.name)
    expect_no_error(cs_apps_v1.delete_namespaced_controller_revision,
                    initial_revision.metadata.name, ns, body=client.V1DeleteOptions(),
                    explain="Failed to delete ControllerRevision")

    by("Confirm that there is only one ControllerRevision")
    err = poll_until_context_timeout(CONTROLLER_REVISION_RETRY_PERIOD,
                                     CONTROLLER_REVISION_RETRY_TIMEOUT, True,
                                     check_controller_revision_list_quantity(
                                         f, cs_apps_v1, ds_label_selector, 1))
    expect_no_err(err, "failed to count required ControllerRevisions")

    # (upstream ignores this List's error; Items[0] of an empty list would panic)
    list_controller_revisions = cs_apps_v1.list_namespaced_controller_revision(ns)
    if not list_controller_revisions.items:
        fail("runtime error: index out of range [0] with length 0 "
             "(listControllerRevisions.Items[0])")
    current_controller_revision = list_controller_revisions.items[0]

    by('Updating ControllerRevision "%s"' % current_controller_revision.metadata.name)
    updated = []

    def update():
        updated_controller_revision = expect_no_error(
            cs_apps_v1.read_namespaced_controller_revision,
            current_controller_revision.metadata.name, ns,
            explain="Unable to get ControllerRevision %s" %
            current_controller_revision.metadata.name)
        if updated_controller_revision.metadata.labels is None:
            fail("assignment to entry in nil map (updatedControllerRevision.Labels)")
        updated_controller_revision.metadata.labels[
            current_controller_revision.metadata.name] = "updated"
        updated.append(cs_apps_v1.replace_namespaced_controller_revision(
            updated_controller_revision.metadata.name, ns, updated_controller_revision))
        return updated[-1]

    expect_no_error(retry_on_conflict, update,
                    explain="failed to update ControllerRevision in namespace: %s" % ns)
    updated_controller_revision = updated[-1]
    _have_key_with_value(updated_controller_revision.metadata.labels,
                         current_controller_revision.metadata.name, "updated",
                         "Did not find 'updated' label for this ControllerRevision. Current "
                         "labels: %s" % updated_controller_revision.metadata.labels)
    logf("%s has been updated", updated_controller_revision.metadata.name)

    by("Generate another ControllerRevision by patching the Daemonset")
    patch = ('{"spec":{"template":{"spec":{"terminationGracePeriodSeconds": %d}}},'
             '"updateStrategy":{"type":"RollingUpdate"}}' % 1)
    expect_no_error(t.apps.patch_namespaced_daemon_set,
                    ds_name, ns, json.loads(patch),  # strategic merge patch
                    explain="error patching daemon set")

    by("Confirm that there are two ControllerRevisions")
    err = poll_until_context_timeout(CONTROLLER_REVISION_RETRY_PERIOD,
                                     CONTROLLER_REVISION_RETRY_TIMEOUT, True,
                                     check_controller_revision_list_quantity(
                                         f, cs_apps_v1, ds_label_selector, 2))
    expect_no_err(err, "failed to count required ControllerRevisions")

    updated_label = {updated_controller_revision.metadata.name: "updated"}
    updated_label_selector = selector_from_set(updated_label)

    by("Removing a ControllerRevision via 'DeleteCollection' with labelSelector: \"%s\"" %
       updated_label_selector)
    expect_no_error(cs_apps_v1.delete_collection_namespaced_controller_revision, ns,
                    label_selector=updated_label_selector, body=client.V1DeleteOptions(),
                    explain="Failed to delete ControllerRevision")

    by("Confirm that there is only one ControllerRevision")
    err = poll_until_context_timeout(CONTROLLER_REVISION_RETRY_PERIOD,
                                     CONTROLLER_REVISION_RETRY_TIMEOUT, True,
                                     check_controller_revision_list_quantity(
                                         f, cs_apps_v1, ds_label_selector, 1))
    expect_no_err(err, "failed to count required ControllerRevisions")

    lst = expect_no_error(cs_apps_v1.list_namespaced_controller_revision, ns,
                          explain="failed to list ControllerRevision")
    if not lst.items:
        fail("runtime error: index out of range [0] with length 0 (list.Items[0])")
    if lst.items[0].revision != 3:
        fail("failed to find the expected revision for the Controller\nExpected\n    "
             "<int64>: %s\nto equal\n    <int64>: 3", lst.items[0].revision)
    logf("ControllerRevision %r has revision %d", lst.items[0].metadata.name,
         lst.items[0].revision)
