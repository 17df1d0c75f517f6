"""Ports of the ReplicaSet [Conformance] tests of test/e2e/apps/replica_set.go
(kubernetes/kubernetes): "Replace and Patch tests", "should validate Replicaset Status
endpoints", "should adopt matching pods on creation and release no longer matching pods",
"Replicaset should have a working scale subresource" and "should list and delete a
collection of ReplicaSets".

They need shepherd-controller-manager's ReplicaSet controller, the scheduler and the two
nodes (conftest.py): the pods run for real.

Image substitutions: AgnhostImage (imageutils.Agnhost, run with its default `pause`) becomes
AGNHOST_IMAGE (agnhost-lite, same Entrypoint/Cmd); the container name stays
AgnhostImageName ("agnhost"). imageutils.Pause is the same reference as upstream's
(PAUSE_IMAGE).

Not ported: "should serve a basic image on each replica with a public image": it checks
that each replica answers through the API server's pods/proxy subresource
(e2epod.WaitForPodsResponding), which Shepherd does not implement.
"""

import json

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (AGNHOST_IMAGE, poll, PAUSE_IMAGE, POD_START_TIMEOUT, PodClient, by,
                           compare_resource_version, conformance, describe_error,
                           expect_no_error, expect_valid_resource_version, fail, go_deref,
                           is_conflict, is_not_found, logf, pods_created_by_label, rand_string,
                           raw_call, retry_on_conflict, selector_from_set, to_model,
                           update_replica_set_with_retries, verify_pods_running, watch_until)

RS_RETRY_TIMEOUT = 2 * 60  # rsRetryTimeout

AGNHOST_IMAGE_NAME = "agnhost"  # AgnhostImageName
AGNHOST = AGNHOST_IMAGE         # AgnhostImage (see the module doc)


def new_rs(rs_name, replicas, rs_pod_labels, image_name, image, args):
    """newRS"""
    return client.V1ReplicaSet(
        metadata=client.V1ObjectMeta(name=rs_name, labels=rs_pod_labels),
        spec=client.V1ReplicaSetSpec(
            selector=client.V1LabelSelector(match_labels=rs_pod_labels),
            replicas=replicas,
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=rs_pod_labels),
                spec=client.V1PodSpec(
                    termination_grace_period_seconds=0,
                    containers=[client.V1Container(name=image_name, image=image,
                                                   args=args)]))))


def replicaset_framework(new_framework):
    """SIGDescribe("ReplicaSet"): NewDefaultFramework("replicaset"),
    NamespacePodSecurityLevel baseline."""
    return new_framework("replicaset", "baseline")



def _sanitize(obj):
    return client.ApiClient().sanitize_for_serialization(obj)


def _is_replica_set(event):
    return isinstance(event.get("object"), client.V1ReplicaSet)


