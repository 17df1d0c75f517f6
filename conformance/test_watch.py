"""Port of test/e2e/apimachinery/watch.go (kubernetes/kubernetes)."""

import pytest
import random
import threading
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (Watcher, WatchClosed, by, conformance, describe_error,
                           event_summary, expect_no_error, fail, is_conflict, logf,
                           object_diff, semantic_equal)

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage

WATCH_CONFIGMAP_LABEL_KEY = "watch-this-configmap"

MULTIPLE_WATCHERS_LABEL_VALUE_A = "multiple-watchers-A"
MULTIPLE_WATCHERS_LABEL_VALUE_B = "multiple-watchers-B"
FROM_RESOURCE_VERSION_LABEL_VALUE = "from-resource-version"
WATCH_RESTARTED_LABEL_VALUE = "watch-closed-and-restarted"
TO_BE_CHANGED_LABEL_VALUE = "label-changed-and-restored"

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"


def configmap(name, label_value):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(
        name=name, labels={WATCH_CONFIGMAP_LABEL_KEY: label_value}))


def watch_config_maps(f, resource_version, *labels):
    """watchConfigMaps: a watch with the set-based selector ``key in (labels...)``."""
    # metav1.FormatLabelSelector(&LabelSelector{MatchExpressions: [{key, In, labels}]})
    selector = "%s in (%s)" % (WATCH_CONFIGMAP_LABEL_KEY, ",".join(sorted(set(labels))))
    kwargs = {"label_selector": selector}
    if resource_version:
        kwargs["resource_version"] = resource_version
    return Watcher(f.core.list_namespaced_config_map, f.namespace.metadata.name, **kwargs)


def set_config_map_data(cm, key, value):
    if cm.data is None:
        cm.data = {}
    cm.data[key] = value


def update_config_map(c, ns, name, update):
    """updateConfigMap (test/e2e/apimachinery/webhook.go): get, mutate, update; retry on
    conflict every 2s for up to 1 minute."""
    deadline = time.monotonic() + 60
    while True:
        cm = c.read_namespaced_config_map(name, ns)
        update(cm)
        try:
            return c.replace_namespaced_config_map(name, ns, cm)
        except ApiException as err:
            if not is_conflict(err) or time.monotonic() > deadline:
                raise
        time.sleep(2)


def wait_for_event(w, expect_type, expect_object, duration):
    deadline = time.monotonic() + duration
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return {"type": expect_type, "object": expect_object}, False
        closed = None
        try:
            actual = w.next(remaining)
        except WatchClosed as err:
            closed = err
        if closed is not None:
            fail("Watch closed unexpectedly (%s)", closed)
        if actual is None:
            return {"type": expect_type, "object": expect_object}, False
        logf("Got : %s", event_summary(actual))
        if expect_type == actual["type"] and (
                expect_object is None or semantic_equal(expect_object, actual["object"])):
            return actual, True
        if expect_type == actual["type"] and expect_object is not None:
            logf("not the expected object:\n%s", object_diff(expect_object, actual["object"]))


def expect_event(w, event_type, obj):
    event, ok = wait_for_event(w, event_type, obj, 60)
    if not ok:
        fail("Timed out waiting for expected watch notification: %s %s", event["type"],
             event["object"])


def expect_no_event(w, event_type, obj):
    event, ok = wait_for_event(w, event_type, obj, 10)
    if ok:
        fail("Unexpected watch notification observed: %s", event_summary(event))


@conformance("[sig-api-machinery] Watchers should observe add, update, and delete watch "
             "notifications on configmaps [Conformance]")
