"""Ports of the ReplicationController [Conformance] tests of test/e2e/apps/rc.go
(kubernetes/kubernetes v1.32): "should adopt matching pods on creation", "should release no
longer matching pods", "should test the lifecycle of a ReplicationController" and "should
get and update a ReplicationController scale".

They need shepherd-controller-manager's ReplicationController controller (the replication
manager), the scheduler and the two nodes (conftest.py): the pods run for real.

Image substitutions: WebserverImage (imageutils.Httpd, a web server that runs until it is
stopped) and imageutils.Nginx (likewise) become AGNHOST_IMAGE (agnhost-lite, whose default
command `pause` runs until it is stopped); the container names stay upstream's
(WebserverImageName "httpd", the pod's name, "rc-test").

Not ported:
* "should serve a basic image on each replica with a public image": it checks that each
  replica answers through the API server's pods/proxy subresource
  (e2epod.WaitForPodsResponding), which Shepherd does not implement.
* "should surface a failure condition on a common issue like exceeded quota": it needs a
  ResourceQuota (and the quota admission and controller), which Shepherd does not have.
"""

import json

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (AGNHOST_IMAGE, POD_START_TIMEOUT, PodClient, by, conformance,
                           describe_error, expect_no_error, fail, go_deref, is_conflict,
                           is_not_found, poll, raw_call, rand_string, to_model)
from e2e_rc import (check_replication_controller_status_replica_count, new_rc, pods_created,
                    watch_event_sequence_verifier, watch_until_without_retry)

WEBSERVER_IMAGE_NAME = "httpd"   # WebserverImageName
WEBSERVER_IMAGE = AGNHOST_IMAGE  # WebserverImage (imageutils.Httpd), see the module doc
NGINX_IMAGE = AGNHOST_IMAGE      # imageutils.GetE2EImage(imageutils.Nginx), likewise

CONTEXT_DEADLINE = "context deadline exceeded"  # PollUntilContextTimeout's error

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"


def rc_framework(new_framework):
    """SIGDescribe("ReplicationController"): NewDefaultFramework("replication-controller"),
    NamespacePodSecurityLevel baseline."""
    return new_framework("replication-controller", "baseline")


def _status(rc, field):
    st = rc.status if rc is not None else None
    return (getattr(st, field) if st is not None else None) or 0


def _as_rc(event):
    """json.Marshal(watchEvent.Object) then json.Unmarshal into a *v1.ReplicationController:
    the typed object the watch decoded (an RC; for a Status object the fields are zero)."""
    obj = event.get("object")
    if isinstance(obj, client.V1ReplicationController):
        return obj
    return client.V1ReplicationController(metadata=client.V1ObjectMeta(),
                                          status=client.V1ReplicationControllerStatus(
                                              replicas=0))


# Release: v1.13
# Testname: Replication Controller, adopt matching pods
# Description: An ownerless Pod is created, then a Replication Controller (RC) is created
# whose label selector will match the Pod. The RC MUST either adopt the Pod or delete and
# replace it with a new Pod
@conformance("[sig-apps] ReplicationController should adopt matching pods on creation "
             "[Conformance]")
