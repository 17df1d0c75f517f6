"""Ports of the DisruptionController [Conformance] tests of test/e2e/apps/disruption.go
(kubernetes/kubernetes, v1.32): "Listing PodDisruptionBudgets for all namespaces should list
and delete a collection of PodDisruptionBudgets", "should create a PodDisruptionBudget",
"should observe PodDisruptionBudget status updated", "should update/patch
PodDisruptionBudget status" and "should block an eviction until the PDB is updated to allow
it". The file's helpers (createPDBMinAvailableOrDie, waitForPodsOrDie, locateRunningPod,
...) and the policy/v1 client are in e2e_disruption.py, which also names the upstream
revision read.

They need shepherd-apiserver's policy/v1 PodDisruptionBudgets (with status) and
pods/eviction, shepherd-controller-manager's disruption and ReplicaSet controllers, the
scheduler and the two nodes (conftest.py): the pods run for real.

Images: the pods and the ReplicaSet run imageutils.GetPauseImageName()
(registry.k8s.io/pause:3.10), the reference the nodes' offline pause image has
(PAUSE_IMAGE): no substitution. SIGDescribe("DisruptionController") sets
NamespacePodSecurityLevel privileged, for both frameworks of the "Listing" context.

Go-only details kept in spirit: ``json.Marshal`` of a typed PDB and
``jsonpatch.CreateMergePatch`` (for the merge patches the tests compute) are emulated by
e2e_disruption.go_json_marshal / create_merge_patch; the patches sent are the ones upstream
sends ({"spec":{"maxUnavailable":0,"minAvailable":null}} and {"status":{"disruptedPods":
null}}).
"""

import datetime
import json

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_disruption import (DEFAULT_LABELS, DEFAULT_NAME, TIMEOUT, create_merge_patch,
                            create_pdb_min_available_or_die, create_pods_or_die,
                            create_replica_set_or_die, delete_pdb_collection, delete_pdb_or_die,
                            evict_v1, expect_match_error_disruption_budget,
                            get_pdb_status_or_die, go_json_marshal, int_or_string, list_pdbs,
                            locate_running_pod, new_eviction, patch_pdb_or_die, pdbs,
                            update_pdb_or_die, wait_for_pdb_to_observe_healthy_pods,
                            wait_for_pods_or_die)
from e2e_framework import (CONTEXT_DEADLINE, POLL, by, conformance, describe_error, fail,
                           go_deref, poll, selector_from_set, status_of)


def disruption_framework(new_framework):
    """SIGDescribe("DisruptionController"): NewDefaultFramework("disruption"),
    NamespacePodSecurityLevel privileged."""
    return new_framework("disruption", "privileged")


def expect_ok(err, explain="unexpected error"):
    """framework.ExpectNoError(err, explain) for the helpers' error texts."""
    if err is not None:
        fail("%s: %s", explain, err)


def go_error_text(err):
    """err.Error() of a client-go API error: the Status message."""
    if err is None:
        return "<nil>"
    return status_of(err).get("message") or describe_error(err)


def try_evict(api_client, ns, e):
    """err := cs.CoreV1().Pods(ns).EvictV1(ctx, e): the ApiException or None."""
    try:
        evict_v1(api_client, ns, e)
    except ApiException as err:
        return err
    return None


# Release : v1.21
# Testname: PodDisruptionBudget: list and delete collection
# Description: PodDisruptionBudget API must support list and deletecollection operations.
@conformance("[sig-apps] DisruptionController Listing PodDisruptionBudgets for all namespaces "
             "should list and delete a collection of PodDisruptionBudgets [Conformance]")
def test_pdb_list_and_delete_collection(new_framework):
    f = disruption_framework(new_framework)
    # ginkgo.Context("Listing PodDisruptionBudgets for all namespaces"):
    # NewDefaultFramework("disruption-2"), NamespacePodSecurityLevel privileged; its
    # BeforeEach runs after the outer framework's.
    another_framework = new_framework("disruption-2", "privileged")
    cs = f.api_client
    ns = f.namespace.metadata.name

    special_labels = {"foo_pdb": "bar_pdb"}
    label_selector = selector_from_set(special_labels)
    create_pdb_min_available_or_die(cs, ns, DEFAULT_NAME, 2, special_labels)
    create_pdb_min_available_or_die(cs, ns, "foo2", "1%", special_labels)
    create_pdb_min_available_or_die(another_framework.api_client,
                                    another_framework.namespace.metadata.name, "foo3", 2,
                                    special_labels)

    by("listing a collection of PDBs across all namespaces")
    list_pdbs(cs, "", label_selector, 3, [DEFAULT_NAME, "foo2", "foo3"])

    by("listing a collection of PDBs in namespace " + ns)
    list_pdbs(cs, ns, label_selector, 2, [DEFAULT_NAME, "foo2"])
    delete_pdb_collection(cs, ns)