def test_watch_configmaps_with_multiple_watchers(new_framework):
    f = new_framework("watch")
    c = f.core
    ns = f.namespace.metadata.name
    watchers = []
    try:
        by("creating a watch on configmaps with label A")
        watch_a = watch_config_maps(f, "", MULTIPLE_WATCHERS_LABEL_VALUE_A)
        watchers.append(watch_a)

        by("creating a watch on configmaps with label B")
        watch_b = watch_config_maps(f, "", MULTIPLE_WATCHERS_LABEL_VALUE_B)
        watchers.append(watch_b)

        by("creating a watch on configmaps with label A or B")
        watch_ab = watch_config_maps(f, "", MULTIPLE_WATCHERS_LABEL_VALUE_A,
                                     MULTIPLE_WATCHERS_LABEL_VALUE_B)
        watchers.append(watch_ab)

        test_config_map_a = configmap("e2e-watch-test-configmap-a",
                                      MULTIPLE_WATCHERS_LABEL_VALUE_A)
        test_config_map_b = configmap("e2e-watch-test-configmap-b",
                                      MULTIPLE_WATCHERS_LABEL_VALUE_B)

        by("creating a configmap with label A and ensuring the correct watchers observe the "
           "notification")
        test_config_map_a = expect_no_error(c.create_namespaced_config_map, ns,
                                            test_config_map_a)
        expect_event(watch_a, ADDED, test_config_map_a)
        expect_event(watch_ab, ADDED, test_config_map_a)
        expect_no_event(watch_b, ADDED, test_config_map_a)

        by("modifying configmap A and ensuring the correct watchers observe the notification")
        test_config_map_a = expect_no_error(
            update_config_map, c, ns, test_config_map_a.metadata.name,
            lambda cm: set_config_map_data(cm, "mutation", "1"))
        expect_event(watch_a, MODIFIED, test_config_map_a)
        expect_event(watch_ab, MODIFIED, test_config_map_a)
        expect_no_event(watch_b, MODIFIED, test_config_map_a)

        by("modifying configmap A again and ensuring the correct watchers observe the "
           "notification")
        test_config_map_a = expect_no_error(
            update_config_map, c, ns, test_config_map_a.metadata.name,
            lambda cm: set_config_map_data(cm, "mutation", "2"))
        expect_event(watch_a, MODIFIED, test_config_map_a)
        expect_event(watch_ab, MODIFIED, test_config_map_a)
        expect_no_event(watch_b, MODIFIED, test_config_map_a)

        by("deleting configmap A and ensuring the correct watchers observe the notification")
        expect_no_error(c.delete_namespaced_config_map, test_config_map_a.metadata.name, ns)
        expect_event(watch_a, DELETED, None)
        expect_event(watch_ab, DELETED, None)
        expect_no_event(watch_b, DELETED, None)

        by("creating a configmap with label B and ensuring the correct watchers observe the "
           "notification")
        test_config_map_b = expect_no_error(c.create_namespaced_config_map, ns,
                                            test_config_map_b)
        expect_event(watch_b, ADDED, test_config_map_b)
        expect_event(watch_ab, ADDED, test_config_map_b)
        expect_no_event(watch_a, ADDED, test_config_map_b)

        by("deleting configmap B and ensuring the correct watchers observe the notification")
        expect_no_error(c.delete_namespaced_config_map, test_config_map_b.metadata.name, ns)
        expect_event(watch_b, DELETED, None)
        expect_event(watch_ab, DELETED, None)
        expect_no_event(watch_a, DELETED, None)
    finally:
        for w in watchers:
            w.stop()


@conformance("[sig-api-machinery] Watchers should be able to start watching from a specific "
             "resource version [Conformance]")
def test_watch_configmaps_from_resource_version(new_framework):
    f = new_framework("watch")
    c = f.core
    ns = f.namespace.metadata.name

    test_config_map = configmap("e2e-watch-test-resource-version",
                                FROM_RESOURCE_VERSION_LABEL_VALUE)

    by("creating a new configmap")
    test_config_map = expect_no_error(c.create_namespaced_config_map, ns, test_config_map)

    by("modifying the configmap once")
    test_config_map_first_update = expect_no_error(
        update_config_map, c, ns, test_config_map.metadata.name,
        lambda cm: set_config_map_data(cm, "mutation", "1"))

    by("modifying the configmap a second time")
    test_config_map_second_update = expect_no_error(
        update_config_map, c, ns, test_config_map.metadata.name,
        lambda cm: set_config_map_data(cm, "mutation", "2"))

    by("deleting the configmap")
    expect_no_error(c.delete_namespaced_config_map, test_config_map.metadata.name, ns)

    by("creating a watch on configmaps from the resource version returned by the first update")
    test_watch = watch_config_maps(f, test_config_map_first_update.metadata.resource_version,
                                   FROM_RESOURCE_VERSION_LABEL_VALUE)
    try:
        by("Expecting to observe notifications for all changes to the configmap after the "
           "first update")
        expect_event(test_watch, MODIFIED, test_config_map_second_update)
        expect_event(test_watch, DELETED, None)
    finally:
        test_watch.stop()


@conformance("[sig-api-machinery] Watchers should be able to restart watching from the last "
             "resource version observed by the previous watch [Conformance]")