def test_rc_adopt_matching_pods_on_creation(new_framework):
    """testRCAdoptMatchingOrphans"""
    f = rc_framework(new_framework)
    ns = f.namespace.metadata.name
    name = "pod-adoption"
    by("Given a Pod with a 'name' label %s is created" % name)
    p = PodClient(f).create_sync(client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"name": name}),
        spec=client.V1PodSpec(containers=[client.V1Container(name=name,
                                                             image=WEBSERVER_IMAGE)])))

    by("When a replication controller with a matching selector is created")
    replicas = 1
    rc_st = new_rc(name, replicas, {"name": name}, name, WEBSERVER_IMAGE, None)
    rc_st.spec.selector = {"name": name}
    rc = expect_no_error(f.core.create_namespaced_replication_controller, ns, rc_st)

    by("Then the orphan pod is adopted")

    def adopted():
        try:
            p2 = f.core.read_namespaced_pod(p.metadata.name, ns)
        except ApiException as err:
            # The Pod p should either be adopted or deleted by the RC
            if is_not_found(err):
                return True, None
            fail("unexpected error: %s", describe_error(err))
        for owner in p2.metadata.owner_references or []:
            if go_deref(owner.controller, "owner.Controller") and owner.uid == rc.metadata.uid:
                # pod adopted
                return True, None
        # pod still not adopted
        return False, None

    err = poll(1, 60, adopted, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("unexpected error: %s", err)


# Release: v1.13
# Testname: Replication Controller, release pods
# Description: A Replication Controller (RC) is created, and its Pods are created. When the
# labels on one of the Pods change to no longer match the RC's label selector, the RC MUST
# release the Pod and update the Pod's owner references.
@conformance("[sig-apps] ReplicationController should release no longer matching pods "
             "[Conformance]")
def test_rc_release_no_longer_matching_pods(new_framework):
    """testRCReleaseControlledNotMatching"""
    f = rc_framework(new_framework)
    ns = f.namespace.metadata.name
    name = "pod-release"
    by("Given a ReplicationController is created")
    replicas = 1
    rc_st = new_rc(name, replicas, {"name": name}, name, WEBSERVER_IMAGE, None)
    rc_st.spec.selector = {"name": name}
    rc = expect_no_error(f.core.create_namespaced_replication_controller, ns, rc_st)

    by("When the matched label of one of its pods change")
    pods, err = pods_created(f.core, ns, rc.metadata.name, replicas)
    if err is not None:
        fail("unexpected error: %s", err)

    p = pods.items[0]

    def relabel():
        pod = expect_no_error(f.core.read_namespaced_pod, p.metadata.name, ns)
        pod.metadata.labels = {"name": "not-matching-name"}
        try:
            f.core.replace_namespaced_pod(p.metadata.name, ns, pod)
        except ApiException as err:
            if is_conflict(err):
                return False, None
            return False, describe_error(err)
        return True, None

    err = poll(1, 60, relabel, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("unexpected error: %s", err)

    by("Then the pod is released")

    def released():
        p2 = expect_no_error(f.core.read_namespaced_pod, p.metadata.name, ns)
        for owner in p2.metadata.owner_references or []:
            if go_deref(owner.controller, "owner.Controller") and owner.uid == rc.metadata.uid:
                # pod still belonging to the replication controller
                return False, None
        # pod already released
        return True, None

    err = poll(1, 60, released, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("unexpected error: %s", err)


# Release: v1.20
# Testname: Replication Controller, lifecycle
# Description: A Replication Controller (RC) is created, read, patched, and deleted with
# verification.
@conformance("[sig-apps] ReplicationController should test the lifecycle of a "
             "ReplicationController [Conformance]")
def test_rc_lifecycle(new_framework):
    f = rc_framework(new_framework)
    ns = f.namespace.metadata.name
    core = f.core
    test_rc_name = "rc-test"
    test_rc_namespace = ns
    test_rc_initial_replica_count = 1
    test_rc_max_replica_count = 2
    expected_watch_events = [ADDED, MODIFIED, MODIFIED, MODIFIED, MODIFIED, DELETED]

    rc_test = client.V1ReplicationController(
        metadata=client.V1ObjectMeta(name=test_rc_name, labels={"test-rc-static": "true"}),
        spec=client.V1ReplicationControllerSpec(
            replicas=test_rc_initial_replica_count,
            selector={"test-rc-static": "true"},
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(name=test_rc_name,
                                             labels={"test-rc-static": "true"}),
                spec=client.V1PodSpec(containers=[client.V1Container(
                    name=test_rc_name, image=NGINX_IMAGE)]))))

    def expect_event(watcher, timeout, event_type, failf_msg):
        """One watchUntilWithoutRetry for the next event of `event_type`, appended to
        actualWatchEvents."""
        found = []

        def cond(watch_event):
            if watch_event["type"] != event_type:
                return False, None
            actual_watch_events.append(watch_event["type"])
            found.append(True)
            return True, None

        _, err = watch_until_without_retry(watcher, timeout, cond)
        if err is not None:
            fail("Wait until condition with watch events should not return an error: %s", err)
        if not found:
            fail(failf_msg)

    actual_watch_events = []

    def scenario(retry_watcher):
        del actual_watch_events[:]
        by("creating a ReplicationController")
        # Create a ReplicationController
        expect_no_error(core.create_namespaced_replication_controller, test_rc_namespace,
                        rc_test, explain="Failed to create ReplicationController")

        by("waiting for RC to be added")
        expect_event(retry_watcher, 60, ADDED, "failed to find RC %s event" % ADDED)

        by("waiting for available Replicas")
        event_found = []

        def available(watch_event):
            rc = _as_rc(watch_event)
            if (_status(rc, "replicas") != test_rc_initial_replica_count or
                    _status(rc, "ready_replicas") != test_rc_initial_replica_count):
                return False, None
            event_found.append(True)
            return True, None

        _, err = watch_until_without_retry(retry_watcher, POD_START_TIMEOUT, available)
        if err is not None:
            fail("Wait for condition with watch events should not return an error: %s", err)
        if not event_found:
            fail("RC has not reached ReadyReplicas count of %d", test_rc_initial_replica_count)

        # json.Marshal(v1.ReplicationController{ObjectMeta: {Labels: {"test-rc": "patched"}}})
        rc_label_patch_payload = {"metadata": {"creationTimestamp": None,
                                               "labels": {"test-rc": "patched"}},
                                  "spec": {}, "status": {"replicas": 0}}
        # Patch the ReplicationController
        by("patching ReplicationController")
        test_rc_patched = expect_no_error(
            core.patch_namespaced_replication_controller, test_rc_name, test_rc_namespace,
            rc_label_patch_payload, explain="Failed to patch ReplicationController")
        labels = test_rc_patched.metadata.labels or {}
        if labels.get("test-rc") != "patched":
            fail("failed to patch RC\nExpected\n    %r\nto have {key: value}\n    "
                 "{'test-rc': 'patched'}", labels)
        by("waiting for RC to be modified")
        expect_event(retry_watcher, 60, MODIFIED, "failed to find RC %s event" % ADDED)

        rc_status_patch_payload = json.loads(json.dumps(
            {"status": {"readyReplicas": 0, "availableReplicas": 0}}, sort_keys=True))

        # Patch the ReplicationController's status
        by("patching ReplicationController status")
        rc_status = expect_no_error(
            core.patch_namespaced_replication_controller_status, test_rc_name,
            test_rc_namespace, rc_status_patch_payload,
            explain="Failed to patch ReplicationControllerStatus")
        if _status(rc_status, "ready_replicas") != 0:
            fail("ReplicationControllerStatus's readyReplicas does not equal 0\nExpected\n    "
                 "<int32>: %d\nto equal\n    <int32>: 0", _status(rc_status, "ready_replicas"))
        by("waiting for RC to be modified")
        expect_event(retry_watcher, 60, MODIFIED, "failed to find RC %s event" % ADDED)

        by("waiting for available Replicas")

        def replicas_back(watch_event):
            rc = _as_rc(watch_event)
            if _status(rc, "replicas") != test_rc_initial_replica_count:
                return False, None
            return True, None

        _, err = watch_until_without_retry(retry_watcher, None, replicas_back)
        if err is not None:
            fail("Failed to find updated ready replica count: %s", err)
        # (eventFound is still true from the previous wait, as upstream)

        by("fetching ReplicationController status")
        rc_status_unstructured = expect_no_error(
            raw_call, f.api_client, "GET",
            "/api/v1/namespaces/%s/replicationcontrollers/%s/status" % (test_rc_namespace,
                                                                         test_rc_name),
            explain="Failed to fetch ReplicationControllerStatus")
        rc_status = to_model(rc_status_unstructured, "V1ReplicationController")
        if _status(rc_status, "replicas") != test_rc_initial_replica_count:
            fail("ReplicationController ReplicaSet cound does not match initial Replica count"
                 "\nExpected\n    <int32>: %d\nto equal\n    <int32>: %d",
                 _status(rc_status, "replicas"), test_rc_initial_replica_count)

        # json.Marshal(autoscalingv1.Scale{Spec: {Replicas: testRcMaxReplicaCount}})
        rc_scale_patch_payload = {"metadata": {"creationTimestamp": None},
                                  "spec": {"replicas": test_rc_max_replica_count},
                                  "status": {"replicas": 0}}

        # Patch the ReplicationController's scale
        by("patching ReplicationController scale")
        expect_no_error(core.patch_namespaced_replication_controller_scale, test_rc_name,
                        test_rc_namespace, rc_scale_patch_payload,
                        explain="Failed to patch ReplicationControllerScale")
        by("waiting for RC to be modified")
        expect_event(retry_watcher, POD_START_TIMEOUT, MODIFIED,
                     "Failed to find RC %s event" % ADDED)

        by("waiting for ReplicationController's scale to be the max amount")
        event_found = []

        def at_max(watch_event):
            rc = _as_rc(watch_event)
            if (rc.metadata.name != test_rc_name or
                    rc.metadata.namespace != test_rc_namespace or
                    _status(rc, "replicas") != test_rc_max_replica_count or
                    _status(rc, "ready_replicas") != test_rc_max_replica_count):
                return False, None
            event_found.append(True)
            return True, None

        _, err = watch_until_without_retry(retry_watcher, None, at_max)
        if err is not None:
            fail("Wait until condition with watch events should not return an error: %s", err)
        if not event_found:
            fail("Failed to find updated ready replica count")

        # Get the ReplicationController
        by("fetching ReplicationController; ensuring that it's patched")
        rc = expect_no_error(core.read_namespaced_replication_controller, test_rc_name,
                             test_rc_namespace, explain="failed to fetch ReplicationController")
        labels = rc.metadata.labels or {}
        if labels.get("test-rc") != "patched":
            fail("ReplicationController is missing a label from earlier patch\nExpected\n    "
                 "%r\nto have {key: value}\n    {'test-rc': 'patched'}", labels)

        rc_status_update_payload = rc
        if rc_status_update_payload.status is None:
            rc_status_update_payload.status = client.V1ReplicationControllerStatus(replicas=0)
        rc_status_update_payload.status.available_replicas = 1
        rc_status_update_payload.status.ready_replicas = 1

        # Replace the ReplicationController's status
        by("updating ReplicationController status")
        expect_no_error(core.replace_namespaced_replication_controller_status,
                        rc_status_update_payload.metadata.name, test_rc_namespace,
                        rc_status_update_payload,
                        explain="failed to update ReplicationControllerStatus")

        by("waiting for RC to be modified")
        expect_event(retry_watcher, 60, MODIFIED, "failed to find RC %s event" % ADDED)

        by("listing all ReplicationControllers")
        rcs = expect_no_error(core.list_replication_controller_for_all_namespaces,
                              label_selector="test-rc-static=true",
                              explain="failed to list ReplicationController")
        if not rcs.items:
            fail("Expected to find a ReplicationController but none was found")

        by("checking that ReplicationController has expected values")
        found_rc = False
        for rc_item in rcs.items:
            item_labels = rc_item.metadata.labels or {}
            if (rc_item.metadata.name == test_rc_name and
                    rc_item.metadata.namespace == test_rc_namespace and
                    item_labels.get("test-rc-static") == "true" and
                    item_labels.get("test-rc") == "patched"):
                found_rc = True
        if not found_rc:
            fail("ReplicationController doesn't have expected values.\nValues that are in the "
                 "ReplicationController list:\n%s",
                 json.dumps(client.ApiClient().sanitize_for_serialization(rcs.items)))

        # Delete ReplicationController
        by("deleting ReplicationControllers by collection")
        expect_no_error(core.delete_collection_namespaced_replication_controller,
                        test_rc_namespace, label_selector="test-rc-static=true",
                        body=client.V1DeleteOptions(),
                        explain="Failed to delete ReplicationControllers")

        by("waiting for ReplicationController to have a DELETED watchEvent")
        expect_event(retry_watcher, 60, DELETED, "failed to find RC %s event" % ADDED)
        return list(actual_watch_events)

    def retry_cleanup():
        try:
            core.delete_collection_namespaced_replication_controller(
                test_rc_namespace, label_selector="test-rc-static=true",
                body=client.V1DeleteOptions())
        except ApiException:
            pass  # upstream discards DeleteCollection's error and returns a nil err
        return None

    watch_event_sequence_verifier(core.list_namespaced_replication_controller,
                                  test_rc_namespace, test_rc_name, "test-rc-static=true",
                                  expected_watch_events, scenario, retry_cleanup)


# Release: v1.26
# Testname: Replication Controller, get and update ReplicationController scale
# Description: A ReplicationController is created which MUST succeed. It MUST succeed when
# reading the ReplicationController scale. When updating the ReplicationController scale it
# MUST succeed and the field MUST equal the new value.
@conformance("[sig-apps] ReplicationController should get and update a ReplicationController "
             "scale [Conformance]")
def test_rc_get_and_update_scale(new_framework):
    f = rc_framework(new_framework)
    ns = f.namespace.metadata.name
    rc_client = f.core
    rc_name = "e2e-rc-" + rand_string(5)
    initial_rc_replica_count = 1
    expected_rc_replica_count = 2

    by("Creating ReplicationController %r" % rc_name)
    rc = new_rc(rc_name, initial_rc_replica_count, {"name": rc_name}, WEBSERVER_IMAGE_NAME,
                WEBSERVER_IMAGE, None)
    try:
        rc_client.create_namespaced_replication_controller(ns, rc)
    except ApiException as err:
        fail("Failed to create ReplicationController: %s", describe_error(err))

    err = poll(1, 60, check_replication_controller_status_replica_count(
        f, rc_name, initial_rc_replica_count), timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("failed to confirm the quantity of ReplicationController replicas: %s", err)

    by("Getting scale subresource for ReplicationController %r" % rc_name)
    try:
        scale = rc_client.read_namespaced_replication_controller_scale(rc_name, ns)
    except ApiException as err:
        fail("Failed to get scale subresource: %s", describe_error(err))
    status_replicas = (scale.status.replicas if scale.status else 0) or 0
    if status_replicas != initial_rc_replica_count:
        fail("Failed to get the current replica count\nExpected\n    <int32>: %d\nto equal\n"
             "    <int32>: %d", status_replicas, initial_rc_replica_count)

    by("Updating a scale subresource")
    scale.metadata.resource_version = ""  # indicate the scale update should be unconditional
    scale.spec.replicas = expected_rc_replica_count
    try:
        rc_client.replace_namespaced_replication_controller_scale(rc_name, ns, scale)
    except ApiException as err:
        fail("Failed to update scale subresource: %s", describe_error(err))

    by("Verifying replicas where modified for replication controller %r" % rc_name)
    err = poll(1, 60, check_replication_controller_status_replica_count(
        f, rc_name, expected_rc_replica_count), timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("failed to confirm the quantity of ReplicationController replicas: %s", err)
