"""Ports of the ConfigMap [Conformance] tests that need no node:
test/e2e/common/node/configmap.go ("should fail to create ConfigMap with empty key", "should
run through a ConfigMap lifecycle") and test/e2e/common/storage/configmap_volume.go ("should
be immutable if `immutable` field is set") from kubernetes/kubernetes."""

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (by, conformance, describe_error, expect_no_error, fail,
                           is_invalid, new_uuid)

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage


def new_config_map(f, name):
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(namespace=f.namespace.metadata.name, name=name),
        data={"data-1": "value-1", "data-2": "value-2", "data-3": "value-3"})


@conformance("[sig-node] ConfigMap should fail to create ConfigMap with empty key "
             "[Conformance]")
def test_configmap_empty_key(new_framework):
    f = new_framework("configmap", "baseline")

    # newConfigMapWithEmptyKey
    name = "configmap-test-emptyKey-" + new_uuid()
    config_map = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(namespace=f.namespace.metadata.name, name=name),
        data={"": "value-1"})
    by("Creating configMap that has name %s" % name)
    try:
        f.core.create_namespaced_config_map(f.namespace.metadata.name, config_map)
    except ApiException:
        return
    fail('created configMap "%s" with empty key in namespace "%s"', name,
         f.namespace.metadata.name)


@conformance("[sig-node] ConfigMap should run through a ConfigMap lifecycle [Conformance]")
def test_configmap_lifecycle(new_framework):
    f = new_framework("configmap", "baseline")
    test_namespace_name = f.namespace.metadata.name
    test_config_map_name = "test-configmap" + new_uuid()

    test_config_map = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=test_config_map_name,
                                     labels={"test-configmap-static": "true"}),
        data={"valueName": "value"})

    by("creating a ConfigMap")
    expect_no_error(f.core.create_namespaced_config_map, test_namespace_name, test_config_map,
                    explain="failed to create ConfigMap")

    by("fetching the ConfigMap")
    config_map = expect_no_error(f.core.read_namespaced_config_map, test_config_map_name,
                                 test_namespace_name, explain="failed to get ConfigMap")
    assert (config_map.data or {}).get("valueName") == test_config_map.data["valueName"]
    assert (config_map.metadata.labels or {}).get("test-configmap-static") == \
        test_config_map.metadata.labels["test-configmap-static"]

    # json.Marshal(v1.ConfigMap{ObjectMeta: {Labels: ...}, Data: ...})
    config_map_patch_payload = {
        "metadata": {"labels": {"test-configmap": "patched"}},
        "data": {"valueName": "value1"},
    }

    by("patching the ConfigMap")
    expect_no_error(f.core.patch_namespaced_config_map, test_config_map_name,
                    test_namespace_name, config_map_patch_payload,
                    explain="failed to patch ConfigMap")  # strategic merge patch

    by("listing all ConfigMaps in all namespaces with a label selector")
    config_map_list = expect_no_error(f.core.list_config_map_for_all_namespaces,
                                      label_selector="test-configmap=patched",
                                      explain="failed to list ConfigMaps with LabelSelector")
    test_config_map_found = False
    for cm in config_map_list.items:
        labels = cm.metadata.labels or {}
        if (cm.metadata.name == test_config_map.metadata.name and
                cm.metadata.namespace == test_namespace_name and
                labels.get("test-configmap-static") ==
                test_config_map.metadata.labels["test-configmap-static"] and
                labels.get("test-configmap") == "patched" and
                (cm.data or {}).get("valueName") == "value1"):
            test_config_map_found = True
            break
    if not test_config_map_found:
        fail("failed to find ConfigMap %s/%s by label selector", test_namespace_name,
             test_config_map.metadata.name)

    by("deleting the ConfigMap by collection with a label selector")
    expect_no_error(f.core.delete_collection_namespaced_config_map, test_namespace_name,
                    label_selector="test-configmap-static=true",
                    explain="failed to delete ConfigMap collection with LabelSelector")

    by("listing all ConfigMaps in test namespace")
    config_map_list = expect_no_error(f.core.list_namespaced_config_map, test_namespace_name,
                                      label_selector="test-configmap-static=true",
                                      explain="failed to list ConfigMap by LabelSelector")
    assert len(config_map_list.items) == 0, \
        "ConfigMap is still present after being deleted by collection"


@conformance("[sig-storage] ConfigMap should be immutable if `immutable` field is set "
             "[Conformance]")
def test_configmap_immutable(new_framework):
    f = new_framework("configmap", "baseline")
    ns = f.namespace.metadata.name
    name = "immutable"
    config_map = new_config_map(f, name)

    current_config_map = expect_no_error(
        f.core.create_namespaced_config_map, ns, config_map,
        explain='Failed to create config map "%s" in namespace "%s"' % (name, ns))

    current_config_map.data["data-4"] = "value-4"
    current_config_map = expect_no_error(
        f.core.replace_namespaced_config_map, name, ns, current_config_map,
        explain='Failed to update config map "%s" in namespace "%s"' % (name, ns))

    # Mark config map as immutable.
    current_config_map.immutable = True
    current_config_map = expect_no_error(
        f.core.replace_namespaced_config_map, name, ns, current_config_map,
        explain='Failed to mark config map "%s" in namespace "%s" as immutable' % (name, ns))

    # Ensure data can't be changed now.
    current_config_map.data["data-5"] = "value-5"
    err = None
    try:
        f.core.replace_namespaced_config_map(name, ns, current_config_map)
    except ApiException as e:
        err = e
    if not is_invalid(err):
        fail("expected 'invalid' as error, got instead: %s",
             describe_error(err) if err else "no error")

    # Ensure config map can't be switched from immutable to mutable.
    current_config_map = expect_no_error(
        f.core.read_namespaced_config_map, name, ns,
        explain='Failed to get config map "%s" in namespace "%s"' % (name, ns))
    if current_config_map.immutable is None:
        fail("currentConfigMap %s has no immutable field (nil pointer dereference)", name)
    if not current_config_map.immutable:
        fail("currentConfigMap %s can be switched from immutable to mutable", name)

    current_config_map.immutable = False
    err = None
    try:
        f.core.replace_namespaced_config_map(name, ns, current_config_map)
    except ApiException as e:
        err = e
    if not is_invalid(err):
        fail("expected 'invalid' as error, got instead: %s",
             describe_error(err) if err else "no error")

    # Ensure that metadata can be changed.
    current_config_map = expect_no_error(
        f.core.read_namespaced_config_map, name, ns,
        explain='Failed to get config map "%s" in namespace "%s"' % (name, ns))
    current_config_map.metadata.labels = {"label1": "value1"}
    expect_no_error(f.core.replace_namespaced_config_map, name, ns, current_config_map,
                    explain='Failed to update config map "%s" in namespace "%s"' % (name, ns))

    # Ensure that immutable config map can be deleted.
    expect_no_error(f.core.delete_namespaced_config_map, name, ns,
                    explain='Failed to delete config map "%s" in namespace "%s"' % (name, ns))
