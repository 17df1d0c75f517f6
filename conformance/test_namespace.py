"""Port of test/e2e/apimachinery/namespace.go (kubernetes/kubernetes): the [Conformance]
tests "should patch a Namespace", "should apply changes to a namespace status" and "should
apply a finalizer to a Namespace". ("should ensure that all services are removed when a
namespace is deleted" needs the namespace controller and is not ported yet.)"""

import pytest
import json

from kubernetes import client

from e2e_framework import (by, compare_resource_version, conformance, expect_no_error,
                           expect_valid_resource_version, fail, logf, new_uuid, rand_string,
                           raw_call, retry_on_conflict)

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage

BASE = "namespaces"
LEVEL = "baseline"  # f.NamespacePodSecurityLevel = admissionapi.LevelBaseline


@conformance("[sig-api-machinery] Namespaces [Serial] should patch a Namespace [Conformance]")
def test_patch_namespace(new_framework):
    f = new_framework(BASE, LEVEL)

    by("creating a Namespace")
    namespace_name = "nspatchtest-" + new_uuid()
    ns = f.create_namespace(namespace_name)
    namespace_name = ns.metadata.name
    expect_valid_resource_version(ns)

    by("patching the Namespace")
    nspatch = {"metadata": {"labels": {"testLabel": "testValue"}}}
    patched_ns = expect_no_error(f.core.patch_namespace, namespace_name, nspatch,
                                 explain="failed to patch Namespace")  # strategic merge patch
    assert compare_resource_version(ns.metadata.resource_version,
                                    patched_ns.metadata.resource_version) == -1, \
        "patched object should have a larger resource version"

    by("get the Namespace and ensuring it has the label")
    namespace = expect_no_error(f.core.read_namespace, namespace_name,
                                explain="failed to get Namespace")
    assert (namespace.metadata.labels or {}).get("testLabel") == "testValue", \
        "namespace not patched"


@conformance("[sig-api-machinery] Namespaces [Serial] should apply changes to a namespace "
             "status [Conformance]")
def test_namespace_status(new_framework):
    f = new_framework(BASE, LEVEL)
    ns = f.namespace.metadata.name
    ns_client = f.core

    by("Read namespace status")
    # dc.Resource(namespaces).Get(ctx, ns, metav1.GetOptions{}, "status")
    ns_status = expect_no_error(ns_client.read_namespace_status, ns,
                                explain="failed to fetch NamespaceStatus %s" % ns)
    assert ns_status.status.phase == "Active", \
        "The phase returned was %s" % ns_status.status.phase
    logf("Status: %s", ns_status.status)

    by("Patch namespace status")
    # json.Marshal(v1.NamespaceCondition{...}): lastTransitionTime (a zero metav1.Time) is
    # written as null.
    ns_condition_json = json.dumps({
        "type": "StatusPatch",
        "status": "True",
        "lastTransitionTime": None,
        "reason": "E2E",
        "message": "Patched by an e2e test",
    }, separators=(",", ":"))
    patch = json.loads('{"metadata":{"annotations":{"e2e-patched-ns-status":"' + ns +
                       '"}},"status":{"conditions":[' + ns_condition_json + ']}}')
    patched_status = expect_no_error(
        raw_call, f.api_client, "PATCH", "/api/v1/namespaces/%s/status" % ns, body=patch,
        headers={"Content-Type": "application/merge-patch+json"}, response_type="V1Namespace",
        explain="Failed to patch status")
    assert (patched_status.metadata.annotations or {}).get("e2e-patched-ns-status") == ns, \
        "patched object should have the applied annotation"
    conditions = patched_status.status.conditions or []
    if not conditions:
        fail("patched namespace has no status conditions: %s", patched_status.status)
    assert conditions[-1].reason == "E2E", "The Reason returned was %s" % conditions[0].reason
    assert conditions[-1].message == "Patched by an e2e test", \
        "The Message returned was %s" % conditions[0].reason
    logf("Status.Condition: %s", conditions[-1])

    by("Update namespace status")

    def update():
        status_to_update = expect_no_error(ns_client.read_namespace_status, ns,
                                           explain="failed to fetch NamespaceStatus %s" % ns)
        status_to_update.status.conditions = (status_to_update.status.conditions or []) + [
            client.V1NamespaceCondition(type="StatusUpdate", status="True", reason="E2E",
                                        message="Updated by an e2e test")]
        return ns_client.replace_namespace_status(ns, status_to_update)

    status_updated = expect_no_error(retry_on_conflict, update,
                                     explain="failed to update namespace status %s" % ns)
    conditions = status_updated.status.conditions or []
    if not conditions:
        fail("updated object should have the applied condition, got %s", conditions)
    assert conditions[-1].type == "StatusUpdate", \
        "updated object should have the approved condition, got %s" % conditions
    assert conditions[-1].message == "Updated by an e2e test", \
        "The Message returned was %s" % conditions[0].message
    logf("Status.Condition: %s", conditions[-1])