# Release : v1.21
# Testname: PodDisruptionBudget: create, update, patch, and delete object
# Description: PodDisruptionBudget API must support create, update, patch, and delete
# operations.
@conformance("[sig-apps] DisruptionController should create a PodDisruptionBudget "
             "[Conformance]")
def test_pdb_create_update_patch_delete(new_framework):
    f = disruption_framework(new_framework)
    cs = f.api_client
    ns = f.namespace.metadata.name

    by("creating the pdb")
    create_pdb_min_available_or_die(cs, ns, DEFAULT_NAME, "1%", DEFAULT_LABELS)

    by("updating the pdb")

    def update(pdb):
        new_min_available = "2%"  # intstr.FromString("2%")
        pdb.spec.min_available = new_min_available
        return pdb

    updated_pdb = update_pdb_or_die(cs, ns, DEFAULT_NAME, update, "update")
    got = int_or_string(updated_pdb.spec.min_available)
    assert got == "2%", "Expected\n    %r\nto equal\n    %r" % (got, "2%")

    by("patching the pdb")

    def patch(old):
        new_bytes = json.dumps({"spec": {"minAvailable": "3%"}}, separators=(",", ":"))
        return new_bytes, None

    patched_pdb = patch_pdb_or_die(cs, ns, DEFAULT_NAME, patch)
    got = int_or_string(patched_pdb.spec.min_available)
    assert got == "3%", "Expected\n    %r\nto equal\n    %r" % (got, "3%")

    delete_pdb_or_die(cs, ns, DEFAULT_NAME)


# Release : v1.21
# Testname: PodDisruptionBudget: Status updates
# Description: Disruption controller MUST update the PDB status with how many disruptions
# are allowed.
@conformance("[sig-apps] DisruptionController should observe PodDisruptionBudget status "
             "updated [Conformance]")
def test_pdb_observe_status_updated(new_framework):
    f = disruption_framework(new_framework)
    cs = f.api_client
    ns = f.namespace.metadata.name

    create_pdb_min_available_or_die(cs, ns, DEFAULT_NAME, 1, DEFAULT_LABELS)

    create_pods_or_die(f.core, ns, 3)
    wait_for_pods_or_die(f.core, ns, 3)

    # Since disruptionAllowed starts out 0, if we see it ever become positive, that means
    # the controller is working.
    def condition():
        try:
            pdb = pdbs(cs, ns).get(DEFAULT_NAME)
        except ApiException as err:
            return False, describe_error(err)
        return ((pdb.status.disruptions_allowed if pdb.status else None) or 0) > 0, None

    err = poll(POLL, TIMEOUT, condition, immediate=True, timeout_error=CONTEXT_DEADLINE)
    expect_ok(err)


# Release : v1.21
# Testname: PodDisruptionBudget: update and patch status
# Description: PodDisruptionBudget API must support update and patch operations on status
# subresource.
@conformance("[sig-apps] DisruptionController should update/patch PodDisruptionBudget status "
             "[Conformance]")
