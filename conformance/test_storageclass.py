"""Port of the StorageClasses "CSI Conformance" [Conformance] test of
test/e2e/storage/storageclass.go (kubernetes/kubernetes): "should run through the lifecycle
of a StorageClass".

Upstream read: storageclass.go as stored at kubernetes/kubernetes@5e377f94. That revision
carries resource-version checks (apimachineryutils.HaveValidResourceVersion on the created
StorageClass, resourceversion.CompareResourceVersion after the patch) which may postdate
v1.32; they are kept, as test_podtemplates.py keeps them (they only add assertions).

It needs only shepherd-apiserver's storage.k8s.io/v1 StorageClasses (create with
generateName, get, strategic merge patch, update, list and deleteCollection by label
selector, delete). The framework is NewDefaultFramework("csi-storageclass") with
NamespacePodSecurityLevel baseline (the namespace is not used by the test).

Images: none.

Wire: the installed python3-kubernetes (22.6) models storage.k8s.io/v1 StorageClass with
every field v1.32 has, so the typed StorageV1Api is used. Upstream's objects set
TypeMeta.Kind "StorageClass" and client-go's encoder writes apiVersion and kind into the
body; both are set here. The Delete of one StorageClass keeps, as client-go's does, no part
of the answer (see delete_storage_class). Gomega's failure texts are approximated by the
assertion messages (upstream's explanation strings are kept verbatim).
"""

import json
import time

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_batch import should_retry
from e2e_framework import (POLL, by, compare_resource_version, conformance, describe_error,
                           expect_valid_resource_version, fail, retry_on_conflict,
                           selector_from_set)

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage


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


def expect_have_key_with_value(mapping, key, value, explain):
    """gomega.Expect(mapping).To(gomega.HaveKeyWithValue(key, value), explain)"""
    assert (mapping or {}).get(key) == value, "%s: Expected\n    %r\nto have {key: value} %r" % (
        explain, mapping, {key: value})


def delete_storage_class(sc_client, name):
    """scClient.Delete(ctx, name, metav1.DeleteOptions{}): client-go's typed Delete is
    ``...Body(&opts).Do(ctx).Error()``, which keeps no part of the answer: a 2xx answer is
    an error only when its body is a metav1.Status whose status is not Success. The typed
    Python method would instead decode the answer as a V1StorageClass, so it is called
    without decoding (_preload_content=False) and the body is checked as client-go does.
    Raises ApiException."""
    resp = sc_client.delete_storage_class(name, body=client.V1DeleteOptions(),
                                          _preload_content=False)
    try:
        body = json.loads(resp.data or b"{}")
    except ValueError:
        body = {}
    if isinstance(body, dict) and body.get("kind") == "Status" and body.get("status") and \
            body.get("status") != "Success":
        err = ApiException(status=body.get("code") or resp.status,
                           reason=body.get("reason") or "")
        err.body = json.dumps(body)
        raise err


def eventually_deleted(list_fn, timeout):
    """framework.Gomega().Eventually(ctx, framework.HandleRetry(list)).WithTimeout(timeout)
    .Should(framework.MakeMatcher(...)) where the matcher wants no StorageClass left
    ("expected StorageClass to be deleted, found %q"); polling every framework.Poll (the
    e2e framework's default Eventually interval), the first attempt at once. HandleRetry: an
    error ShouldRetry allows is a failed attempt, any other ends the wait. Returns None or
    the error text."""
    start = time.monotonic()
    deadline = start + timeout
    last = "no attempt"
    while True:
        try:
            items = list_fn().items
        except ApiException as err:
            if not should_retry(err):
                return "Unexpected final error while getting *storage.state: failed to list " \
                       "StorageClass: %s" % describe_error(err)
            last = "failed to list StorageClass: %s" % describe_error(err)
        else:
            if not items:
                return None
            last = 'expected StorageClass to be deleted, found "%s"' % items[0].metadata.name
        if time.monotonic() + POLL > deadline:
            return "Timed out after %.3fs.\n%s" % (time.monotonic() - start, last)
        time.sleep(POLL)


#   Release: v1.29
#   Testname: StorageClass, lifecycle
#   Description: Creating a StorageClass MUST succeed. Reading the StorageClass MUST
#   succeed. Patching the StorageClass MUST succeed with its new label found. Deleting
#   the StorageClass MUST succeed and it MUST be confirmed. Replacement StorageClass
#   MUST be created. Updating the StorageClass MUST succeed with its new label found.
#   Deleting the StorageClass via deleteCollection MUST succeed and it MUST be confirmed.
@conformance("[sig-storage] StorageClasses CSI Conformance should run through the lifecycle "
             "of a StorageClass [Conformance]")
