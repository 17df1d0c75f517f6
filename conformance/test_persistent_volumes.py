"""Ports of the PersistentVolumes "CSI Conformance" [Conformance] tests of
test/e2e/storage/persistent_volumes.go (kubernetes/kubernetes): "should run through the
lifecycle of a PV and a PVC" and "should apply changes to a pv/pvc status", with the
SIGDescribe("PersistentVolumes") BeforeEach (the volume selector labels) and the "CSI
Conformance" AfterEach (PVPVCMapCleanup). The test/e2e/framework/pv helpers and the core/v1
PV/PVC clients are in e2e_pv.py.

Upstream read: persistent_volumes.go as stored at kubernetes/kubernetes@a1886235. That
revision's two tests carry resource-version checks (apimachineryutils.HaveValidResourceVersion
on the listed PV and PVC, resourceversion.CompareResourceVersion after the patches) which
may postdate v1.32; they are kept, as test_podtemplates.py keeps them (they only add
assertions).

They need only shepherd-apiserver: core/v1 PersistentVolumes and PersistentVolumeClaims
with their status subresources. No pod runs and no claim has to bind: the claims name the
StorageClass <namespace>, which does not exist, and stay Pending (the status test accepts
Pending or Bound for the claim and Available, Bound or Pending for the volume). The
framework is NewDefaultFramework("pv") with NamespacePodSecurityLevel privileged.

Images: none.

Go-only details: the lifecycle test builds a storagev1.CSIDriver object and only uses its
name (it is never created), so only the name ("inline-driver-<uuid>") is made here.
``runtime.DefaultUnstructuredConverter.FromUnstructured`` of the dynamic client's answer is
the decoding of its JSON into the model. Gomega's failure texts are approximated by the
assertion messages (upstream's explanation strings are kept verbatim).
"""

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_batch import decode
from e2e_framework import (by, compare_resource_version, conformance, describe_error,
                           expect_valid_resource_version, fail, logf, new_uuid,
                           retry_on_conflict, selector_from_set)
from e2e_pv import (VOLUME_SELECTOR_KEY, PersistentVolumeClaimConfig, PersistentVolumeConfig,
                    create_pvs_pvcs, eventually_state, persistent_volume_claims,
                    persistent_volumes, pv_pvc_map_cleanup)

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage

STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"  # types.StrategicMergePatchType
MERGE_PATCH = "application/merge-patch+json"                      # types.MergePatchType


def expect_no_error(err, explain, *args):
    """framework.ExpectNoError(err, explain, args...) for an error text."""
    if err is not None:
        fail("%s: %s", explain % args if args else explain, err)


def call(fn, *args, explain, explain_args=(), **kwargs):
    """A client call followed by framework.ExpectNoError(err, explain, explain_args...)."""
    try:
        return fn(*args, **kwargs)
    except ApiException as err:
        error = describe_error(err)
    expect_no_error(error, explain, *explain_args)


def expect_have_len(items, n):
    """gomega.Expect(items).To(gomega.HaveLen(n))"""
    items = items or []
    assert len(items) == n, "Expected\n    %r\nto have length %d (it has %d)" % (
        [getattr(i.metadata, "name", i) for i in items], n, len(items))


def expect_have_key_with_value(mapping, key, value, explain):
    """gomega.Expect(mapping).To(gomega.HaveKeyWithValue(key, value), explain)"""
    assert (mapping or {}).get(key) == value, "%s: Expected\n    %r\nto have {key: value} %r" % (
        explain, mapping, {key: value})


def expect_equal(actual, expected, explain=""):
    """gomega.Expect(actual).To(gomega.Equal(expected), explain)"""
    assert actual == expected, "%sExpected\n    %r\nto equal\n    %r" % (
        explain + ": " if explain else "", actual, expected)


def condition_type(condition):
    """conditionType: the gstruct element ID of a PersistentVolumeClaimCondition."""
    return condition.type or ""


