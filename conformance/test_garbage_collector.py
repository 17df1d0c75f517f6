"""Ports of the Garbage collector [Conformance] tests of
test/e2e/apimachinery/garbage_collector.go (kubernetes/kubernetes v1.32): "should not be
blocked by dependency circle", "should orphan RS created by deployment when
deleteOptions.PropagationPolicy is Orphan", "should delete RS created by deployment when not
orphaning", and the ReplicationController ones: "should delete pods created by rc when not
orphaning", "should orphan pods created by rc if delete options say so", "should keep the rc
around until all its pods are deleted if the deleteOptions says so" and "should not delete
dependents that have both valid owner and owner that's waiting for dependents to be
deleted".

They need shepherd-controller-manager's garbage collector, and the Deployment, ReplicaSet
and ReplicationController controllers, the scheduler and the two nodes (conftest.py): the
pods run for real. estimateMaximumPods gives 100 replicas here (two nodes with 110
allocatable pods each: half of 220, bounded to [10, 100]), so three of the RC tests run 100
real pods.

Image substitution: imageutils.Nginx (a server that runs until it is stopped) becomes
AGNHOST_IMAGE (agnhost-lite, whose default command `pause` runs until it is stopped); the
container keeps upstream's name "nginx".

gatherMetrics: upstream's MetricsGrabber grabs kube-controller-manager metrics only from a
kube-system pod named kube-controller-manager-*; without one (as here) it logs that it
skips the gathering. The port lists kube-system pods the same way and logs the same.
"""

import json
import re
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (AGNHOST_IMAGE, CONTEXT_DEADLINE, POLL, POLL_TIMED_OUT, by,
                           conformance, describe_error, expect_no_error, fail,
                           get_ready_schedulable_nodes, go_deref, is_not_found, logf,
                           new_deployment, poll)
from e2e_rc import delete_pods_with_grace_period

GC_INFORMER_RESYNC_RETRY_TIMEOUT = 60  # gcInformerResyncRetryTimeout
REPLICA_SYNC_TIMEOUT = 2 * 60          # replicaSyncTimeout
NGINX_IMAGE = AGNHOST_IMAGE  # imageutils.GetE2EImage(imageutils.Nginx), see the module doc

_label_count = 0  # lablecount


def get_uniq_label(labelkey, labelvalue):
    """getUniqLabel"""
    global _label_count
    _label_count += 1
    return {"%s-%05d" % (labelkey, _label_count): "%s-%05d" % (labelvalue, _label_count)}


def get_foreground_options():
    return client.V1DeleteOptions(propagation_policy="Foreground")


def get_background_options():
    return client.V1DeleteOptions(propagation_policy="Background")


def get_orphan_options():
    return client.V1DeleteOptions(propagation_policy="Orphan")


def new_owner_deployment(f, deployment_name, labels):
    """newOwnerDeployment"""
    return new_deployment(deployment_name, 2, labels, "nginx", NGINX_IMAGE, "RollingUpdate")


def estimate_maximum_pods(c, min_pods, max_pods):
    """estimateMaximumPods: half of the ready schedulable nodes' allocatable pods (10 per
    node without one), bounded to [min_pods, max_pods]."""
    nodes, err = get_ready_schedulable_nodes(c)
    if err is not None:
        fail("unexpected error: %s", err)
    available_pods = 0
    for node in nodes.items:
        q = ((node.status.allocatable if node.status else None) or {}).get("pods")
        if q is not None and str(q).isdigit():
            available_pods += int(q)
            continue
        # best guess per node, since default maxPerCore is 10 and most nodes have at least
        # one core.
        available_pods += 10
    # avoid creating exactly max pods
    available_pods = int(available_pods * 0.5)
    # bound the top and bottom
    if available_pods > max_pods:
        available_pods = max_pods
    if available_pods < min_pods:
        available_pods = min_pods
    return available_pods


def get_pod_template_spec(labels):
    """getPodTemplateSpec"""
    return client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels=labels),
        spec=client.V1PodSpec(
            termination_grace_period_seconds=0,
            containers=[client.V1Container(name="nginx", image=NGINX_IMAGE)]))