def test_storageclass_lifecycle(new_framework):
    f = new_framework("csi-storageclass", "baseline")
    sc_client = client.StorageV1Api(f.api_client)

    initial_sc = client.V1StorageClass(
        api_version="storage.k8s.io/v1", kind="StorageClass",
        metadata=client.V1ObjectMeta(generate_name="e2e-"),
        provisioner="e2e-fake-provisioner")

    by("Creating a StorageClass")
    created_storage_class = call(sc_client.create_storage_class, initial_sc,
                                 explain="failed to create the requested StorageClass")
    expect_valid_resource_version(created_storage_class)

    by('Get StorageClass "%s"' % created_storage_class.metadata.name)
    retrieved_storage_class = call(sc_client.read_storage_class,
                                   created_storage_class.metadata.name,
                                   explain="failed to get StorageClass %r",
                                   explain_args=(created_storage_class.metadata.name,))

    by('Patching the StorageClass "%s"' % retrieved_storage_class.metadata.name)
    payload = {"metadata": {"labels": {retrieved_storage_class.metadata.name: "patched"}}}
    patched_storage_class = call(sc_client.patch_storage_class,
                                 retrieved_storage_class.metadata.name,
                                 payload,  # a dict body: a strategic merge patch
                                 explain="failed to patch StorageClass %r",
                                 explain_args=(retrieved_storage_class.metadata.name,))
    expect_have_key_with_value(patched_storage_class.metadata.labels,
                               patched_storage_class.metadata.name, "patched",
                               "checking that patched label has been applied")
    assert compare_resource_version(retrieved_storage_class.metadata.resource_version,
                                    patched_storage_class.metadata.resource_version) == -1, \
        "patched object should have a larger resource version"

    by('Delete StorageClass "%s"' % patched_storage_class.metadata.name)
    call(delete_storage_class, sc_client, patched_storage_class.metadata.name,
         explain="failed to delete StorageClass %r",
         explain_args=(patched_storage_class.metadata.name,))

    by('Confirm deletion of StorageClass "%s"' % patched_storage_class.metadata.name)

    sc_selector = selector_from_set({patched_storage_class.metadata.name: "patched"})
    err = eventually_deleted(lambda: sc_client.list_storage_class(label_selector=sc_selector),
                             30)
    expect_no_error(err, "timeout while waiting to confirm StorageClass %r deletion",
                    patched_storage_class.metadata.name)

    by("Create a replacement StorageClass")

    replacement_sc = client.V1StorageClass(
        api_version="storage.k8s.io/v1", kind="StorageClass",
        metadata=client.V1ObjectMeta(generate_name="e2e-v2-"),
        provisioner="e2e-fake-provisioner")

    replacement_storage_class = call(sc_client.create_storage_class, replacement_sc,
                                     explain="failed to create replacement StorageClass")

    by('Updating StorageClass "%s"' % replacement_storage_class.metadata.name)
    updated_storage_class = None

    def update():
        nonlocal updated_storage_class
        sc = call(sc_client.read_storage_class, replacement_storage_class.metadata.name,
                  explain="unable to get Storage %r",
                  explain_args=(replacement_storage_class.metadata.name,))
        sc.metadata.labels = {replacement_storage_class.metadata.name: "updated"}
        updated_storage_class = sc_client.replace_storage_class(sc.metadata.name, sc)

    try:
        retry_on_conflict(update)
    except ApiException as e:
        expect_no_error(describe_error(e), "failed to update StorageClass %r",
                        replacement_storage_class.metadata.name)
    expect_have_key_with_value(updated_storage_class.metadata.labels,
                               replacement_storage_class.metadata.name, "updated",
                               "checking that updated label has been applied")

    sc_selector = selector_from_set({replacement_storage_class.metadata.name: "updated"})
    by('Listing all StorageClass with the labelSelector: "%s"' % sc_selector)
    sc_list = call(sc_client.list_storage_class, label_selector=sc_selector,
                   explain="failed to list StorageClasses with the labelSelector: %r",
                   explain_args=(sc_selector,))
    assert len(sc_list.items or []) == 1, "Expected\n    %r\nto have length 1" % (
        [i.metadata.name for i in sc_list.items or []],)

    by('Deleting StorageClass "%s" via DeleteCollection' % updated_storage_class.metadata.name)
    call(sc_client.delete_collection_storage_class, label_selector=sc_selector,
         explain="failed to delete StorageClass %r",
         explain_args=(updated_storage_class.metadata.name,))

    by('Confirm deletion of StorageClass "%s"' % updated_storage_class.metadata.name)

    err = eventually_deleted(lambda: sc_client.list_storage_class(label_selector=sc_selector),
                             30)
    expect_no_error(err, "timeout while waiting to confirm StorageClass %r deletion",
                    updated_storage_class.metadata.name)