def test_watch_configmaps_closed_and_restarted(new_framework):
    f = new_framework("watch")
    c = f.core
    ns = f.namespace.metadata.name

    config_map_name = "e2e-watch-test-watch-closed"
    test_config_map = configmap(config_map_name, WATCH_RESTARTED_LABEL_VALUE)

    watchers = []
    try:
        by("creating a watch on configmaps")
        test_watch_broken = watch_config_maps(f, "", WATCH_RESTARTED_LABEL_VALUE)
        watchers.append(test_watch_broken)

        by("creating a new configmap")
        test_config_map = expect_no_error(c.create_namespaced_config_map, ns, test_config_map)

        by("modifying the configmap once")
        expect_no_error(update_config_map, c, ns, test_config_map.metadata.name,
                        lambda cm: set_config_map_data(cm, "mutation", "1"))

        by("closing the watch once it receives two notifications")
        expect_event(test_watch_broken, ADDED, test_config_map)
        last_event, ok = wait_for_event(test_watch_broken, MODIFIED, None, 60)
        if not ok:
            fail("Timed out waiting for second watch notification")
        test_watch_broken.stop()

        by("modifying the configmap a second time, while the watch is closed")
        test_config_map_second_update = expect_no_error(
            update_config_map, c, ns, test_config_map.metadata.name,
            lambda cm: set_config_map_data(cm, "mutation", "2"))

        by("creating a new watch on configmaps from the last resource version observed by "
           "the first watch")
        last_event_config_map = last_event["object"]
        if not isinstance(last_event_config_map, client.V1ConfigMap):
            fail("Expected last notification to refer to a configmap but got: %s",
                 last_event)
        test_watch_restarted = watch_config_maps(
            f, last_event_config_map.metadata.resource_version, WATCH_RESTARTED_LABEL_VALUE)
        watchers.append(test_watch_restarted)

        by("deleting the configmap")
        expect_no_error(c.delete_namespaced_config_map, test_config_map.metadata.name, ns)

        by("Expecting to observe notifications for all changes to the configmap since the "
           "first watch closed")
        expect_event(test_watch_restarted, MODIFIED, test_config_map_second_update)
        expect_event(test_watch_restarted, DELETED, None)
    finally:
        for w in watchers:
            w.stop()


@conformance("[sig-api-machinery] Watchers should observe an object deletion if it stops "
             "meeting the requirements of the selector [Conformance]")
def test_watch_configmaps_label_changed(new_framework):
    f = new_framework("watch")
    c = f.core
    ns = f.namespace.metadata.name

    config_map_name = "e2e-watch-test-label-changed"
    test_config_map = configmap(config_map_name, TO_BE_CHANGED_LABEL_VALUE)

    by("creating a watch on configmaps with a certain label")
    test_watch = watch_config_maps(f, "", TO_BE_CHANGED_LABEL_VALUE)
    try:
        by("creating a new configmap")
        test_config_map = expect_no_error(c.create_namespaced_config_map, ns, test_config_map)

        by("modifying the configmap once")
        test_config_map_first_update = expect_no_error(
            update_config_map, c, ns, test_config_map.metadata.name,
            lambda cm: set_config_map_data(cm, "mutation", "1"))

        by("changing the label value of the configmap")

        def set_wrong_label(cm):
            cm.metadata.labels[WATCH_CONFIGMAP_LABEL_KEY] = "wrong-value"

        expect_no_error(update_config_map, c, ns, test_config_map.metadata.name,
                        set_wrong_label)

        by("Expecting to observe a delete notification for the watched object")
        expect_event(test_watch, ADDED, test_config_map)
        expect_event(test_watch, MODIFIED, test_config_map_first_update)
        expect_event(test_watch, DELETED, None)

        by("modifying the configmap a second time")
        test_config_map_second_update = expect_no_error(
            update_config_map, c, ns, test_config_map.metadata.name,
            lambda cm: set_config_map_data(cm, "mutation", "2"))

        by("Expecting not to observe a notification because the object no longer meets the "
           "selector's requirements")
        expect_no_event(test_watch, MODIFIED, test_config_map_second_update)

        by("changing the label value of the configmap back")

        def restore_label(cm):
            cm.metadata.labels[WATCH_CONFIGMAP_LABEL_KEY] = TO_BE_CHANGED_LABEL_VALUE

        test_config_map_label_restored = expect_no_error(
            update_config_map, c, ns, test_config_map.metadata.name, restore_label)

        by("modifying the configmap a third time")
        test_config_map_third_update = expect_no_error(
            update_config_map, c, ns, test_config_map.metadata.name,
            lambda cm: set_config_map_data(cm, "mutation", "3"))

        by("deleting the configmap")
        expect_no_error(c.delete_namespaced_config_map, test_config_map.metadata.name, ns)

        by("Expecting to observe an add notification for the watched object when the label "
           "value was restored")
        expect_event(test_watch, ADDED, test_config_map_label_restored)
        expect_event(test_watch, MODIFIED, test_config_map_third_update)
        expect_event(test_watch, DELETED, None)
    finally:
        test_watch.stop()