def match_conditions(conditions, want_type, message_substring, reason_substring, explain):
    """gomega.Expect(conditions).To(gstruct.MatchElements(conditionType, gstruct.IgnoreExtras,
    gstruct.Elements{want_type: gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{
    "Message": gomega.ContainSubstring(message_substring), "Reason":
    gomega.ContainSubstring(reason_substring)})}), explain)"""
    conditions = conditions or []
    errors = []
    seen = set()
    for c in conditions:
        cid = condition_type(c)
        if cid in seen:
            errors.append("found duplicate element ID %s" % cid)
        seen.add(cid)
    found = [c for c in conditions if condition_type(c) == want_type]
    if not found:
        errors.append("missing expected element %s" % want_type)
    else:
        c = found[0]
        if message_substring not in (c.message or ""):
            errors.append("[%s]: Message: Expected\n    %r\nto contain substring\n    %r" % (
                want_type, c.message or "", message_substring))
        if reason_substring not in (c.reason or ""):
            errors.append("[%s]: Reason: Expected\n    %r\nto contain substring\n    %r" % (
                want_type, c.reason or "", reason_substring))
    assert not errors, "%s: %s\nconditions: %r" % (
        explain, "\n".join(errors), [c.to_dict() for c in conditions])


class PersistentVolumes:
    """SIGDescribe("PersistentVolumes") with its Describe("CSI Conformance"):
    NewDefaultFramework("pv"), privileged; the BeforeEach and the CSI Conformance
    AfterEach."""

    def __init__(self, new_framework):
        self.f = new_framework("pv", "privileged")
        self.pvols = {}
        self.claims = {}

    def before_each(self):
        self.c = self.f.api_client
        self.ns = self.f.namespace.metadata.name
        # Enforce binding only within test space via selector labels
        self.vol_label = {VOLUME_SELECTOR_KEY: self.ns}
        # metav1.SetAsLabelSelector(volLabel)
        self.selector = client.V1LabelSelector(match_labels=dict(self.vol_label))

    def after_each(self):
        logf("AfterEach: deleting %d PVCs and %d PVs...", len(self.claims or {}),
             len(self.pvols or {}))
        errs = pv_pvc_map_cleanup(self.c, self.ns, self.pvols, self.claims)
        if errs:
            fail("AfterEach: Failed to delete 1 or more PVs/PVCs. Errors: %s", "; ".join(errs))


def run(new_framework, body):
    d = PersistentVolumes(new_framework)
    d.before_each()
    try:
        body(d)
    finally:
        d.after_each()


def expected_deleted(what):
    """framework.MakeMatcher: no items is success, else 'Expected <what> to be deleted,
    found <first name>'."""

    def match(items):
        if not items:
            return None
        return "Expected %s to be deleted, found %s" % (what, '"%s"' % items[0].metadata.name)

    return match


#   Release: v1.29
#   Testname: PersistentVolumes(Claims), lifecycle
#   Description: Creating PV and PVC MUST succeed. Listing PVs with a labelSelector
#   MUST succeed. Listing PVCs in a namespace MUST succeed. Patching a PV MUST succeed
#   with its new label found. Patching a PVC MUST succeed with its new label found.
#   Reading a PV and PVC MUST succeed with required UID retrieved. Deleting a PVC
#   and PV MUST succeed and it MUST be confirmed. Replacement PV and PVC MUST be created.
#   Updating a PV MUST succeed with its new label found. Updating a PVC MUST succeed
#   with its new label found. Deleting the PVC and PV via deleteCollection MUST succeed
#   and it MUST be confirmed.
@conformance("[sig-storage] PersistentVolumes CSI Conformance should run through the "
             "lifecycle of a PV and a PVC [Conformance]")
def test_pv_pvc_lifecycle(new_framework):
    run(new_framework, _lifecycle)