# Release: v1.21
# Testname: ReplicaSet, is created, Replaced and Patched
# Description: Create a ReplicaSet (RS) with a single Pod. The Pod MUST be verified that it
# is running. The RS MUST scale to two replicas and verify the scale count The RS MUST be
# patched and verify that patch succeeded.
@conformance("[sig-apps] ReplicaSet Replace and Patch tests [Conformance]")
def test_rs_replace_and_patch(new_framework):
    """testRSLifeCycle"""
    f = replicaset_framework(new_framework)
    ns = f.namespace.metadata.name
    c = f.core
    apps = client.AppsV1Api(f.api_client)
    zero = 0

    # Create webserver pods.
    pod_name = "sample-pod"
    rs_pod_labels = {"name": pod_name, "pod": AGNHOST_IMAGE_NAME}

    rs_name = "test-rs"
    label = "test-rs=patched"
    label_map = {"test-rs": "patched"}
    replicas = 1
    rs_patch_replicas = 3
    rs_patch_image = PAUSE_IMAGE  # imageutils.GetE2EImage(imageutils.Pause)

    rs_list = expect_no_error(apps.list_replica_set_for_all_namespaces, label_selector=label,
                              explain="failed to list rsList")
    # Create a ReplicaSet
    rs = new_rs(rs_name, replicas, rs_pod_labels, AGNHOST_IMAGE_NAME, AGNHOST, None)
    created_rs = expect_no_error(apps.create_namespaced_replica_set, ns, rs)
    expect_valid_resource_version(created_rs)

    # Verify that the required pods have come up.
    err = verify_pods_running(c, ns, pod_name, selector_from_set({"name": pod_name}), False,
                              replicas)
    if err is not None:
        fail("Failed to create pods: %s", err)

    # Scale the ReplicaSet
    by('Scaling up "%s" replicaset' % rs_name)

    def scale(update):
        update.spec.replicas = 2

    _, err = update_replica_set_with_retries(apps, ns, rs_name, scale)
    if err is not None:
        fail("ReplicaSet fail to scale to %%!q(MISSING) replicasets: %s", err)

    # Patch the PeplicaSet
    by("patching the ReplicaSet")
    rs_patch = {
        "metadata": {"labels": label_map},
        "spec": {
            "replicas": rs_patch_replicas,
            "template": {
                "spec": {
                    "terminationGracePeriodSeconds": zero,
                    "containers": [{"name": rs_name, "image": rs_patch_image}],
                },
            },
        },
    }
    patched_rs = expect_no_error(apps.patch_namespaced_replica_set, rs_name, ns, rs_patch,
                                 explain="failed to patch ReplicaSet")  # strategic merge patch
    assert compare_resource_version(created_rs.metadata.resource_version,
                                    patched_rs.metadata.resource_version) == -1, \
        "patched object should have a larger resource version"

    def condition(event):
        if _is_replica_set(event):
            rset = event["object"]
            status = rset.status
            found = (rset.metadata.name == rs_name and
                     (rset.metadata.labels or {}).get("test-rs") == "patched" and
                     ((status.ready_replicas or 0) if status else 0) == rs_patch_replicas and
                     ((status.available_replicas or 0) if status else 0) == rs_patch_replicas and
                     rset.spec.template.spec.containers[0].image == rs_patch_image and
                     go_deref(rset.spec.template.spec.termination_grace_period_seconds,
                              "rset.Spec.Template.Spec.TerminationGracePeriodSeconds") == zero)
            if not found:
                logf("observed ReplicaSet %s in namespace %s with ReadyReplicas %s, "
                     "AvailableReplicas %s", rset.metadata.name, rset.metadata.namespace,
                     (status.ready_replicas or 0) if status else 0,
                     (status.available_replicas or 0) if status else 0)
            else:
                logf("observed Replicaset %s in namespace %s with ReadyReplicas %s found %s",
                     rset.metadata.name, rset.metadata.namespace, status.ready_replicas, found)
            return found, None
        logf("observed event type %r", event)
        return False, None

    _, err = watch_until(POD_START_TIMEOUT, rs_list.metadata.resource_version,
                         apps.list_namespaced_replica_set, ns, label_selector=label,
                         conditions=[condition])
    if err is not None:
        fail("failed to see replicas of %s in namespace %s scale to requested amount of %d: %s",
             rs.metadata.name, ns, rs_patch_replicas, err)