def test_pdb_update_patch_status(new_framework):
    f = disruption_framework(new_framework)
    cs = f.api_client
    ns = f.namespace.metadata.name

    create_pdb_min_available_or_die(cs, ns, DEFAULT_NAME, 1, DEFAULT_LABELS)

    by("Updating PodDisruptionBudget status")
    # PDB status can be updated by both PDB controller and the status API. The test selects
    # `DisruptedPods` field to show immediate update via API. The pod has to exist,
    # otherwise wil be removed by the controller. Other fields may not reflect the change
    # from API.
    create_pods_or_die(f.core, ns, 1)
    wait_for_pods_or_die(f.core, ns, 1)
    pod, _ = locate_running_pod(f.core, ns)
    pod_name = go_deref(pod, "pod").metadata.name

    def update(old):
        old.status.disrupted_pods = {}
        # metav1.NewTime(time.Now())
        old.status.disrupted_pods[pod_name] = datetime.datetime.now(datetime.timezone.utc)
        return old

    update_pdb_or_die(cs, ns, DEFAULT_NAME, update, "update_status")
    # fetch again to make sure the update from API was effective
    updated = get_pdb_status_or_die(cs, ns, DEFAULT_NAME)
    disrupted = updated.status.disrupted_pods if updated.status else None
    assert pod_name in (disrupted or {}), \
        "Expecting the DisruptedPods have %s\nExpected\n    %s\nto have key\n    %s" % (
            pod_name, disrupted, pod_name)

    by("Patching PodDisruptionBudget status")

    def patch(old):
        old_bytes = go_json_marshal(cs, old)
        old.status.disrupted_pods = {}
        new_bytes = go_json_marshal(cs, old)
        return create_merge_patch(old_bytes, new_bytes)

    patched = patch_pdb_or_die(cs, ns, DEFAULT_NAME, patch, "status")
    disrupted = patched.status.disrupted_pods if patched.status else None
    assert not disrupted, \
        "Expecting the PodDisruptionBudget's be empty\nExpected\n    %s\nto be empty" % disrupted


# Release : v1.22
# Testname: PodDisruptionBudget: block an eviction until the PDB is updated to allow it
# Description: Eviction API must block an eviction until the PDB is updated to allow it
@conformance("[sig-apps] DisruptionController should block an eviction until the PDB is "
             "updated to allow it [Conformance]")
def test_pdb_block_eviction_until_updated(new_framework):
    f = disruption_framework(new_framework)
    cs = f.api_client
    ns = f.namespace.metadata.name
    apps = client.AppsV1Api(f.api_client)

    by("Creating a pdb that targets all three pods in a test replica set")
    create_pdb_min_available_or_die(cs, ns, DEFAULT_NAME, 3, DEFAULT_LABELS)
    create_replica_set_or_die(apps, ns, 3, False)

    by("First trying to evict a pod which shouldn't be evictable")
    # make sure that they are running and so would be evictable with a different pdb
    wait_for_pods_or_die(f.core, ns, 3)

    pod, err = locate_running_pod(f.core, ns)
    expect_ok(err)
    e = new_eviction(pod.metadata.name, ns)
    err = try_evict(cs, ns, e)
    expect_match_error_disruption_budget(
        err, "pod eviction should fail with DisruptionBudget cause. The error was \"%s\"\n"
        % go_error_text(err))

    by("Updating the pdb to allow a pod to be evicted")

    def update(pdb):
        new_min_available = 2  # intstr.FromInt32(2)
        pdb.spec.min_available = new_min_available
        return pdb

    update_pdb_or_die(cs, ns, DEFAULT_NAME, update, "update")

    by("Trying to evict the same pod we tried earlier which should now be evictable")
    wait_for_pods_or_die(f.core, ns, 3)
    wait_for_pdb_to_observe_healthy_pods(cs, ns, 3, 2)
    err = try_evict(cs, ns, e)
    expect_ok(describe_error(err) if err is not None else None)  # the eviction is now allowed

    by("Patching the pdb to disallow a pod to be evicted")

    def patch(old):
        old_data = go_json_marshal(cs, old)
        old.spec.min_available = None
        max_unavailable = 0  # intstr.FromInt32(0)
        old.spec.max_unavailable = max_unavailable
        new_data = go_json_marshal(cs, old)
        return create_merge_patch(old_data, new_data)

    patch_pdb_or_die(cs, ns, DEFAULT_NAME, patch)

    wait_for_pods_or_die(f.core, ns, 3)
    pod, err = locate_running_pod(f.core, ns)  # locate a new running pod
    expect_ok(err)
    e = new_eviction(pod.metadata.name, ns)
    err = try_evict(cs, ns, e)
    expect_match_error_disruption_budget(
        err, "pod eviction should fail with DisruptionBudget cause. The error was \"%s\"\n"
        % go_error_text(err))

    by("Deleting the pdb to allow a pod to be evicted")
    delete_pdb_or_die(cs, ns, DEFAULT_NAME)

    by("Trying to evict the same pod we tried earlier which should now be evictable")
    wait_for_pods_or_die(f.core, ns, 3)
    err = try_evict(cs, ns, e)
    expect_ok(describe_error(err) if err is not None else None)  # the eviction is now allowed
