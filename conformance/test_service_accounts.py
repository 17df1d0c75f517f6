"""Ports of the ServiceAccounts [Conformance] tests of test/e2e/auth/service_accounts.go
(kubernetes/kubernetes) that need no pods: "should run through the lifecycle of a
ServiceAccount" and "should guarantee kube-root-ca.crt exist in any namespace".

The second needs the root-ca-cert-publisher controller (shepherd-controller-manager), which
recreates and repairs the ConfigMap kube-root-ca.crt. No images are involved.
"""

import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (WatchClosed, Watcher, by, conformance, describe_error,
                           expect_no_error, fail, go_deref, is_not_found, logf)

ROOT_CA_CONFIG_MAP_NAME = "kube-root-ca.crt"  # rootCAConfigMapName
FOREVER_TEST_TIMEOUT = 30  # wait.ForeverTestTimeout


def svcaccounts_framework(new_framework):
    """SIGDescribe("ServiceAccounts"): NewDefaultFramework("svcaccounts"),
    NamespacePodSecurityLevel baseline."""
    return new_framework("svcaccounts", "baseline")


def next_event_of_type(watcher, event_type):
    """`for watchEvent := range resourceWatchChan { if watchEvent.Type == T { break } }`:
    True once an event of that type arrives, False once the channel is closed (the server
    ends the watch after its timeoutSeconds)."""
    while True:
        try:
            event = watcher.next(1.0)
        except WatchClosed as err:
            logf("watch closed: %s", err)
            return False
        if event is None:
            continue
        if event["type"] == event_type:
            return True


# Release: v1.19
# Testname: ServiceAccount lifecycle test
# Description: Creates a ServiceAccount with a static Label MUST be added as shown in watch
# event. Patching the ServiceAccount MUST return it's new property. Listing the
# ServiceAccounts MUST return the test ServiceAccount with it's patched values.
# ServiceAccount will be deleted and MUST find a deleted watch event.
@conformance("[sig-auth] ServiceAccounts should run through the lifecycle of a ServiceAccount "
             "[Conformance]")
def test_service_account_lifecycle(new_framework):
    f = svcaccounts_framework(new_framework)
    test_namespace_name = f.namespace.metadata.name
    test_service_account_name = "testserviceaccount"
    test_service_account_static_labels = {"test-serviceaccount-static": "true"}
    test_service_account_static_labels_flat = "test-serviceaccount-static=true"

    by("creating a ServiceAccount")
    test_service_account = client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name=test_service_account_name,
                                     labels=test_service_account_static_labels))
    created_service_account = expect_no_error(
        f.core.create_namespaced_service_account, test_namespace_name, test_service_account,
        explain="failed to create a ServiceAccount")

    get_service_account = expect_no_error(
        f.core.read_namespaced_service_account, test_service_account_name,
        test_namespace_name, explain="failed to fetch the created ServiceAccount")
    assert created_service_account.metadata.uid == get_service_account.metadata.uid, \
        "Expected\n%r\nto equal\n%r" % (created_service_account.metadata.uid,
                                        get_service_account.metadata.uid)

    by("watching for the ServiceAccount to be added")
    resource_watch_timeout_seconds = 180
    # Watch(ListOptions{LabelSelector, TimeoutSeconds}): no resourceVersion, so the server
    # first sends ADDED for the existing objects; the channel closes when the server ends
    # the watch.
    resource_watch = Watcher(f.core.list_namespaced_service_account, test_namespace_name,
                             label_selector=test_service_account_static_labels_flat,
                             timeout_seconds=resource_watch_timeout_seconds)
    try:
        resource_watch.started.wait(30)
        if resource_watch.error is not None:
            # upstream: fmt.Println(err, "failed to setup watch on newly created
            # ServiceAccount"); return
            logf("%s failed to setup watch on newly created ServiceAccount",
                 describe_error(resource_watch.error))
            return

        if not next_event_of_type(resource_watch, "ADDED"):
            fail("failed to find %s event", "ADDED")

        by("patching the ServiceAccount")
        bool_false = False
        # json.Marshal(v1.ServiceAccount{AutomountServiceAccountToken: &boolFalse})
        test_service_account_patch_data = {"metadata": {"creationTimestamp": None},
                                           "automountServiceAccountToken": bool_false}
        expect_no_error(f.core.patch_namespaced_service_account, test_service_account_name,
                        test_namespace_name, test_service_account_patch_data,
                        explain="failed to patch the ServiceAccount")  # strategic merge patch
        if not next_event_of_type(resource_watch, "MODIFIED"):
            fail("failed to find %s event", "MODIFIED")

        by("finding ServiceAccount in list of all ServiceAccounts (by LabelSelector)")
        service_account_list = expect_no_error(
            f.core.list_service_account_for_all_namespaces,
            label_selector=test_service_account_static_labels_flat,
            explain="failed to list ServiceAccounts by LabelSelector")
        found_service_account = False
        for service_account_item in service_account_list.items:
            if (service_account_item.metadata.name == test_service_account_name and
                    service_account_item.metadata.namespace == test_namespace_name and
                    go_deref(service_account_item.automount_service_account_token,
                             "serviceAccountItem.AutomountServiceAccountToken") == bool_false):
                found_service_account = True
                break
        if not found_service_account:
            fail("failed to find the created ServiceAccount")

        by("deleting the ServiceAccount")
        expect_no_error(f.core.delete_collection_namespaced_service_account,
                        test_namespace_name, body=client.V1DeleteOptions(),
                        explain="failed to delete the ServiceAccount by Collection")
        if not next_event_of_type(resource_watch, "DELETED"):
            fail("failed to find %s event", "DELETED")
    finally:
        resource_watch.stop()