def _lifecycle(d):
    c, ns = d.c, d.ns
    vol_label = d.vol_label
    vol_selector = selector_from_set(vol_label)  # volLabel.AsSelector().String()
    pv_client = persistent_volumes(c)
    pvc_client = persistent_volume_claims(c, ns)

    by("Creating initial PV and PVC")

    # Configure csiDriver: a storagev1.CSIDriver (labels {"e2e-test": f.UniqueName},
    # Persistent lifecycle mode, ReadWriteOnceWithFSType fsGroupPolicy) of which only the
    # name is used.
    csi_driver_name = "inline-driver-" + new_uuid()

    pv_name_prefix = ns + "-"
    pv_host_path_config = PersistentVolumeConfig(
        NamePrefix=pv_name_prefix,
        Labels=vol_label,
        StorageClassName=ns,
        PVSource={"csi": client.V1CSIPersistentVolumeSource(
            driver=csi_driver_name, volume_handle="e2e-conformance")})
    pvc_config = PersistentVolumeClaimConfig(StorageClassName=ns)

    num_pvs, num_pvcs = 1, 1
    d.pvols, d.claims, err = create_pvs_pvcs(num_pvs, num_pvcs, c, ns, pv_host_path_config,
                                             pvc_config)
    expect_no_error(err, "Failed to create the requested storage resources")

    by("Listing all PVs with the labelSelector: %s" % ('"%s"' % vol_selector))
    pv_list = call(pv_client.list, label_selector=vol_selector,
                   explain="Failed to list PVs with the labelSelector: %r",
                   explain_args=(vol_selector,))
    expect_have_len(pv_list.items, 1)
    initial_pv = pv_list.items[0]
    expect_valid_resource_version(initial_pv)

    by('Listing PVCs in namespace "%s"' % ns)
    pvc_list = call(pvc_client.list, explain="Failed to list PVCs with the labelSelector: %r",
                    explain_args=(vol_selector,))
    expect_have_len(pvc_list.items, 1)
    initial_pvc = pvc_list.items[0]
    expect_valid_resource_version(initial_pvc)

    by('Patching the PV "%s"' % initial_pv.metadata.name)
    payload = '{"metadata":{"labels":{"' + initial_pv.metadata.name + '":"patched"}}}'
    patched_pv = call(pv_client.patch, initial_pv.metadata.name, STRATEGIC_MERGE_PATCH, payload,
                      explain="Failed to patch PV %r", explain_args=(initial_pv.metadata.name,))
    expect_have_key_with_value(patched_pv.metadata.labels, patched_pv.metadata.name, "patched",
                               "Checking that patched label has been applied")
    assert compare_resource_version(initial_pv.metadata.resource_version,
                                    patched_pv.metadata.resource_version) == -1, \
        "patched object should have a larger resource version"

    by('Patching the PVC "%s"' % initial_pvc.metadata.name)
    payload = '{"metadata":{"labels":{"' + initial_pvc.metadata.name + '":"patched"}}}'
    patched_pvc = call(pvc_client.patch, initial_pvc.metadata.name, STRATEGIC_MERGE_PATCH,
                       payload, explain="Failed to patch PVC %r",
                       explain_args=(initial_pvc.metadata.name,))
    expect_have_key_with_value(patched_pvc.metadata.labels, patched_pvc.metadata.name,
                               "patched", "Checking that patched label has been applied")
    assert compare_resource_version(initial_pvc.metadata.resource_version,
                                    patched_pvc.metadata.resource_version) == -1, \
        "patched object should have a larger resource version"

    by('Getting PV "%s"' % patched_pv.metadata.name)
    retrieved_pv = call(pv_client.get, patched_pv.metadata.name, explain="Failed to get PV %r",
                        explain_args=(patched_pv.metadata.name,))
    expect_equal(retrieved_pv.metadata.uid, patched_pv.metadata.uid)

    by('Getting PVC "%s"' % patched_pvc.metadata.name)
    retrieved_pvc = call(pvc_client.get, patched_pvc.metadata.name,
                         explain="Failed to get PVC %r",
                         explain_args=(patched_pvc.metadata.name,))
    expect_equal(retrieved_pvc.metadata.uid, patched_pvc.metadata.uid)

    by('Deleting PVC "%s"' % retrieved_pvc.metadata.name)
    call(pvc_client.delete, retrieved_pvc.metadata.name, explain="Failed to delete PVC %r",
         explain_args=(retrieved_pvc.metadata.name,))

    by('Confirm deletion of PVC "%s"' % retrieved_pvc.metadata.name)
    err = eventually_state(lambda: pvc_client.list().items, expected_deleted("pvc"), 30,
                           "*storage.state", "failed to list pvc")
    expect_no_error(err, "Timeout while waiting to confirm PVC %r deletion",
                    retrieved_pvc.metadata.name)

    by('Deleting PV "%s"' % retrieved_pv.metadata.name)
    call(pv_client.delete, retrieved_pv.metadata.name, explain="Failed to delete PV %r",
         explain_args=(retrieved_pv.metadata.name,))

    by('Confirm deletion of PV "%s"' % retrieved_pv.metadata.name)
    err = eventually_state(lambda: pv_client.list(label_selector=vol_selector).items,
                           expected_deleted("pv"), 30, "*storage.state",
                           "failed to list pv")
    expect_no_error(err, "Timeout while waiting to confirm PV %r deletion",
                    retrieved_pv.metadata.name)

    by("Recreating another PV & PVC")
    d.pvols, d.claims, err = create_pvs_pvcs(num_pvs, num_pvcs, c, ns, pv_host_path_config,
                                             pvc_config)
    expect_no_error(err, "Failed to create the requested storage resources")

    pv_name = ""
    for key in d.pvols:
        pv_name = key

    pvc_name = ""
    for key in d.claims:
        pvc_name = key[1]

    by('Updating the PV "%s"' % pv_name)
    updated_pv = None
    pv_selector = selector_from_set({pv_name: "updated"})

    def update_pv():
        nonlocal updated_pv
        pv = call(pv_client.get, pv_name, explain="Unable to get PV %r", explain_args=(pv_name,))
        pv.metadata.labels[pv_name] = "updated"
        updated_pv = pv_client.update(pv)

    try:
        retry_on_conflict(update_pv)
    except ApiException as e:
        expect_no_error(describe_error(e), "failed to update PV %r", pv_name)
    expect_have_key_with_value(updated_pv.metadata.labels, updated_pv.metadata.name, "updated",
                               "Checking that updated label has been applied")

    by('Updating the PVC "%s"' % pvc_name)
    updated_pvc = None
    pvc_selector = selector_from_set({pvc_name: "updated"})

    def update_pvc():
        nonlocal updated_pvc
        pvc = call(pvc_client.get, pvc_name, explain="Unable to get PVC %r",
                   explain_args=(pvc_name,))
        pvc.metadata.labels = {pvc_name: "updated"}
        updated_pvc = pvc_client.update(pvc)

    try:
        retry_on_conflict(update_pvc)
    except ApiException as e:
        expect_no_error(describe_error(e), "failed to update PVC %r", pvc_name)
    expect_have_key_with_value(updated_pvc.metadata.labels, updated_pvc.metadata.name,
                               "updated", "Checking that updated label has been applied")

    by('Listing PVCs in all namespaces with the labelSelector: "%s"' % pvc_selector)
    pvc_list = call(persistent_volume_claims(c, "").list, label_selector=pvc_selector,
                    explain="Failed to list PVCs in all namespaces with the labelSelector: %r",
                    explain_args=(pvc_selector,))
    expect_have_len(pvc_list.items, 1)

    by('Deleting PVC "%s" via DeleteCollection' % pvc_name)
    call(pvc_client.delete_collection, label_selector=pvc_selector,
         explain="Failed to delete PVC %r", explain_args=(retrieved_pvc.metadata.name,))

    by('Confirm deletion of PVC "%s"' % pvc_name)
    err = eventually_state(lambda: pvc_client.list(label_selector=pvc_selector).items,
                           expected_deleted("pvc"), 30, "*storage.state",
                           "failed to list pvc")
    expect_no_error(err, "Timeout while waiting to confirm PVC %r deletion", pvc_name)

    by('Deleting PV "%s" via DeleteCollection' % pv_name)
    # (upstream's explanation names the PVC: kept verbatim)
    call(pv_client.delete_collection, label_selector=pv_selector,
         explain="Failed to delete PV %r", explain_args=(retrieved_pvc.metadata.name,))

    by('Confirm deletion of PV "%s"' % pv_name)
    err = eventually_state(lambda: pv_client.list(label_selector=pv_selector).items,
                           expected_deleted("pv"), 30, "*storage.state",
                           "failed to list pv")
    expect_no_error(err, "Timeout while waiting to confirm PV %r deletion",
                    retrieved_pv.metadata.name)


