"""Port of test/e2e/instrumentation/core_events.go (kubernetes/kubernetes), the [Conformance]
test "should manage the lifecycle of an event"."""

import pytest
from kubernetes import client

from e2e_framework import (by, conformance, expect_no_error, fail, object_diff,
                           semantic_equal, unix_time)

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage


@conformance("[sig-instrumentation] Events should manage the lifecycle of an event "
             "[Conformance]")
def test_core_event_lifecycle(new_framework):
    f = new_framework("events", "privileged")
    ns = f.namespace.metadata.name
    # As per SIG-Arch meeting 14 July 2022 this e2e test now supersede
    # e2e test "Event resource lifecycle", which has been removed.

    event_test_name = "event-test"

    by("creating a test event")
    # create a test event in test namespace
    expect_no_error(f.core.create_namespaced_event, ns, client.CoreV1Event(
        metadata=client.V1ObjectMeta(name=event_test_name,
                                     labels={"testevent-constant": "true"}),
        message="This is a test event",
        reason="Test",
        type="Normal",
        count=1,
        involved_object=client.V1ObjectReference(namespace=ns),
    ), explain="failed to create test event")

    by("listing all events in all namespaces")
    # get a list of Events in all namespaces to ensure endpoint coverage
    events_list = expect_no_error(f.core.list_event_for_all_namespaces,
                                  label_selector="testevent-constant=true",
                                  explain="failed list all events")

    found_created_event = False
    event_created_name = None
    for val in events_list.items:
        if val.metadata.name == event_test_name and val.metadata.namespace == ns:
            found_created_event = True
            event_created_name = val.metadata.name
            break
    if not found_created_event:
        fail("unable to find test event %s in namespace %s, full list of events is %s",
             event_test_name, ns, events_list.items)

    by("patching the test event")
    # patch the event's message
    event_patch_message = "This is a test event - patched"
    event_patch = {"message": event_patch_message}
    expect_no_error(f.core.patch_namespaced_event, event_test_name, ns, event_patch,
                    explain="failed to patch the test event")  # strategic merge patch

    by("fetching the test event")
    # get event by name
    event = expect_no_error(f.core.read_namespaced_event, event_created_name, ns,
                            explain="failed to fetch the test event")
    assert event.message == event_patch_message, \
        "test event message does not match patch message"

    by("updating the test event")

    test_event = expect_no_error(f.core.read_namespaced_event, event.metadata.name, ns,
                                 explain="failed to get test event")

    test_event.series = client.CoreV1EventSeries(count=100,
                                                 last_observed_time=unix_time(1505828956))

    # clear ResourceVersion and ManagedFields which are set by control-plane
    test_event.metadata.resource_version = ""
    test_event.metadata.managed_fields = None

    expect_no_error(f.core.replace_namespaced_event, test_event.metadata.name, ns, test_event,
                    explain="failed to update the test event")

    by("getting the test event")
    event = expect_no_error(f.core.read_namespaced_event, test_event.metadata.name, ns,
                            explain="failed to get test event")
    # clear ResourceVersion and ManagedFields which are set by control-plane
    event.metadata.resource_version = ""
    event.metadata.managed_fields = None
    if not semantic_equal(test_event, event):
        fail("test event wasn't properly updated: %s", object_diff(test_event, event))

    by("deleting the test event")
    # delete original event
    expect_no_error(f.core.delete_namespaced_event, event_created_name, ns,
                    explain="failed to delete the test event")

    by("listing all events in all namespaces")
    # get a list of Events list namespace
    events_list = expect_no_error(f.core.list_event_for_all_namespaces,
                                  label_selector="testevent-constant=true",
                                  explain="fail to list all events")
    found_created_event = False
    for val in events_list.items:
        if val.metadata.name == event_test_name and val.metadata.namespace == ns:
            found_created_event = True
            break
    if found_created_event:
        fail("Should not have found test event %s in namespace %s, full list of events %s",
             event_test_name, ns, events_list.items)