def new_owner_rc(f, name, replicas, labels):
    """newOwnerRC"""
    template = get_pod_template_spec(labels)
    return client.V1ReplicationController(
        api_version="v1", kind="ReplicationController",
        metadata=client.V1ObjectMeta(namespace=f.namespace.metadata.name, name=name),
        spec=client.V1ReplicationControllerSpec(replicas=replicas, selector=labels,
                                                template=template))


def wait_for_replicas(rc, rc_client, ns):
    """waitForReplicas: PollUntilContextTimeout(framework.Poll, replicaSyncTimeout,
    immediate=false) until the RC's status.replicas equals spec.replicas."""
    last = [None]

    def synced():
        try:
            last[0] = rc_client.read_namespaced_replication_controller(rc.metadata.name, ns)
        except ApiException as err:
            return False, describe_error(err)
        return ((last[0].status.replicas if last[0].status else 0) or 0) == \
            go_deref(rc.spec.replicas, "rc.Spec.Replicas"), None

    err = poll(POLL, REPLICA_SYNC_TIMEOUT, synced, immediate=False,
               timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        if last[0] is None:
            fail("Failed to get ReplicationController %r: %s", rc.metadata.name, err)
        else:
            fail("failed to wait for the rc.Status.Replicas (%d) to reach rc.Spec.Replicas "
                 "(%d): %s", (last[0].status.replicas if last[0].status else 0) or 0,
                 go_deref(last[0].spec.replicas, "lastObservedRC.Spec.Replicas"), err)


def new_gc_pod(name):
    """newGCPod"""
    return client.V1Pod(
        api_version="v1", kind="Pod",
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            termination_grace_period_seconds=0,
            containers=[client.V1Container(name="nginx", image=NGINX_IMAGE)]))


class _PollError(Exception):
    pass


def verify_remaining_objects(f, objects):
    """verifyRemainingObjects: (ok, error text or None)."""
    ns = f.namespace.metadata.name
    apps = client.AppsV1Api(f.api_client)
    ret = True
    for obj, num in objects.items():
        if obj == "Pods":
            try:
                pods = f.core.list_namespaced_pod(ns)
            except ApiException as err:
                return False, "failed to list pods: %s" % describe_error(err)
            if len(pods.items) != num:
                ret = False
                by("expected %d pods, got %d pods" % (num, len(pods.items)))
        elif obj == "Deployments":
            try:
                deployments = apps.list_namespaced_deployment(ns)
            except ApiException as err:
                return False, "failed to list deployments: %s" % describe_error(err)
            if len(deployments.items) != num:
                ret = False
                by("expected %d Deployments, got %d Deployments" % (num, len(deployments.items)))
        elif obj == "ReplicaSets":
            try:
                rs = apps.list_namespaced_replica_set(ns)
            except ApiException as err:
                return False, "failed to list rs: %s" % describe_error(err)
            if len(rs.items) != num:
                ret = False
                by("expected %d rs, got %d rs" % (num, len(rs.items)))
        elif obj == "ReplicationControllers":
            try:
                rcs = f.core.list_namespaced_replication_controller(ns)
            except ApiException as err:
                return False, "failed to list replication controllers: %s" % describe_error(err)
            if len(rcs.items) != num:
                ret = False
                by("expected %d RCs, got %d RCs" % (num, len(rcs.items)))
        else:
            return False, "object %s is not supported" % obj
    return ret, None



def gather_metrics(f):
    """gatherMetrics (see the module doc)."""
    by("Gathering metrics")
    try:
        pod_list = f.core.list_namespaced_pod("kube-system")
    except ApiException:
        logf("Failed to create MetricsGrabber. Skipping metrics gathering.")
        return
    controller_manager = [p.metadata.name for p in pod_list.items
                          if re.match("kube-controller-manager-.*", p.metadata.name)]
    if not controller_manager:
        # GrabFromControllerManager: MetricsGrabbingDisabledError
        logf("MetricsGrabber failed grab metrics. Skipping metrics gathering.")
        return
    logf("kube-controller-manager pod %s found; Shepherd does not serve its metrics "
         "through the API server proxy. Skipping metrics gathering.", controller_manager[0])


def gc_framework(new_framework):
    """SIGDescribe("Garbage collector"): NewDefaultFramework("gc"),
    NamespacePodSecurityLevel baseline."""
    return new_framework("gc", "baseline")