# Release: v1.22
# Testname: ReplicaSet, status sub-resource
# Description: Create a ReplicaSet resource which MUST succeed. Attempt to read, update and
# patch its status sub-resource; all mutating sub-resource operations MUST be visible to
# subsequent reads.
@conformance("[sig-apps] ReplicaSet should validate Replicaset Status endpoints [Conformance]")
def test_rs_status_endpoints(new_framework):
    """testRSStatus"""
    f = replicaset_framework(new_framework)
    ns = f.namespace.metadata.name
    c = f.core
    rs_client = client.AppsV1Api(f.api_client)

    # Define ReplicaSet Labels
    pod_name = "sample-pod"
    rs_pod_labels = {"name": pod_name, "pod": AGNHOST_IMAGE_NAME}
    label_selector = selector_from_set(rs_pod_labels)

    rs_name = "test-rs"
    replicas = 1

    rs_list = expect_no_error(rs_client.list_replica_set_for_all_namespaces,
                              label_selector=label_selector,
                              explain="failed to list Replicasets")

    by("Create a Replicaset")
    rs = new_rs(rs_name, replicas, rs_pod_labels, AGNHOST_IMAGE_NAME, AGNHOST, None)
    test_replica_set = expect_no_error(rs_client.create_namespaced_replica_set, ns, rs)

    by("Verify that the required pods have come up.")
    err = verify_pods_running(c, ns, pod_name, selector_from_set({"name": pod_name}), False,
                              replicas)
    if err is not None:
        fail("Failed to create pods: %s", err)

    by("Getting /status")
    # f.DynamicClient.Resource(replicasets).Namespace(ns).Get(ctx, rsName, {}, "status")
    rs_status_unstructured = expect_no_error(
        raw_call, f.api_client, "GET",
        "/apis/apps/v1/namespaces/%s/replicasets/%s/status" % (ns, rs_name),
        explain="Failed to fetch the status of replicaset %s in namespace %s" % (rs_name, ns))
    rs_status = to_model(rs_status_unstructured, "V1ReplicaSet")
    logf("Replicaset %s has Conditions: %s", rs_name,
         _sanitize(rs_status.status.conditions if rs_status.status else None))

    by("updating the Replicaset Status")
    updated = []

    def update():
        status_to_update = expect_no_error(rs_client.read_namespaced_replica_set, rs_name, ns,
                                           explain="Unable to retrieve replicaset %s" % rs_name)
        if status_to_update.status is None:
            status_to_update.status = client.V1ReplicaSetStatus(replicas=0)
        status_to_update.status.conditions = (status_to_update.status.conditions or []) + [
            client.V1ReplicaSetCondition(type="StatusUpdate", status="True", reason="E2E",
                                         message="Set from e2e test")]
        updated.append(rs_client.replace_namespaced_replica_set_status(rs_name, ns,
                                                                       status_to_update))
        return updated[-1]

    expect_no_error(retry_on_conflict, update, explain="Failed to update status.")
    logf("updatedStatus.Conditions: %s", _sanitize(updated[-1].status.conditions))

    def observed_other(event):
        obj = event.get("object")
        kind = type(obj).__name__ if obj is not None else "<nil>"
        logf("Observed %s event: %s", kind, event["type"])

    def matches(rs_obj):
        labels = rs_obj.metadata.labels or {}
        want = test_replica_set.metadata.labels or {}
        return (rs_obj.metadata.name == test_replica_set.metadata.name and
                rs_obj.metadata.namespace == test_replica_set.metadata.namespace and
                labels.get("name") == want.get("name") and
                labels.get("pod") == want.get("pod"))

    def status_updated(event):
        if _is_replica_set(event):
            rs_obj = event["object"]
            conditions = (rs_obj.status.conditions if rs_obj.status else None) or []
            found = matches(rs_obj)
            if not found:
                logf("Observed replicaset %s in namespace %s with annotations: %s & Conditions: "
                     "%s", rs_obj.metadata.name, rs_obj.metadata.namespace,
                     rs_obj.metadata.annotations, _sanitize(conditions))
                return False, None
            for cond in conditions:
                if (cond.type == "StatusUpdate" and cond.reason == "E2E" and
                        cond.message == "Set from e2e test"):
                    logf("Found replicaset %s in namespace %s with labels: %s annotations: %s & "
                         "Conditions: %s", rs_obj.metadata.name, rs_obj.metadata.namespace,
                         rs_obj.metadata.labels, rs_obj.metadata.annotations,
                         _sanitize(conditions))
                    return found, None
                logf("Observed replicaset %s in namespace %s with annotations: %s & Conditions: "
                     "%s", rs_obj.metadata.name, rs_obj.metadata.namespace,
                     rs_obj.metadata.annotations, _sanitize(conditions))
        observed_other(event)
        return False, None

    by("watching for the ReplicaSet status to be updated")
    _, err = watch_until(RS_RETRY_TIMEOUT, rs_list.metadata.resource_version,
                         rs_client.list_namespaced_replica_set, ns,
                         label_selector=label_selector, conditions=[status_updated])
    if err is not None:
        fail("failed to locate replicaset %s in namespace %s: %s",
             test_replica_set.metadata.name, ns, err)
    logf("Replicaset %s has an updated status", rs_name)

    by("patching the Replicaset Status")
    payload = '{"status":{"conditions":[{"type":"StatusPatched","status":"True"}]}}'
    logf("Patch payload: %s", payload)
    patched_replica_set = expect_no_error(
        raw_call, f.api_client, "PATCH",
        "/apis/apps/v1/namespaces/%s/replicasets/%s/status" % (ns, rs_name),
        body=json.loads(payload), headers={"Content-Type": "application/merge-patch+json"},
        response_type="V1ReplicaSet", explain="Failed to patch status.")
    logf("Patched status conditions: %s", _sanitize(patched_replica_set.status.conditions))

    def status_patched(event):
        if _is_replica_set(event):
            rs_obj = event["object"]
            conditions = (rs_obj.status.conditions if rs_obj.status else None) or []
            found = matches(rs_obj)
            if not found:
                logf("Observed replicaset %s in namespace %s with annotations: %s & Conditions: "
                     "%s", rs_obj.metadata.name, rs_obj.metadata.namespace,
                     rs_obj.metadata.annotations, _sanitize(conditions))
                return False, None
            for cond in conditions:
                if cond.type == "StatusPatched":
                    logf("Found replicaset %s in namespace %s with labels: %s annotations: %s & "
                         "Conditions: %s", rs_obj.metadata.name, rs_obj.metadata.namespace,
                         rs_obj.metadata.labels, rs_obj.metadata.annotations, _sanitize(cond))
                    return found, None
                logf("Observed replicaset %s in namespace %s with annotations: %s & Conditions: "
                     "%s", rs_obj.metadata.name, rs_obj.metadata.namespace,
                     rs_obj.metadata.annotations, _sanitize(cond))
        observed_other(event)
        return False, None

    by("watching for the Replicaset status to be patched")
    _, err = watch_until(RS_RETRY_TIMEOUT, rs_list.metadata.resource_version,
                         rs_client.list_namespaced_replica_set, ns,
                         label_selector=label_selector, conditions=[status_patched])
    if err is not None:
        fail("failed to locate replicaset %s in namespace %s: %s",
             test_replica_set.metadata.name, ns, err)
    logf("Replicaset %s has a patched status", rs_name)