@conformance("[sig-api-machinery] Namespaces [Serial] should apply a finalizer to a Namespace "
             "[Conformance]")
def test_namespace_finalizer(new_framework):
    f = new_framework(BASE, LEVEL)

    fake_finalizer = "e2e.example.com/fakeFinalizer"
    ns_name = "e2e-ns-" + rand_string(5)

    by('Creating namespace "%s"' % ns_name)
    test_namespace = f.create_namespace(ns_name)
    ns = test_namespace.metadata.name
    ns_client = f.core
    logf('Namespace "%s" has %s', ns, test_namespace.spec.finalizers if test_namespace.spec
         else None)

    by('Adding e2e finalizer to namespace "%s"' % ns)

    def add():
        update_namespace = expect_no_error(ns_client.read_namespace, ns,
                                           explain='Unable to get Namespace "%s"' % ns)
        if update_namespace.spec is None:
            update_namespace.spec = client.V1NamespaceSpec()
        update_namespace.spec.finalizers = (update_namespace.spec.finalizers or []) + [
            fake_finalizer]
        return ns_client.replace_namespace_finalize(ns, update_namespace)

    updated_namespace = expect_no_error(retry_on_conflict, add,
                                        explain='failed to add finalizer to the namespace: '
                                                '"%s"' % ns)
    finalizers = (updated_namespace.spec.finalizers or []) if updated_namespace.spec else []
    if fake_finalizer not in finalizers:
        fail('Finalizer "%s" was not found. Namespace "%s" has %s', fake_finalizer,
             updated_namespace.metadata.name, finalizers)
    logf('Namespace "%s" has %s', updated_namespace.metadata.name, finalizers)

    by('Removing e2e finalizer from namespace "%s"' % ns)

    def remove():
        current = expect_no_error(ns_client.read_namespace, ns,
                                  explain='Unable to get namespace "%s"' % ns)
        finalizer_list = [item for item in ((current.spec.finalizers or [])
                                            if current.spec else [])
                          if item != fake_finalizer]
        if current.spec is None:
            current.spec = client.V1NamespaceSpec()
        # A nil []FinalizerName is omitted from the JSON body.
        current.spec.finalizers = finalizer_list or None
        return ns_client.replace_namespace_finalize(ns, current)

    updated_namespace = expect_no_error(retry_on_conflict, remove,
                                        explain='failed to remove finalizer from namespace: '
                                                '"%s"' % ns)
    finalizers = (updated_namespace.spec.finalizers or []) if updated_namespace.spec else []
    if fake_finalizer in finalizers:
        fail('Finalizer "%s" was found. Namespace "%s" has %s', fake_finalizer,
             updated_namespace.metadata.name, finalizers)
    logf('Namespace "%s" has %s', updated_namespace.metadata.name, finalizers)