def _poll(immediate, interval, timeout, condition):
    """wait.PollImmediate / wait.Poll: condition() returns True to stop, False to go on, or
    raises to end the poll with an error. Returns None or the error text."""
    deadline = time.monotonic() + timeout
    if not immediate:
        time.sleep(interval)
    while True:
        if condition():
            return None
        if time.monotonic() + interval > deadline:
            return "timed out waiting for the condition"
        time.sleep(interval)


def _get_root_ca(f):
    return f.core.read_namespaced_config_map(ROOT_CA_CONFIG_MAP_NAME, f.namespace.metadata.name)


# Release: v1.21
# Testname: RootCA ConfigMap test
# Description: Ensure every namespace exist a ConfigMap for root ca cert.
#   1. Created automatically
#   2. Recreated if deleted
#   3. Reconciled if modified
@conformance("[sig-auth] ServiceAccounts should guarantee kube-root-ca.crt exist in any "
             "namespace [Conformance]")
def test_kube_root_ca_crt_exists_in_any_namespace(new_framework):
    f = svcaccounts_framework(new_framework)
    ns = f.namespace.metadata.name

    class _PollError(Exception):
        pass

    def exists():
        try:
            _get_root_ca(f)
            return True
        except ApiException as err:
            if is_not_found(err):
                by("root ca configmap not found, retrying")
                return False
            raise _PollError(describe_error(err))

    def run(immediate, condition):
        try:
            err = _poll(immediate, 0.5, FOREVER_TEST_TIMEOUT, condition)
        except _PollError as perr:
            err = str(perr)
        if err is not None:
            fail("unexpected error: %s", err)

    run(True, exists)
    logf("Got root ca configmap in namespace %r", ns)

    expect_no_error(f.core.delete_namespaced_config_map, ROOT_CA_CONFIG_MAP_NAME, ns,
                    body=client.V1DeleteOptions(grace_period_seconds=0))
    logf("Deleted root ca configmap in namespace %r", ns)

    def recreated():
        by("waiting for a new root ca configmap created")
        return exists()

    run(False, recreated)
    logf("Recreated root ca configmap in namespace %r", ns)

    expect_no_error(f.core.replace_namespaced_config_map, ROOT_CA_CONFIG_MAP_NAME, ns,
                    client.V1ConfigMap(metadata=client.V1ObjectMeta(name=ROOT_CA_CONFIG_MAP_NAME),
                                       data={"ca.crt": ""}))
    logf("Updated root ca configmap in namespace %r", ns)

    def reconciled():
        by("waiting for the root ca configmap reconciled")
        try:
            cm = _get_root_ca(f)
        except ApiException as err:
            if is_not_found(err):
                by("root ca configmap not found, retrying")
                return False
            raise _PollError(describe_error(err))
        value = (cm.data or {}).get("ca.crt")
        if value is None or value == "":
            by("root ca configmap is not reconciled yet, retrying")
            return False
        return True

    run(False, reconciled)
    logf("Reconciled root ca configmap in namespace %r", ns)