# Release: v1.13
# Testname: Replica Set, adopt matching pods and release non matching pods
# Description: A Pod is created, then a Replica Set (RS) whose label selector will match the
# Pod. The RS MUST either adopt the Pod or delete and replace it with a new Pod. When the
# labels on one of the Pods owned by the RS change to no longer match the RS's label
# selector, the RS MUST release the Pod and update the Pod's owner references
@conformance("[sig-apps] ReplicaSet should adopt matching pods on creation and release no "
             "longer matching pods [Conformance]")
def test_rs_adopt_matching_and_release_not_matching(new_framework):
    """testRSAdoptMatchingAndReleaseNotMatching"""
    f = replicaset_framework(new_framework)
    ns = f.namespace.metadata.name
    apps = client.AppsV1Api(f.api_client)
    name = "pod-adoption-release"
    rs_labels = {"name": name}
    by("Given a Pod with a 'name' label %s is created" % name)
    p = PodClient(f).create_sync(client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=rs_labels),
        spec=client.V1PodSpec(containers=[client.V1Container(name=name, image=AGNHOST)])))

    by("When a replicaset with a matching selector is created")
    replicas = 1
    rs_st = new_rs(name, replicas, rs_labels, name, AGNHOST, None)
    rs_st.spec.selector = client.V1LabelSelector(match_labels=rs_labels)
    rs = expect_no_error(apps.create_namespaced_replica_set, ns, rs_st)

    by("Then the orphan pod is adopted")

    def adopted():
        try:
            p2 = f.core.read_namespaced_pod(p.metadata.name, ns)
        except ApiException as err:
            # The Pod p should either be adopted or deleted by the ReplicaSet
            if is_not_found(err):
                return True, None
            fail("unexpected error: %s", describe_error(err))
        for owner in p2.metadata.owner_references or []:
            if go_deref(owner.controller, "owner.Controller") and owner.uid == rs.metadata.uid:
                # pod adopted
                return True, None
        # pod still not adopted
        return False, None

    err = poll(1, 60, adopted)
    if err is not None:
        fail("unexpected error: %s", err)

    by("When the matched label of one of its pods change")
    pods, err = pods_created_by_label(f.core, ns, rs.metadata.name, replicas,
                                      selector_from_set(rs_labels))
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

    err = poll(1, 60, relabel)
    if err is not None:
        fail("unexpected error: %s", err)

    by("Then the pod is released")

    def released():
        p2 = expect_no_error(f.core.read_namespaced_pod, p.metadata.name, ns)
        for owner in p2.metadata.owner_references or []:
            if go_deref(owner.controller, "owner.Controller") and owner.uid == rs.metadata.uid:
                # pod still belonging to the replicaset
                return False, None
        # pod already released
        return True, None

    err = poll(1, 60, released)
    if err is not None:
        fail("unexpected error: %s", err)


