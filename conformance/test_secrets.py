"""Port of test/e2e/common/node/secrets.go (kubernetes/kubernetes), the [Conformance] test
"should patch a secret"."""

import pytest
import base64

from kubernetes import client

from e2e_framework import (b64, by, compare_resource_version, conformance, expect_no_error,
                           expect_valid_resource_version, fail, new_uuid, unb64)

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage


@conformance("[sig-node] Secrets should patch a secret [Conformance]")
def test_patch_secret(new_framework):
    f = new_framework("secrets", "baseline")
    ns = f.namespace.metadata.name

    by("creating a secret")

    secret_test_name = "test-secret-" + new_uuid()

    # create a secret in the test namespace
    created_secret = expect_no_error(
        f.core.create_namespaced_secret, ns,
        client.V1Secret(metadata=client.V1ObjectMeta(name=secret_test_name,
                                                     labels={"testsecret-constant": "true"}),
                        data={"key": b64(b"value")}, type="Opaque"),
        explain="failed to create secret")
    expect_valid_resource_version(created_secret)

    by("listing secrets in all namespaces to ensure that there are more than zero")
    # list all secrets in all namespaces to ensure endpoint coverage
    secrets_list = expect_no_error(f.core.list_secret_for_all_namespaces,
                                   label_selector="testsecret-constant=true",
                                   explain="failed to list secrets")
    assert secrets_list.items, "no secrets found"

    found_created_secret = False
    secret_created_name = None
    for val in secrets_list.items:
        if val.metadata.name == secret_test_name and val.metadata.namespace == ns:
            found_created_secret = True
            secret_created_name = val.metadata.name
            break
    if not found_created_secret:
        fail("unable to find secret %s/%s by name", ns, secret_test_name)

    by("patching the secret")
    # patch the secret in the test namespace
    secret_patch_new_data = base64.b64encode(b"value1").decode()
    # json.Marshal of map[string][]byte writes each []byte base64-encoded
    secret_patch = {
        "metadata": {"labels": {"testsecret": "true"}},
        "data": {"key": b64(secret_patch_new_data)},
    }
    expect_no_error(f.core.patch_namespaced_secret, secret_created_name, ns, secret_patch,
                    explain="failed to patch secret")  # strategic merge patch

    secret = expect_no_error(f.core.read_namespaced_secret, secret_created_name, ns,
                             explain="failed to get secret")
    assert compare_resource_version(created_secret.metadata.resource_version,
                                    secret.metadata.resource_version) == -1, \
        "patched object should have a larger resource version"

    # secret.Data["key"] is a []byte (JSON base64 decoded once by the Go client); the test
    # then decodes its content from base64.
    decode_error = None
    try:
        secret_decoded_string = base64.b64decode(unb64((secret.data or {}).get("key")),
                                                 validate=True)
    except (ValueError, TypeError) as err:
        decode_error = err
    if decode_error is not None:
        fail("failed to decode secret from Base64: %s", decode_error)

    assert secret_decoded_string.decode(errors="replace") == "value1", \
        "found secret, but the data wasn't updated from the patch"

    by("deleting the secret using a LabelSelector")
    expect_no_error(f.core.delete_collection_namespaced_secret, ns,
                    label_selector="testsecret=true", explain="failed to delete patched secret")

    by("listing secrets in all namespaces, searching for label name and value in patch")
    # list all secrets in all namespaces
    secrets_list = expect_no_error(f.core.list_secret_for_all_namespaces,
                                   label_selector="testsecret-constant=true",
                                   explain="failed to list secrets")

    found_created_secret = False
    for val in secrets_list.items:
        if val.metadata.name == secret_test_name and val.metadata.namespace == ns:
            found_created_secret = True
            break
    if found_created_secret:
        fail("secret %s/%s was not deleted successfully", ns, secret_test_name)