CREATE_EVENT, UPDATE_EVENT, DELETE_EVENT = 0, 1, 2


def produce_config_map_events(f, stop, min_wait_between_events, errors):
    """produceConfigMapEvents: random creates, unconditional updates and deletes."""
    c = f.core
    ns = f.namespace.metadata.name

    def name(i):
        return "cm-%d" % i

    existing = []
    i = 0
    updates = 0
    next_tick = time.monotonic()
    try:
        while True:
            next_tick += min_wait_between_events  # time.NewTicker
            delay = next_tick - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                next_tick = time.monotonic()
            op = random.randrange(3)
            if not existing:
                op = CREATE_EVENT
            if op == CREATE_EVENT:
                cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name(i)))
                try:
                    c.create_namespaced_config_map(ns, cm)
                except ApiException as err:
                    raise AssertionError("Failed to create configmap %s in namespace %s: %s"
                                         % (name(i), ns, describe_error(err)))
                existing.append(i)
                i += 1
            elif op == UPDATE_EVENT:
                idx = random.randrange(len(existing))
                cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(
                    name=name(existing[idx]), labels={"mutated": str(updates)}))
                try:
                    c.replace_namespaced_config_map(cm.metadata.name, ns, cm)
                except ApiException as err:
                    raise AssertionError("Failed to update configmap %s in namespace %s: %s"
                                         % (cm.metadata.name, ns, describe_error(err)))
                updates += 1
            elif op == DELETE_EVENT:
                idx = random.randrange(len(existing))
                try:
                    c.delete_namespaced_config_map(name(existing[idx]), ns)
                except ApiException as err:
                    raise AssertionError("Failed to delete configmap %s in namespace %s: %s"
                                         % (name(existing[idx]), ns, describe_error(err)))
                del existing[idx]
            if stop.is_set():
                return
    except BaseException as err:  # GinkgoRecover: the failure fails the test
        errors.append(err)


def wait_for_next_config_map_event(w):
    closed = None
    try:
        event = w.next(10)
    except WatchClosed as err:
        closed = err
    if closed is not None:
        fail("Watch closed unexpectedly (%s)", closed)
    if event is None:
        fail("timed out waiting for watch event")
    if isinstance(event["object"], client.V1ConfigMap):
        return event["object"]
    fail("expected config map, got %s", type(event["object"]).__name__)


@conformance("[sig-api-machinery] Watchers should receive events on concurrent watches in "
             "same order [Conformance]")
def test_watch_consistency(new_framework):
    f = new_framework("watch")
    c = f.core
    ns = f.namespace.metadata.name

    iterations = 100

    by("getting a starting resourceVersion")
    configmaps = expect_no_error(c.list_namespaced_config_map, ns)
    resource_version = configmaps.metadata.resource_version

    by("starting a background goroutine to produce watch events")
    stopc = threading.Event()
    producer_errors = []
    producer = threading.Thread(target=produce_config_map_events,
                                args=(f, stopc, 0.005, producer_errors), daemon=True)
    producer.start()

    by("creating watches starting from each resource version of the events produced and "
       "verifying they all receive resource versions in the same order")
    wcs = []
    try:
        for i in range(iterations):
            # watchtools.NewRetryWatcher(resourceVersion, listWatcher)
            if resource_version in ("", "0"):
                fail("Failed to watch configmaps in the namespace %s: initial RV %r is not "
                     "supported due to issues with underlying WATCH", ns, resource_version)
            wc = Watcher(c.list_namespaced_config_map, ns, retry=True,
                         resource_version=resource_version, allow_watch_bookmarks=True)
            wcs.append(wc)
            resource_version = wait_for_next_config_map_event(wcs[0]).metadata.resource_version
            for wc in wcs[1:]:
                e = wait_for_next_config_map_event(wc)
                if resource_version != e.metadata.resource_version:
                    fail("resource version mismatch, expected %s but got %s",
                         resource_version, e.metadata.resource_version)
            if producer_errors:
                raise producer_errors[0]
    finally:
        stopc.set()
        for wc in wcs:
            wc.stop()
        producer.join(timeout=30)
    if producer_errors:
        raise producer_errors[0]