def _expect_equal(actual, expected, explain=""):
    """gomega.Expect(actual).To(gomega.Equal(expected), explain...)"""
    if actual != expected or type(actual) is not type(expected):
        fail("%sExpected\n    <%s>: %r\nto equal\n    <%s>: %r",
             (explain + "\n") if explain else "", type(actual).__name__, actual,
             type(expected).__name__, expected)


def _spec_replicas(rs):
    return go_deref(rs.spec.replicas if rs.spec is not None else None, "rs.Spec.Replicas")


# Release: v1.21
# Testname: ReplicaSet, completes the scaling of a ReplicaSet subresource
# Description: Create a ReplicaSet (RS) with a single Pod. The Pod MUST be verified
# that it is running. The RS MUST get and verify the scale subresource count.
# The RS MUST update and verify the scale subresource. The RS MUST patch and verify
# a scale subresource.
@conformance("[sig-apps] ReplicaSet Replicaset should have a working scale subresource "
             "[Conformance]")
def test_rs_scale_subresources(new_framework):
    """testRSScaleSubresources"""
    f = replicaset_framework(new_framework)
    ns = f.namespace.metadata.name
    c = f.core
    apps = client.AppsV1Api(f.api_client)

    # Create webserver pods.
    pod_name = "sample-pod"
    rs_pod_labels = {"name": pod_name, "pod": AGNHOST_IMAGE_NAME}

    rs_name = "test-rs"
    replicas = 1
    by("Creating replica set %r that asks for more than the allowed pod quota" % rs_name)
    rs = new_rs(rs_name, replicas, rs_pod_labels, AGNHOST_IMAGE_NAME, AGNHOST, None)
    expect_no_error(apps.create_namespaced_replica_set, ns, rs)

    # Verify that the required pods have come up.
    err = verify_pods_running(c, ns, pod_name, selector_from_set({"name": pod_name}), False,
                              replicas)
    if err is not None:
        fail("error in waiting for pods to come up: %s: %s", err, err)

    by("getting scale subresource")
    try:
        scale = apps.read_namespaced_replica_set_scale(rs_name, ns)
    except ApiException as err:
        fail("Failed to get scale subresource: %s", describe_error(err))
    _expect_equal(scale.spec.replicas or 0, 1)
    _expect_equal(scale.status.replicas or 0, 1)

    by("updating a scale subresource")
    scale.metadata.resource_version = ""  # indicate the scale update should be unconditional
    scale.spec.replicas = 2
    try:
        scale_result = apps.replace_namespaced_replica_set_scale(rs_name, ns, scale)
    except ApiException as err:
        fail("Failed to put scale subresource: %s", describe_error(err))
    _expect_equal(scale_result.spec.replicas or 0, 2)

    by("verifying the replicaset Spec.Replicas was modified")
    try:
        rs = apps.read_namespaced_replica_set(rs_name, ns)
    except ApiException as err:
        fail("Failed to get statefulset resource: %s", describe_error(err))
    _expect_equal(_spec_replicas(rs), 2)

    by("Patch a scale subresource")
    scale.metadata.resource_version = ""  # indicate the scale update should be unconditional
    scale.spec.replicas = 4  # should be 2 after "UpdateScale" operation, now Patch to 4
    # json.Marshal(autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 4}}): the zero
    # ObjectMeta and ScaleStatus are structs, which encoding/json always writes.
    rs_scale_patch_payload = {"metadata": {"creationTimestamp": None},
                              "spec": {"replicas": scale.spec.replicas},
                              "status": {"replicas": 0}}
    expect_no_error(raw_call, f.api_client, "PATCH",
                    "/apis/apps/v1/namespaces/%s/replicasets/%s/scale" % (ns, rs_name),
                    body=rs_scale_patch_payload,
                    headers={"Content-Type": "application/strategic-merge-patch+json"},
                    response_type="V1Scale", explain="Failed to patch replicaset")

    rs = expect_no_error(apps.read_namespaced_replica_set, rs_name, ns,
                         explain="Failed to get replicaset resource")
    _expect_equal(_spec_replicas(rs), 4, "replicaset should have 4 replicas")