#   Release: v1.29
#   Testname: PersistentVolumes(Claims), apply changes to a pv/pvc status
#   Description: Creating PV and PVC MUST succeed. Listing PVs with a labelSelector
#    MUST succeed. Listing PVCs in a namespace MUST succeed. Reading PVC status MUST
#    succeed with a valid phase found. Reading PV status MUST succeed with a valid
#    phase found. Patching the PVC status MUST succeed with its new condition found.
#    Patching the PV status MUST succeed with the new reason/message found. Updating
#    the PVC status MUST succeed with its new condition found. Updating the PV status
#    MUST succeed with the new reason/message found.
@conformance("[sig-storage] PersistentVolumes CSI Conformance should apply changes to a "
             "pv/pvc status [Conformance]")
def test_pv_pvc_status(new_framework):
    run(new_framework, _status)


def _status(d):
    c, ns = d.c, d.ns
    vol_selector = selector_from_set(d.vol_label)
    pv_client = persistent_volumes(c)
    pvc_client = persistent_volume_claims(c, ns)

    by("Creating initial PV and PVC")

    pv_host_path_config = PersistentVolumeConfig(
        NamePrefix=ns + "-",
        Labels=d.vol_label,
        StorageClassName=ns,
        PVSource={"csi": client.V1CSIPersistentVolumeSource(
            driver="e2e-driver-" + new_uuid(), volume_handle="e2e-status-conformance")})

    pvc_config = PersistentVolumeClaimConfig(StorageClassName=ns)

    num_pvs, num_pvcs = 1, 1
    d.pvols, d.claims, err = create_pvs_pvcs(num_pvs, num_pvcs, c, ns, pv_host_path_config,
                                             pvc_config)
    expect_no_error(err, "Failed to create the requested storage resources")

    by("Listing all PVs with the labelSelector: %s" % ('"%s"' % vol_selector))
    pv_list = call(pv_client.list, label_selector=vol_selector,
                   explain="Failed to list PVs with the labelSelector: %r",
                   explain_args=(vol_selector,))
    expect_have_len(pv_list.items, 1)
    initial_pv = pv_list.items[0]

    by('Listing PVCs in namespace "%s"' % ns)
    pvc_list = call(pvc_client.list, explain="Failed to list PVCs with the labelSelector: %r",
                    explain_args=(vol_selector,))
    expect_have_len(pvc_list.items, 1)
    initial_pvc = pvc_list.items[0]

    by('Reading "%s" Status' % initial_pvc.metadata.name)
    # f.DynamicClient.Resource({"", "v1", "persistentvolumeclaims"}).Namespace(ns).Get(ctx,
    # name, metav1.GetOptions{}, "status")
    pvc_unstructured = call(pvc_client.get_unstructured, initial_pvc.metadata.name, "status",
                            explain="Failed to fetch the status of PVC %s in namespace %s",
                            explain_args=(initial_pvc.metadata.name, ns))
    retrieved_pvc = _from_unstructured(pvc_unstructured, "V1PersistentVolumeClaim",
                                       initial_pv.metadata.name)
    phase = (retrieved_pvc.status.phase if retrieved_pvc.status else None) or ""
    assert phase in ("Pending", "Bound"), (
        "Checking that the PVC status has been read: Expected\n    %r\nto equal \"Pending\" "
        "or \"Bound\"" % phase)

    by('Reading "%s" Status' % initial_pv.metadata.name)
    pv_unstructured = call(pv_client.get_unstructured, initial_pv.metadata.name, "status",
                           explain="Failed to fetch the status of PV %s in namespace %s",
                           explain_args=(initial_pv.metadata.name, ns))
    retrieved_pv = _from_unstructured(pv_unstructured, "V1PersistentVolume",
                                      initial_pv.metadata.name)
    phase = (retrieved_pv.status.phase if retrieved_pv.status else None) or ""
    assert phase in ("Available", "Bound", "Pending"), (
        "Checking that the PV status has been read: Expected\n    %r\nto equal \"Available\", "
        "\"Bound\" or \"Pending\"" % phase)

    by('Patching "%s" Status' % initial_pvc.metadata.name)
    payload = ('{"status":{"conditions":[{"type":"StatusPatched","status":"True", '
               '"reason":"E2E patchedStatus", "message":"Set from e2e test"}]}}')

    patched_pvc = call(pvc_client.patch, initial_pvc.metadata.name, MERGE_PATCH, payload,
                       "status", explain="Failed to patch status.")

    match_conditions(patched_pvc.status.conditions if patched_pvc.status else None,
                     "StatusPatched", "Set from e2e test", "E2E patchedStatus",
                     "Checking that patched status has been applied")

    by('Patching "%s" Status' % retrieved_pv.metadata.name)
    payload = '{"status":{"message": "StatusPatched", "reason": "E2E patchStatus"}}'

    patched_pv = call(pv_client.patch, retrieved_pv.metadata.name, MERGE_PATCH, payload,
                      "status", explain="Failed to patch %r status.",
                      explain_args=(retrieved_pv.metadata.name,))
    pv_status = patched_pv.status or client.V1PersistentVolumeStatus()
    expect_equal(pv_status.reason or "", "E2E patchStatus",
                 "Checking that patched status has been applied")
    expect_equal(pv_status.message or "", "StatusPatched",
                 "Checking that patched status has been applied")

    by('Updating "%s" Status' % patched_pvc.metadata.name)
    updated_pvc = None

    def update_pvc_status():
        nonlocal updated_pvc
        status_to_update = call(pvc_client.get, patched_pvc.metadata.name,
                                explain="Unable to retrieve pvc %s",
                                explain_args=(patched_pvc.metadata.name,))
        if status_to_update.status is None:
            status_to_update.status = client.V1PersistentVolumeClaimStatus()
        status_to_update.status.conditions = list(status_to_update.status.conditions or []) + [
            client.V1PersistentVolumeClaimCondition(
                type="StatusUpdated", status="True", reason="E2E updateStatus",
                message="Set from e2e test")]
        updated_pvc = pvc_client.update_status(status_to_update)

    try:
        retry_on_conflict(update_pvc_status)
    except ApiException as e:
        expect_no_error(describe_error(e), "Failed to update status.")
    match_conditions(updated_pvc.status.conditions if updated_pvc.status else None,
                     "StatusUpdated", "Set from e2e test", "E2E updateStatus",
                     "Checking that updated status has been applied")

    by('Updating "%s" Status' % patched_pv.metadata.name)
    updated_pv = None

    def update_pv_status():
        nonlocal updated_pv
        pv_to_update = call(pv_client.get, patched_pv.metadata.name,
                            explain="Unable to retrieve pv %s",
                            explain_args=(patched_pv.metadata.name,))
        if pv_to_update.status is None:
            pv_to_update.status = client.V1PersistentVolumeStatus()
        pv_to_update.status.reason = "E2E updateStatus"
        pv_to_update.status.message = "StatusUpdated"
        updated_pv = pv_client.update_status(pv_to_update)

    try:
        retry_on_conflict(update_pv_status)
    except ApiException as e:
        expect_no_error(describe_error(e), "Failed to update status.")
    pv_status = updated_pv.status or client.V1PersistentVolumeStatus()
    expect_equal(pv_status.reason or "", "E2E updateStatus",
                 "Checking that updated status has been applied")
    expect_equal(pv_status.message or "", "StatusUpdated",
                 "Checking that updated status has been applied")


def _from_unstructured(obj, model_name, pv_name):
    """runtime.DefaultUnstructuredConverter.FromUnstructured(content, &typed), then
    framework.ExpectNoError(err, "Failed to retrieve %q status.", initialPV.Name) (upstream
    names the PV in both conversions' explanation)."""
    try:
        return decode(obj, model_name)
    except Exception as err:  # a conversion error
        fail("Failed to retrieve %r status.: %s", pv_name, err)