def f_sanitize(obj):
    """The object as JSON-shaped data (for %#v-like failure messages)."""
    return client.ApiClient().sanitize_for_serialization(obj)


# Release: v1.9
# Testname: Garbage Collector, delete replication controller, propagation policy background
# Description: Create a replication controller with 2 Pods. Once RC is created and the first
# Pod is created, delete RC with deleteOptions.PropagationPolicy set to Background. Deleting
# the Replication Controller MUST cause pods created by that RC to be deleted.
@conformance("[sig-api-machinery] Garbage collector should delete pods created by rc when not "
             "orphaning [Conformance]")
def test_gc_delete_pods_created_by_rc_when_not_orphaning(new_framework):
    f = gc_framework(new_framework)
    ns = f.namespace.metadata.name
    client_set = f.core
    rc_client = client_set
    pod_client = client_set
    rc_name = "simpletest.rc"
    uniq_labels = get_uniq_label("gctest", "delete_pods")
    rc = new_owner_rc(f, rc_name, 2, uniq_labels)
    by("create the rc")
    try:
        rc = rc_client.create_namespaced_replication_controller(ns, rc)
    except ApiException as err:
        fail("Failed to create replication controller: %s", describe_error(err))

    # wait for rc to create some pods
    def some_pods():
        try:
            pods = pod_client.list_namespaced_pod(ns)
        except ApiException as err:
            return False, "failed to list pods: %s" % describe_error(err)
        # We intentionally don't wait the number of pods to reach rc.Spec.Replicas. We want
        # to see if the garbage collector and the rc manager work properly if the rc is
        # deleted before it reaches stasis.
        return len(pods.items) > 0, None

    err = poll(5, 30, some_pods, immediate=False, timeout_error=POLL_TIMED_OUT)
    if err is not None:
        fail("failed to wait for the rc to create some pods: %s", err)
    by("delete the rc")
    delete_options = get_background_options()
    delete_options.preconditions = client.V1Preconditions(uid=rc.metadata.uid)
    try:
        rc_client.delete_namespaced_replication_controller(rc.metadata.name, ns,
                                                           body=delete_options)
    except ApiException as err:
        fail("failed to delete the rc: %s", describe_error(err))
    by("wait for all pods to be garbage collected")
    # wait for the RCs and Pods to reach the expected numbers.
    err = poll(5, 60 + GC_INFORMER_RESYNC_RETRY_TIMEOUT,
               lambda: verify_remaining_objects(f, {"ReplicationControllers": 0, "Pods": 0}),
               immediate=False, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("failed to wait for all pods to be deleted: %s", err)
    gather_metrics(f)


# Release: v1.9
# Testname: Garbage Collector, delete replication controller, propagation policy orphan
# Description: Create a replication controller with maximum allocatable Pods between 10 and
# 100 replicas. Once RC is created and the all Pods are created, delete RC with
# deleteOptions.PropagationPolicy set to Orphan. Deleting the Replication Controller MUST
# cause pods created by that RC to be orphaned.
@conformance("[sig-api-machinery] Garbage collector should orphan pods created by rc if delete "
             "options say so [Conformance]")
def test_gc_orphan_pods_created_by_rc(new_framework):
    f = gc_framework(new_framework)
    ns = f.namespace.metadata.name
    client_set = f.core
    rc_client = client_set
    pod_client = client_set
    rc_name = "simpletest.rc"
    uniq_labels = get_uniq_label("gctest", "orphan_pods")
    rc = new_owner_rc(f, rc_name, estimate_maximum_pods(client_set, 10, 100), uniq_labels)
    by("create the rc")
    try:
        rc = rc_client.create_namespaced_replication_controller(ns, rc)
    except ApiException as err:
        fail("Failed to create replication controller: %s", describe_error(err))
    # wait for rc to create pods
    wait_for_replicas(rc, rc_client, ns)

    by("delete the rc")
    delete_options = get_orphan_options()
    delete_options.preconditions = client.V1Preconditions(uid=rc.metadata.uid)
    try:
        rc_client.delete_namespaced_replication_controller(rc.metadata.name, ns,
                                                           body=delete_options)
    except ApiException as err:
        fail("failed to delete the rc: %s", describe_error(err))
    by("wait for the rc to be deleted")

    # Orphaning the 100 pods takes 100 PATCH operations (upstream allows 120s plus the GC
    # informer resync retry timeout).
    def rc_gone():
        try:
            rcs = rc_client.list_namespaced_replication_controller(ns)
        except ApiException as err:
            return False, "failed to list rcs: %s" % describe_error(err)
        return len(rcs.items) == 0, None

    err = poll(5, 120 + GC_INFORMER_RESYNC_RETRY_TIMEOUT, rc_gone, immediate=False,
               timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("%s", err)
    by("wait for 30 seconds to see if the garbage collector mistakenly deletes the pods")
    time.sleep(30)
    try:
        pods = pod_client.list_namespaced_pod(ns)
    except ApiException as err:
        fail("Failed to list pods: %s", describe_error(err))
    e, a = go_deref(rc.spec.replicas, "rc.Spec.Replicas"), len(pods.items)
    if e != a:
        fail("expect %d pods, got %d pods", e, a)
    gather_metrics(f)
    err = delete_pods_with_grace_period(client_set, pods.items, 0)
    if err is not None:
        logf("WARNING: failed to delete pods: %s", err)


# Release: v1.9
# Testname: Garbage Collector, delete deployment,  propagation policy background
# Description: Create a deployment with a replicaset. Once replicaset is created , delete the
# deployment  with deleteOptions.PropagationPolicy set to Background. Deleting the deployment
# MUST delete the replicaset created by the deployment and also the Pods that belong to the
# deployments MUST be deleted.
@conformance("[sig-api-machinery] Garbage collector should delete RS created by deployment "
             "when not orphaning [Conformance]")
def test_gc_delete_rs_created_by_deployment_when_not_orphaning(new_framework):
    f = gc_framework(new_framework)
    ns = f.namespace.metadata.name
    apps = client.AppsV1Api(f.api_client)
    deployment_name = "simpletest.deployment"
    uniq_labels = get_uniq_label("gctest", "delete_rs")
    deployment = new_owner_deployment(f, deployment_name, uniq_labels)
    by("create the deployment")
    try:
        created_deployment = apps.create_namespaced_deployment(ns, deployment)
    except ApiException as err:
        fail("Failed to create deployment: %s", describe_error(err))
    # wait for deployment to create some rs
    by("Wait for the Deployment to create new ReplicaSet")

    def rs_created():
        try:
            rs_list = apps.list_namespaced_replica_set(ns)
        except ApiException as err:
            return False, "failed to list rs: %s" % describe_error(err)
        return len(rs_list.items) > 0, None

    err = poll(0.5, 60, rs_created, immediate=True, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("Failed to wait for the Deployment to create some ReplicaSet: %s", err)

    by("delete the deployment")
    delete_options = get_background_options()
    delete_options.preconditions = client.V1Preconditions(uid=created_deployment.metadata.uid)
    try:
        apps.delete_namespaced_deployment(deployment.metadata.name, ns, body=delete_options)
    except ApiException as err:
        fail("failed to delete the deployment: %s", describe_error(err))
    by("wait for all rs to be garbage collected")
    err = poll(0.5, 60 + GC_INFORMER_RESYNC_RETRY_TIMEOUT,
               lambda: verify_remaining_objects(f, {"Deployments": 0, "ReplicaSets": 0, "Pods": 0}),
               timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        err_list = [err]
        try:
            remaining_rss = apps.list_namespaced_replica_set(ns)
        except ApiException as lerr:
            err_list.append("failed to list RSs post mortem: %s" % describe_error(lerr))
        else:
            err_list.append("remaining rs are: %s" % json.dumps(f_sanitize(remaining_rss)))
        fail("Failed to wait for all rs to be garbage collected: [%s]", ", ".join(err_list))

    gather_metrics(f)


# Release: v1.9
# Testname: Garbage Collector, delete deployment, propagation policy orphan
# Description: Create a deployment with a replicaset. Once replicaset is created , delete the
# deployment  with deleteOptions.PropagationPolicy set to Orphan. Deleting the deployment MUST
# cause the replicaset created by the deployment to be orphaned, also the Pods created by the
# deployments MUST be orphaned.
@conformance("[sig-api-machinery] Garbage collector should orphan RS created by deployment when "
             "deleteOptions.PropagationPolicy is Orphan [Conformance]")
def test_gc_orphan_rs_created_by_deployment(new_framework):
    f = gc_framework(new_framework)
    ns = f.namespace.metadata.name
    apps = client.AppsV1Api(f.api_client)
    deployment_name = "simpletest.deployment"
    uniq_labels = get_uniq_label("gctest", "orphan_rs")
    deployment = new_owner_deployment(f, deployment_name, uniq_labels)
    by("create the deployment")
    try:
        created_deployment = apps.create_namespaced_deployment(ns, deployment)
    except ApiException as err:
        fail("Failed to create deployment: %s", describe_error(err))
    # wait for deployment to create some rs
    by("Wait for the Deployment to create new ReplicaSet")
    found = []

    def rs_created():
        try:
            rs_list = apps.list_namespaced_replica_set(ns)
        except ApiException as err:
            return False, "failed to list rs: %s" % describe_error(err)
        if len(rs_list.items) > 0:
            found.append(rs_list.items[0])
            return True, None
        return False, None

    err = poll(0.5, 60, rs_created, immediate=True, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("Failed to wait for the Deployment to create some ReplicaSet: %s", err)
    replicaset = found[0]

    desired_generation = replicaset.metadata.generation

    def rs_synced():
        try:
            new_rs = apps.read_namespaced_replica_set(replicaset.metadata.name,
                                                      replicaset.metadata.namespace)
        except ApiException as err:
            return False, describe_error(err)
        observed = (new_rs.status.observed_generation or 0) if new_rs.status else 0
        replicas = (new_rs.status.replicas or 0) if new_rs.status else 0
        return (observed >= (desired_generation or 0) and
                replicas == go_deref(replicaset.spec.replicas, "replicaset.Spec.Replicas")), None

    err = poll(0.1, 60, rs_synced, immediate=True, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("failed to verify .Status.Replicas is equal to .Spec.Replicas for replicaset %r: %s",
             replicaset.metadata.name, err)

    by("delete the deployment")
    delete_options = get_orphan_options()
    delete_options.preconditions = client.V1Preconditions(uid=created_deployment.metadata.uid)
    try:
        apps.delete_namespaced_deployment(deployment.metadata.name, ns, body=delete_options)
    except ApiException as err:
        fail("failed to delete the deployment: %s", describe_error(err))
    by("wait for deployment deletion to see if the garbage collector mistakenly deletes the rs")

    def deployment_gone():
        try:
            d_list = apps.list_namespaced_deployment(ns)
        except ApiException as err:
            return False, "failed to list deployments: %s" % describe_error(err)
        return len(d_list.items) == 0, None

    err = poll(0.5, 60 + GC_INFORMER_RESYNC_RETRY_TIMEOUT, deployment_gone, immediate=True, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("Failed to wait for the Deployment to be deleted: %s", err)
    # Once the deployment object is gone, we'll know the GC has finished performing any
    # relevant actions.
    objects = {"Deployments": 0, "ReplicaSets": 1, "Pods": 2}
    ok, err = verify_remaining_objects(f, objects)
    if err is not None:
        fail("Unexpected error while verifying remaining deployments, rs, and pods: %s", err)
    if not ok:
        err_list = []
        try:
            remaining_rss = apps.list_namespaced_replica_set(ns)
        except ApiException as lerr:
            err_list.append("failed to list RSs post mortem: %s" % describe_error(lerr))
        else:
            err_list.append("remaining rs post mortem: %s" % json.dumps(f_sanitize(remaining_rss)))
        try:
            remaining_dss = apps.list_namespaced_deployment(ns)
        except ApiException as lerr:
            err_list.append("failed to list Deployments post mortem: %s" % describe_error(lerr))
        else:
            err_list.append("remaining deployment's post mortem: %s"
                            % json.dumps(f_sanitize(remaining_dss)))
        fail("Failed to verify remaining deployments, rs, and pods: [%s]", ", ".join(err_list))
    try:
        rs = apps.list_namespaced_replica_set(ns)
    except ApiException as err:
        fail("Failed to list ReplicaSet %s", describe_error(err))
    for replica_set in rs.items:
        # metav1.GetControllerOf
        controller = [r for r in (replica_set.metadata.owner_references or []) if r.controller]
        if controller:
            fail("Found ReplicaSet with non nil ownerRef %s", json.dumps(f_sanitize(replica_set)))

    gather_metrics(f)


# Release: v1.9
# Testname: Garbage Collector, delete replication controller, after owned pods
# Description: Create a replication controller with maximum allocatable Pods between 10 and
# 100 replicas. Once RC is created and the all Pods are created, delete RC with
# deleteOptions.PropagationPolicy set to Foreground. Deleting the Replication Controller MUST
# cause pods created by that RC to be deleted before the RC is deleted.
@conformance("[sig-api-machinery] Garbage collector should keep the rc around until all its "
             "pods are deleted if the deleteOptions says so [Conformance]")
def test_gc_keep_rc_until_pods_deleted_foreground(new_framework):
    f = gc_framework(new_framework)
    ns = f.namespace.metadata.name
    client_set = f.core
    rc_client = client_set
    pod_client = client_set
    rc_name = "simpletest.rc"
    uniq_labels = get_uniq_label("gctest", "delete_pods_foreground")
    rc = new_owner_rc(f, rc_name, estimate_maximum_pods(client_set, 10, 100), uniq_labels)
    by("create the rc")
    try:
        rc = rc_client.create_namespaced_replication_controller(ns, rc)
    except ApiException as err:
        fail("Failed to create replication controller: %s", describe_error(err))
    # wait for rc to create pods
    wait_for_replicas(rc, rc_client, ns)

    by("delete the rc")
    delete_options = get_foreground_options()
    delete_options.preconditions = client.V1Preconditions(uid=rc.metadata.uid)
    try:
        rc_client.delete_namespaced_replication_controller(rc.metadata.name, ns,
                                                           body=delete_options)
    except ApiException as err:
        fail("failed to delete the rc: %s", describe_error(err))
    by("wait for the rc to be deleted")

    # default client QPS is 20, deleting each pod requires 2 requests, so 30s should be
    # enough (upstream adds the GC informer resync retry timeout)
    def rc_gone():
        try:
            rc_client.read_namespaced_replication_controller(rc.metadata.name, ns)
        except ApiException as err:
            if is_not_found(err):
                return True, None
            return False, describe_error(err)
        pods = pod_client.list_namespaced_pod(ns)
        logf("%d pods remaining", len(pods.items))
        count = sum(1 for pod in pods.items if pod.metadata.deletion_timestamp is None)
        logf("%d pods has nil DeletionTimestamp", count)
        logf("")
        return False, None

    err = poll(1, 30 + GC_INFORMER_RESYNC_RETRY_TIMEOUT, rc_gone, immediate=False,
               timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        try:
            pods = pod_client.list_namespaced_pod(ns)
        except ApiException as err2:
            fail("%s", describe_error(err2))
        logf("%d remaining pods are:", len(pods.items))
        logf("The ObjectMeta of the remaining pods are:")
        for pod in pods.items:
            logf("%s", json.dumps(f_sanitize(pod.metadata)))
        fail("failed to delete the rc: %s", err)
    # There shouldn't be any pods
    try:
        pods = pod_client.list_namespaced_pod(ns)
    except ApiException as err:
        fail("%s", describe_error(err))
    if len(pods.items) != 0:
        fail("expected no pods, got %s", json.dumps(f_sanitize(pods)))
    gather_metrics(f)


# Release: v1.9
# Testname: Garbage Collector, multiple owners
# Description: Create a replication controller RC1, with maximum allocatable Pods between 10
# and 100 replicas. Create second replication controller RC2 and set RC2 as owner for half of
# those replicas. Once RC1 is created and the all Pods are created, delete RC1 with
# deleteOptions.PropagationPolicy set to Foreground. Half of the Pods that has RC2 as owner
# MUST not be deleted or have a deletion timestamp. Deleting the Replication Controller MUST
# not delete Pods that are owned by multiple replication controllers.
@conformance("[sig-api-machinery] Garbage collector should not delete dependents that have both "
             "valid owner and owner that's waiting for dependents to be deleted [Conformance]")
def test_gc_not_delete_dependents_with_valid_and_waiting_owner(new_framework):
    f = gc_framework(new_framework)
    ns = f.namespace.metadata.name
    client_set = f.core
    rc_client = client_set
    pod_client = client_set
    rc1_name = "simpletest-rc-to-be-deleted"
    replicas = estimate_maximum_pods(client_set, 10, 100)
    half_replicas = int(replicas / 2)
    uniq_labels_deleted = get_uniq_label("gctest_d", "valid_and_pending_owners_d")
    rc1 = new_owner_rc(f, rc1_name, replicas, uniq_labels_deleted)
    by("create the rc1")
    try:
        rc1 = rc_client.create_namespaced_replication_controller(ns, rc1)
    except ApiException as err:
        fail("Failed to create replication controller: %s", describe_error(err))
    rc2_name = "simpletest-rc-to-stay"
    uniq_labels_stay = get_uniq_label("gctest_s", "valid_and_pending_owners_s")
    rc2 = new_owner_rc(f, rc2_name, 0, uniq_labels_stay)
    by("create the rc2")
    try:
        rc2 = rc_client.create_namespaced_replication_controller(ns, rc2)
    except ApiException as err:
        fail("Failed to create replication controller: %s", describe_error(err))
    # wait for rc1 to be stable
    wait_for_replicas(rc1, rc_client, ns)

    by("set half of pods created by rc %s to have rc %s as owner as well" % (rc1_name,
                                                                            rc2_name))
    pods = expect_no_error(pod_client.list_namespaced_pod, ns,
                           explain="failed to list pods in namespace: %s" % ns)
    patch = ('{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ReplicationController",'
             '"name":"%s","uid":"%s"}]}}' % (rc2.metadata.name, rc2.metadata.uid))
    for i in range(half_replicas):
        pod = pods.items[i]
        expect_no_error(pod_client.patch_namespaced_pod, pod.metadata.name, ns,
                        json.loads(patch),
                        explain="failed to apply to pod %s in namespace %s, a strategic merge "
                                "patch: %s" % (pod.metadata.name, ns, patch))

    by("delete the rc %s" % rc1_name)
    delete_options = get_foreground_options()
    delete_options.preconditions = client.V1Preconditions(uid=rc1.metadata.uid)
    try:
        rc_client.delete_namespaced_replication_controller(rc1.metadata.name, ns,
                                                           body=delete_options)
    except ApiException as err:
        fail("failed to delete the rc: %s", describe_error(err))
    by("wait for the rc to be deleted")

    def rc1_gone():
        try:
            rc_client.read_namespaced_replication_controller(rc1.metadata.name, ns)
        except ApiException as err:
            if is_not_found(err):
                return True, None
            return False, describe_error(err)
        pods = pod_client.list_namespaced_pod(ns)
        logf("%d pods remaining", len(pods.items))
        count = sum(1 for pod in pods.items if pod.metadata.deletion_timestamp is None)
        logf("%d pods has nil DeletionTimestamp", count)
        logf("")
        return False, None

    err = poll(5, 90, rc1_gone, immediate=False, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        try:
            pods = pod_client.list_namespaced_pod(ns)
        except ApiException as err2:
            fail("%s", describe_error(err2))
        logf("%d remaining pods are:", len(pods.items))
        logf("ObjectMeta of remaining pods are:")
        for pod in pods.items:
            logf("%s", json.dumps(f_sanitize(pod.metadata)))
        fail("failed to delete rc %s, err: %s", rc1_name, err)
    # half of the pods should still exist,
    try:
        pods = pod_client.list_namespaced_pod(ns)
    except ApiException as err:
        fail("%s", describe_error(err))
    if len(pods.items) != half_replicas:
        fail("expected %d pods, got %d", half_replicas, len(pods.items))
    for pod in pods.items:
        if pod.metadata.deletion_timestamp is not None:
            fail("expected pod DeletionTimestamp to be nil, got %s",
                 json.dumps(f_sanitize(pod.metadata)))
        # they should only have 1 ownerReference left
        if len(pod.metadata.owner_references or []) != 1:
            fail("expected pod to only have 1 owner, got %s",
                 json.dumps(f_sanitize(pod.metadata.owner_references)))
    gather_metrics(f)
    err = delete_pods_with_grace_period(client_set, pods.items, 0)
    if err is not None:
        logf("WARNING: failed to delete pods: %s", err)


# Release: v1.9
# Testname: Garbage Collector, dependency cycle
# Description: Create three pods, patch them with Owner references such that pod1 has pod3,
# pod2 has pod1 and pod3 has pod2 as owner references respectively. Delete pod1 MUST delete
# all pods. The dependency cycle MUST not block the garbage collection.
@conformance("[sig-api-machinery] Garbage collector should not be blocked by dependency circle "
             "[Conformance]")
def test_gc_not_blocked_by_dependency_circle(new_framework):
    f = gc_framework(new_framework)
    ns = f.namespace.metadata.name
    pod_client = f.core
    pod1_name = "pod1"
    pod1 = expect_no_error(pod_client.create_namespaced_pod, ns, new_gc_pod(pod1_name),
                           explain="failed to create pod %s in namespace: %s" % (pod1_name, ns))
    pod2_name = "pod2"
    pod2 = expect_no_error(pod_client.create_namespaced_pod, ns, new_gc_pod(pod2_name),
                           explain="failed to create pod %s in namespace: %s" % (pod2_name, ns))
    pod3_name = "pod3"
    pod3 = expect_no_error(pod_client.create_namespaced_pod, ns, new_gc_pod(pod3_name),
                           explain="failed to create pod %s in namespace: %s" % (pod3_name, ns))

    # create circular dependency
    def add_ref_patch(name, uid):
        return json.loads('{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Pod",'
                          '"name":"%s","uid":"%s","controller":true,"blockOwnerDeletion":true}]}}'
                          % (name, uid))

    patch1 = add_ref_patch(pod3.metadata.name, pod3.metadata.uid)
    pod1 = expect_no_error(pod_client.patch_namespaced_pod, pod1.metadata.name, ns, patch1,
                           explain="failed to apply to pod %s in namespace %s, a strategic merge "
                                   "patch: %s" % (pod1.metadata.name, ns, json.dumps(patch1)))
    logf("pod1.ObjectMeta.OwnerReferences=%s", f_sanitize(pod1.metadata.owner_references))
    patch2 = add_ref_patch(pod1.metadata.name, pod1.metadata.uid)
    pod2 = expect_no_error(pod_client.patch_namespaced_pod, pod2.metadata.name, ns, patch2,
                           explain="failed to apply to pod %s in namespace %s, a strategic merge "
                                   "patch: %s" % (pod2.metadata.name, ns, json.dumps(patch2)))
    logf("pod2.ObjectMeta.OwnerReferences=%s", f_sanitize(pod2.metadata.owner_references))
    patch3 = add_ref_patch(pod2.metadata.name, pod2.metadata.uid)
    pod3 = expect_no_error(pod_client.patch_namespaced_pod, pod3.metadata.name, ns, patch3,
                           explain="failed to apply to pod %s in namespace %s, a strategic merge "
                                   "patch: %s" % (pod3.metadata.name, ns, json.dumps(patch3)))
    logf("pod3.ObjectMeta.OwnerReferences=%s", f_sanitize(pod3.metadata.owner_references))
    # delete one pod, should result in the deletion of all pods
    delete_options = get_foreground_options()
    delete_options.preconditions = client.V1Preconditions(uid=pod1.metadata.uid)
    expect_no_error(pod_client.delete_namespaced_pod, pod1.metadata.name, ns,
                    body=delete_options,
                    explain="failed to delete pod %s in namespace: %s" % (pod1.metadata.name, ns))
    pods = [None]

    def all_deleted():
        try:
            pods[0] = pod_client.list_namespaced_pod(ns)
        except ApiException as err:
            return False, "failed to list pods: %s" % describe_error(err)
        return len(pods[0].items) == 0, None

    err = poll(5, 90 + GC_INFORMER_RESYNC_RETRY_TIMEOUT, all_deleted, immediate=False, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        data = json.dumps(f_sanitize(pods[0].items)) if pods[0] is not None else "null"
        logf("pods are %s", data)
        fail("failed to wait for all pods to be deleted: %s", err)
