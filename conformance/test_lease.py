"""Port of test/e2e/common/node/lease.go (kubernetes/kubernetes), the [Conformance] test
"lease API should be available"."""

import pytest
import copy
import datetime

from kubernetes import client

from e2e_framework import (GO_ZERO_TIME, compare_resource_version, conformance,
                           expect_no_error, expect_valid_resource_version, fail, is_not_found,
                           object_diff, semantic_equal)
from kubernetes.client.rest import ApiException

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage


def at(seconds):
    """&metav1.MicroTime{Time: time.Time{}.Add(seconds * time.Second)}"""
    return GO_ZERO_TIME + datetime.timedelta(seconds=seconds)


def lease_spec(holder, duration, acquire, renew, transitions):
    return client.V1LeaseSpec(holder_identity=holder, lease_duration_seconds=duration,
                              acquire_time=at(acquire), renew_time=at(renew),
                              lease_transitions=transitions)


def two_way_merge_patch(old, new):
    """strategicpatch.CreateTwoWayMergePatch for JSON objects without patch-strategy lists
    (a changed list is replaced whole)."""
    patch = {}
    for key in set(old) | set(new):
        if key not in new:
            patch[key] = None
        elif key not in old:
            patch[key] = new[key]
        elif isinstance(old[key], dict) and isinstance(new[key], dict):
            sub = two_way_merge_patch(old[key], new[key])
            if sub:
                patch[key] = sub
        elif old[key] != new[key]:
            patch[key] = new[key]
    return patch


def get_patch_bytes(api_client, old_lease, new_lease):
    old_data = api_client.sanitize_for_serialization(old_lease)  # json.Marshal(oldLease)
    new_data = api_client.sanitize_for_serialization(new_lease)  # json.Marshal(newLease)
    return two_way_merge_patch(old_data, new_data)


def spec_diff(expected, actual):
    return object_diff(expected, actual)


@conformance("[sig-node] Lease lease API should be available [Conformance]")
def test_lease_api(new_framework):
    f = new_framework("lease-test", "privileged")
    ns = f.namespace.metadata.name
    leases = client.CoordinationV1Api(f.api_client)

    name = "lease"
    lease = client.V1Lease(metadata=client.V1ObjectMeta(name=name),
                           spec=lease_spec("holder", 30, 2, 5, 0))

    created_lease = expect_no_error(leases.create_namespaced_lease, ns, lease,
                                    explain="creating Lease failed")
    expect_valid_resource_version(created_lease)

    read_lease = expect_no_error(leases.read_namespaced_lease, name, ns,
                                 explain="couldn't read Lease")
    if not semantic_equal(lease.spec, read_lease.spec):
        fail("Leases don't match. Diff (- for expected, + for actual):\n%s",
             spec_diff(lease.spec, read_lease.spec))

    created_lease.spec = lease_spec("holder2", 30, 20, 50, 1)

    expect_no_error(leases.replace_namespaced_lease, name, ns, created_lease,
                    explain="updating Lease failed")

    read_lease = expect_no_error(leases.read_namespaced_lease, name, ns,
                                 explain="couldn't read Lease")
    if not semantic_equal(created_lease.spec, read_lease.spec):
        fail("Leases don't match. Diff (- for expected, + for actual):\n%s",
             spec_diff(created_lease.spec, read_lease.spec))

    patched_lease = copy.deepcopy(read_lease)
    patched_lease.spec = lease_spec("holder3", 60, 50, 70, 2)
    patch_bytes = get_patch_bytes(f.api_client, read_lease, patched_lease)

    expect_no_error(leases.patch_namespaced_lease, name, ns, patch_bytes,
                    explain="patching Lease failed")  # strategic merge patch

    read_lease = expect_no_error(leases.read_namespaced_lease, name, ns,
                                 explain="couldn't read Lease")
    if not semantic_equal(patched_lease.spec, read_lease.spec):
        fail("Leases don't match. Diff (- for expected, + for actual):\n%s",
             spec_diff(patched_lease.spec, read_lease.spec))
    assert compare_resource_version(created_lease.metadata.resource_version,
                                    read_lease.metadata.resource_version) == -1, \
        "patched object should have a larger resource version"

    name2 = "lease2"
    lease2 = client.V1Lease(metadata=client.V1ObjectMeta(name=name2,
                                                         labels={"deletecollection": "true"}),
                            spec=lease_spec("holder", 30, 2, 5, 0))
    expect_no_error(leases.create_namespaced_lease, ns, lease2, explain="creating Lease failed")

    lst = expect_no_error(leases.list_namespaced_lease, ns, explain="couldn't list Leases")
    assert len(lst.items) == 2, "expected 2 leases, got %d" % len(lst.items)

    selector = "deletecollection=true"  # labels.Set{...}.AsSelector().String()
    expect_no_error(leases.delete_collection_namespaced_lease, ns, label_selector=selector,
                    explain="couldn't delete collection")

    lst = expect_no_error(leases.list_namespaced_lease, ns, explain="couldn't list Leases")
    assert len(lst.items) == 1, "expected 1 lease, got %d" % len(lst.items)

    expect_no_error(leases.delete_namespaced_lease, name, ns, explain="deleting Lease failed")

    try:
        leases.read_namespaced_lease(name, ns)
        err = None
    except ApiException as e:
        err = e
    if not is_not_found(err):
        fail("expected IsNotFound error, got %s", err)

    # Number of leases may be high in large clusters, as Lease object is
    # created for every node by the corresponding Kubelet.
    expect_no_error(leases.list_lease_for_all_namespaces,
                    explain="couldn't list Leases from all namespace")
