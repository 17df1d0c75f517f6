"""Port of test/e2e/instrumentation/events.go (kubernetes/kubernetes), the [Conformance] test
"should ensure that an event can be fetched, patched, deleted, and listed"."""

import pytest
import copy

from kubernetes import client

from e2e_framework import (by, conformance, expect_no_error, fail, object_diff,
                           semantic_equal, unix_time)

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage


def new_test_event(namespace, name, label):
    some_time = unix_time(1505828956)
    return client.EventsV1Event(
        metadata=client.V1ObjectMeta(name=name, labels={label: "true"}),
        regarding=client.V1ObjectReference(namespace=namespace),
        event_time=some_time,
        note="This is " + name,
        action="Do",
        reason="Test",
        type="Normal",
        reporting_controller="test-controller",
        reporting_instance="test-node",
    )


def event_exists_in_list(list_fn, namespace, name, *args):
    events_list = expect_no_error(list_fn, *args, label_selector="testevent-constant=true",
                                  explain="failed to list events")
    for val in events_list.items:
        if val.metadata.name == name and val.metadata.namespace == namespace:
            return True
    return False


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


@conformance("[sig-instrumentation] Events API should ensure that an event can be fetched, "
             "patched, deleted, and listed [Conformance]")
def test_events_api_single_event(new_framework):
    f = new_framework("events", "privileged")
    ns = f.namespace.metadata.name
    core_client = f.core
    events = client.EventsV1Api(f.api_client)

    event_name = "event-test"

    by("creating a test event")
    expect_no_error(events.create_namespaced_event, ns,
                    new_test_event(ns, event_name, "testevent-constant"),
                    explain="failed to create test event")

    by("listing events in all namespaces")
    found_created_event = event_exists_in_list(events.list_event_for_all_namespaces, ns,
                                               event_name)
    if not found_created_event:
        fail("Failed to find test event %s in namespace %s, in list with cluster scope",
             event_name, ns)

    by("listing events in test namespace")
    found_created_event = event_exists_in_list(events.list_namespaced_event, ns, event_name,
                                               ns)
    if not found_created_event:
        fail("Failed to find test event %s in namespace %s, in list with namespace scope",
             event_name, ns)

    by("listing events with field selection filtering on source")
    filtered_core_v1_list = expect_no_error(core_client.list_namespaced_event, ns,
                                            field_selector="source=test-controller",
                                            explain="failed to get filtered list")
    if len(filtered_core_v1_list.items) != 1 or \
            filtered_core_v1_list.items[0].metadata.name != event_name:
        fail("expected single event, got %s", filtered_core_v1_list.items)

    by("listing events with field selection filtering on reportingController")
    filtered_events_v1_list = expect_no_error(
        events.list_namespaced_event, ns, field_selector="reportingController=test-controller",
        explain="failed to get filtered list")
    if len(filtered_events_v1_list.items) != 1 or \
            filtered_events_v1_list.items[0].metadata.name != event_name:
        fail("expected single event, got %s", filtered_events_v1_list.items)

    by("getting the test event")
    test_event = expect_no_error(events.read_namespaced_event, event_name, ns,
                                 explain="failed to get test event")

    by("patching the test event")
    old_data = f.api_client.sanitize_for_serialization(test_event)  # json.Marshal(testEvent)
    new_event = copy.deepcopy(test_event)
    event_series = client.EventsV1EventSeries(count=2,
                                              last_observed_time=unix_time(1505828951))
    new_event.series = event_series
    new_data = f.api_client.sanitize_for_serialization(new_event)
    patch_bytes = two_way_merge_patch(old_data, new_data)

    expect_no_error(events.patch_namespaced_event, event_name, ns, patch_bytes,
                    explain="failed to patch the test event")  # strategic merge patch

    by("getting the test event")
    event = expect_no_error(events.read_namespaced_event, event_name, ns,
                            explain="failed to get test event")
    # clear ResourceVersion and ManagedFields which are set by control-plane
    event.metadata.resource_version = ""
    test_event.metadata.resource_version = ""
    event.metadata.managed_fields = None
    test_event.metadata.managed_fields = None

    test_event.series = event_series
    if not semantic_equal(test_event, event):
        fail("test event wasn't properly patched: %s", object_diff(test_event, event))

    by("updating the test event")
    test_event.series = client.EventsV1EventSeries(count=100,
                                                   last_observed_time=unix_time(1505828956))
    expect_no_error(events.replace_namespaced_event, event_name, ns, test_event,
                    explain="failed to update the test event")

    by("getting the test event")
    event = expect_no_error(events.read_namespaced_event, event_name, ns,
                            explain="failed to get test event")
    # clear ResourceVersion and ManagedFields which are set by control-plane
    event.metadata.resource_version = ""
    event.metadata.managed_fields = None
    if not semantic_equal(test_event, event):
        fail("test event wasn't properly updated: %s", object_diff(test_event, event))

    by("deleting the test event")
    expect_no_error(events.delete_namespaced_event, event_name, ns,
                    explain="failed to delete the test event")

    by("listing events in all namespaces")
    found_created_event = event_exists_in_list(events.list_event_for_all_namespaces, ns,
                                               event_name)
    if found_created_event:
        fail("Should not have found test event %s in namespace %s, in list with cluster scope "
             "after deletion", event_name, ns)

    by("listing events in test namespace")
    found_created_event = event_exists_in_list(events.list_namespaced_event, ns, event_name,
                                               ns)
    if found_created_event:
        fail("Should not have found test event %s in namespace %s, in list with namespace "
             "scope after deletion", event_name, ns)