# Release: v1.22
# Testname: ReplicaSet, list and delete a collection of ReplicaSets
# Description: When a ReplicaSet is created it MUST succeed. It
# MUST succeed when listing ReplicaSets via a label selector. It
# MUST succeed when deleting the ReplicaSet via deleteCollection.
@conformance("[sig-apps] ReplicaSet should list and delete a collection of ReplicaSets "
             "[Conformance]")
def test_rs_list_delete_collection(new_framework):
    """listRSDeleteCollection"""
    f = replicaset_framework(new_framework)
    ns = f.namespace.metadata.name
    c = f.core
    rs_client = client.AppsV1Api(f.api_client)
    one = 1
    rs_name = "test-rs"
    replicas = 3
    e2e_value = rand_string(5)

    # Define ReplicaSet Labels
    pod_name = "sample-pod"
    rs_pod_labels = {"name": pod_name, "pod": AGNHOST_IMAGE_NAME, "e2e": e2e_value}

    by("Create a ReplicaSet")
    rs = new_rs(rs_name, replicas, rs_pod_labels, AGNHOST_IMAGE_NAME, AGNHOST, None)
    expect_no_error(rs_client.create_namespaced_replica_set, ns, rs)

    by("Verify that the required pods have come up")
    err = verify_pods_running(c, ns, pod_name, selector_from_set({"name": pod_name}), False,
                              replicas)
    if err is not None:
        fail("Failed to create pods: %s: %s", err, err)
    r = expect_no_error(rs_client.read_namespaced_replica_set, rs_name, ns,
                        explain="failed to get ReplicaSets")
    logf("Replica Status: %s", _sanitize(r.status))

    by("Listing all ReplicaSets")
    rs_list = expect_no_error(rs_client.list_replica_set_for_all_namespaces,
                              label_selector="e2e=" + e2e_value,
                              explain="failed to list ReplicaSets")
    if len(rs_list.items) != 1:
        fail("filtered list wasn't found\nExpected\n    %s\nto have length 1",
             [i.metadata.name for i in rs_list.items])

    by("DeleteCollection of the ReplicaSets")
    expect_no_error(rs_client.delete_collection_namespaced_replica_set, ns,
                    label_selector="e2e=" + e2e_value,
                    body=client.V1DeleteOptions(grace_period_seconds=one),
                    explain="failed to delete ReplicaSets")

    by("After DeleteCollection verify that ReplicaSets have been deleted")
    rs_list = expect_no_error(rs_client.list_replica_set_for_all_namespaces,
                              label_selector="e2e=" + e2e_value,
                              explain="failed to list ReplicaSets")
    if rs_list.items:
        fail("filtered list should have no replicas\nExpected\n    %s\nto be empty",
             [_sanitize(i.metadata) for i in rs_list.items])
