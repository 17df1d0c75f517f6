"""Ports of the ResourceQuota [Conformance] tests of test/e2e/apimachinery/resource_quota.go
(kubernetes/kubernetes v1.32), SIGDescribe("ResourceQuota") with NewDefaultFramework(
"resourcequota") and NamespacePodSecurityLevel baseline: "should create a ResourceQuota and
ensure its status is promptly calculated.", "... and capture the life of a service.", "... of a
secret.", "... of a pod.", "... of a configMap.", "... of a replication controller.", "... of a
replica set.", "should verify ResourceQuota with terminating scopes.", "should verify
ResourceQuota with best effort scope.", "should be able to update and delete
ResourceQuota.", "should manage the lifecycle of a ResourceQuota" and "should apply changes
to a resourcequota status". The file's helpers (newTestResourceQuota, waitForResourceQuota,
countResourceQuota, ...) and resource.Quantity's parsing, comparison and canonical form are
in e2e_quota.py.

Upstream source: resource_quota.go as stored at kubernetes/kubernetes@b09d034a (resource.k8s.io
v1beta1, k8s.io/utils/pointer: the v1.32 generation of the file; later versions only add
resource-version assertions and DRA v1 to other tests).

They need shepherd-apiserver's ResourceQuota (with status) and the quota admission plugin,
and shepherd-controller-manager's resource quota controller (status.hard / status.used).
No pod runs: the quota test pods carry the node selector x-test.k8s.io/unsatisfiable, and
the ReplicationController and ReplicaSet have zero replicas.

Images: newTestPodForQuota runs imageutils.GetPauseImageName() (registry.k8s.io/pause:3.10),
the same reference as the nodes' offline pause image (PAUSE_IMAGE): no substitution (the
pods are never scheduled anyway). The ReplicationController and ReplicaSet templates name
the image "nginx", as upstream; with zero replicas nothing is pulled.

Deviations forced by the client:
* Quantities: the Python client holds the server's strings; comparisons and re-sent values
  go through e2e_quota.Quantity (see its module doc): Cmp where upstream compares with Cmp
  or Semantic.DeepEqual, Go struct equality where upstream uses gomega.Equal,
  HaveKeyWithValue or ``==``, and the canonical String() wherever client-go would re-encode
  a decoded quantity (the UpdateStatus body).
* "capture the life of a pod": the pod is created and updated as JSON (raw_call), so that
  the Update sends back everything the server returned, as client-go's Update of the decoded
  pod does (the installed client's V1Pod predates many pod fields).
* Each test's pytest time limit (test_timeout) is the sum of upstream's waits, so a failing
  wait reports upstream's error instead of the harness's default 150 s abort.
"""

import json
import time

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (by, conformance, describe_error, expect_no_error, fail, is_not_found,
                           logf, rand_string, raw_call, retry_on_conflict, selector_from_set,
                           watch_until)
from e2e_quota import (DEFAULT_RESOURCE_REQUESTS_PREFIX, EXTENDED_RESOURCE_NAME,
                       POD_NAME, RESOURCE_CONFIG_MAPS, RESOURCE_CPU, RESOURCE_EPHEMERAL_STORAGE,
                       RESOURCE_LIMITS_CPU, RESOURCE_LIMITS_MEMORY, RESOURCE_MEMORY,
                       RESOURCE_PODS, RESOURCE_QUOTAS, RESOURCE_REPLICATION_CONTROLLERS,
                       RESOURCE_REQUESTS_CPU, RESOURCE_REQUESTS_MEMORY, RESOURCE_SECRETS,
                       RESOURCE_SERVICES, RESOURCE_SERVICES_NODE_PORTS, SCOPE_BEST_EFFORT,
                       SCOPE_NOT_BEST_EFFORT, SCOPE_NOT_TERMINATING, SCOPE_TERMINATING,
                       _poll, count_resource_quota, cpu, create_resource_quota,
                       delete_resource_quota, format_resource_list, go_equal, memory,
                       must_parse, new_test_config_map_for_quota, new_test_pod_for_quota,
                       new_test_replica_set_for_quota,
                       new_test_replication_controller_for_quota, new_test_resource_quota,
                       new_test_resource_quota_with_scope, new_test_secret_for_quota,
                       new_test_service_for_quota, quota_add, reencode_resource_quota,
                       resource_list_get, semantic_equal_lists, stable_count,
                       unstructured_to_resource_quota, wait_for_resource_quota)

POD_START_SHORT_TIMEOUT = 2 * 60  # f.Timeouts.PodStartShort

_EXTENDED_REQUESTS = DEFAULT_RESOURCE_REQUESTS_PREFIX + EXTENDED_RESOURCE_NAME
_GO_API = client.ApiClient()


def rq_framework(new_framework):
    """SIGDescribe("ResourceQuota"): NewDefaultFramework("resourcequota"),
    NamespacePodSecurityLevel baseline."""
    return new_framework("resourcequota", "baseline")


def expect_ok(err, explain=None):
    """framework.ExpectNoError(err[, explain]) for the helpers' error texts."""
    if err is not None:
        if explain:
            fail("%s: %s", explain, err)
        fail("unexpected error: %s", err)


def expect_error(fn, *args, **kwargs):
    """gomega.Expect(err).To(gomega.HaveOccurred()) around one API call."""
    try:
        fn(*args, **kwargs)
    except ApiException as err:
        logf("got the expected error: %s", describe_error(err))
        return err
    fail("Expected an error to have occurred.  Got:\n    <nil>: nil")


def count_quota(f):
    by("Counting existing ResourceQuota")
    c, err = count_resource_quota(f.core, f.namespace.metadata.name)
    expect_ok(err)
    return c


def q(text):
    return must_parse(text)


def _hard_repr(rl):
    """%#v of a ResourceList, for the log lines."""
    return format_resource_list(rl)


# Release: v1.16
# Testname: ResourceQuota, object count quota, resourcequotas
# Description: Create a ResourceQuota. Creation MUST be successful and its
# ResourceQuotaStatus MUST match to expected used and total allowed resource quota count
# within namespace.
@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and ensure its "
             "status is promptly calculated. [Conformance]")
def test_resource_quota_status_promptly_calculated(new_framework):
    f = rq_framework(new_framework)
    ns = f.namespace.metadata.name
    c = count_quota(f)

    by("Creating a ResourceQuota")
    quota_name = "test-quota"
    resource_quota = new_test_resource_quota(quota_name)
    expect_no_error(create_resource_quota, f.core, ns, resource_quota)

    by("Ensuring resource quota status is calculated")
    used_resources = {RESOURCE_QUOTAS: q(str(c + 1))}
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))


# Release: v1.16
# Testname: ResourceQuota, object count quota, service
# Description: Create a ResourceQuota. Creation MUST be successful and its
# ResourceQuotaStatus MUST match to expected used and total allowed resource quota count
# within namespace. Create a Service. Its creation MUST be successful and resource usage
# count against the Service object and resourceQuota object MUST be captured in
# ResourceQuotaStatus of the ResourceQuota. Delete the Service. Deletion MUST succeed and
# resource usage count against the Service object MUST be released from ResourceQuotaStatus
# of the ResourceQuota.
@pytest.mark.test_timeout(30 + 3 * 60 + 30)
@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the "
             "life of a service. [Conformance]")
def test_resource_quota_service(new_framework):
    f = rq_framework(new_framework)
    ns = f.namespace.metadata.name
    c = count_quota(f)

    by("Creating a ResourceQuota")
    quota_name = "test-quota"
    resource_quota = new_test_resource_quota(quota_name)
    expect_no_error(create_resource_quota, f.core, ns, resource_quota)

    by("Ensuring resource quota status is calculated")
    used_resources = {RESOURCE_QUOTAS: q(str(c + 1))}
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Creating a Service")
    service = new_test_service_for_quota("test-service", "ClusterIP", False)
    service = expect_no_error(f.core.create_namespaced_service, ns, service)

    by("Creating a NodePort Service")
    nodeport = new_test_service_for_quota("test-service-np", "NodePort", False)
    nodeport = expect_no_error(f.core.create_namespaced_service, ns, nodeport)

    by("Not allowing a LoadBalancer Service with NodePort to be created that exceeds remaining "
       "quota")
    loadbalancer = new_test_service_for_quota("test-service-lb", "LoadBalancer", True)
    expect_error(f.core.create_namespaced_service, ns, loadbalancer)

    by("Ensuring resource quota status captures service creation")
    used_resources = {RESOURCE_QUOTAS: q(str(c + 1)), RESOURCE_SERVICES: q("2"),
                      RESOURCE_SERVICES_NODE_PORTS: q("1")}
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Deleting Services")
    expect_no_error(f.core.delete_namespaced_service, service.metadata.name, ns)
    expect_no_error(f.core.delete_namespaced_service, nodeport.metadata.name, ns)

    by("Ensuring resource quota status released usage")
    used_resources[RESOURCE_SERVICES] = q("0")
    used_resources[RESOURCE_SERVICES_NODE_PORTS] = q("0")
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))


# Release: v1.16
# Testname: ResourceQuota, object count quota, secret
# Description: Create a ResourceQuota. Creation MUST be successful and its
# ResourceQuotaStatus MUST match to expected used and total allowed resource quota count
# within namespace. Create a Secret. Its creation MUST be successful and resource usage count
# against the Secret object and resourceQuota object MUST be captured in ResourceQuotaStatus
# of the ResourceQuota. Delete the Secret. Deletion MUST succeed and resource usage count
# against the Secret object MUST be released from ResourceQuotaStatus of the ResourceQuota.
@pytest.mark.test_timeout(30 + 30 + 3 * 60 + 30)
@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the "
             "life of a secret. [Conformance]")
def test_resource_quota_secret(new_framework):
    f = rq_framework(new_framework)
    ns = f.namespace.metadata.name

    by("Discovering how many secrets are in namespace by default")
    # On contended servers the service account controller can slow down, leading to the
    # count changing during a run. Wait up to 5s for the count to stabilize, assuming that
    # updates come at a consistent rate, and are not held indefinitely.
    found, err = stable_count(f.core.list_namespaced_secret, ns, 1, 30, 4)
    expect_ok(err)
    default_secrets = "%d" % found
    hard_secrets = "%d" % (found + 1)

    c = count_quota(f)

    by("Creating a ResourceQuota")
    quota_name = "test-quota"
    resource_quota = new_test_resource_quota(quota_name)
    resource_quota.spec.hard[RESOURCE_SECRETS] = q(hard_secrets).string()
    expect_no_error(create_resource_quota, f.core, ns, resource_quota)

    by("Ensuring resource quota status is calculated")
    used_resources = {RESOURCE_QUOTAS: q(str(c + 1)), RESOURCE_SECRETS: q(default_secrets)}
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Creating a Secret")
    secret = new_test_secret_for_quota("test-secret")
    secret = expect_no_error(f.core.create_namespaced_secret, ns, secret)

    by("Ensuring resource quota status captures secret creation")
    used_resources = {RESOURCE_SECRETS: q(hard_secrets)}
    # we expect there to be two secrets because each namespace will receive
    # a service account token secret by default
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Deleting a secret")
    expect_no_error(f.core.delete_namespaced_secret, secret.metadata.name, ns)

    by("Ensuring resource quota status released usage")
    used_resources[RESOURCE_SECRETS] = q(default_secrets)
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))


def _create_pod_json(f, ns, pod):
    """f.ClientSet.CoreV1().Pods(ns).Create(ctx, pod): the pod as JSON (raises
    ApiException)."""
    body = f.api_client.sanitize_for_serialization(pod)
    body["apiVersion"] = "v1"
    body["kind"] = "Pod"
    return raw_call(f.api_client, "POST", "/api/v1/namespaces/%s/pods" % ns, body=body)


# Release: v1.16
# Testname: ResourceQuota, object count quota, pod
# Description: Create a ResourceQuota. Creation MUST be successful and its
# ResourceQuotaStatus MUST match to expected used and total allowed resource quota count
# within namespace. Create a Pod with resource request count for CPU, Memory,
# EphemeralStorage and ExtendedResourceName. Pod creation MUST be successful and respective
# resource usage count MUST be captured in ResourceQuotaStatus of the ResourceQuota. Create
# another Pod with resource request exceeding remaining quota. Pod creation MUST fail as the
# request exceeds ResourceQuota limits. Update the successfully created pod's resource
# requests. Updation MUST fail as a Pod can not dynamically update its resource
# requirements. Delete the successfully created Pod. Pod Deletion MUST be scuccessful and it
# MUST release the allocated resource counts from ResourceQuotaStatus of the ResourceQuota.
@pytest.mark.test_timeout(30 + 4 * 60 + 30)
@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the "
             "life of a pod. [Conformance]")
def test_resource_quota_pod(new_framework):
    f = rq_framework(new_framework)
    ns = f.namespace.metadata.name
    c = count_quota(f)

    by("Creating a ResourceQuota")
    quota_name = "test-quota"
    resource_quota = new_test_resource_quota(quota_name)
    expect_no_error(create_resource_quota, f.core, ns, resource_quota)

    by("Ensuring resource quota status is calculated")
    used_resources = {RESOURCE_QUOTAS: q(str(c + 1))}
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Creating a Pod that fits quota")
    pod_name = "test-pod"
    requests = {RESOURCE_CPU: "500m", RESOURCE_MEMORY: "252Mi",
                RESOURCE_EPHEMERAL_STORAGE: "30Gi", EXTENDED_RESOURCE_NAME: "2"}
    limits = {EXTENDED_RESOURCE_NAME: "2"}
    pod = new_test_pod_for_quota(f, pod_name, requests, limits)
    pod_to_update = expect_no_error(_create_pod_json, f, ns, pod)

    by("Ensuring ResourceQuota status captures the pod usage")
    used_resources[RESOURCE_QUOTAS] = q(str(c + 1))
    used_resources[RESOURCE_PODS] = q("1")
    used_resources[RESOURCE_CPU] = q(requests[RESOURCE_CPU])
    used_resources[RESOURCE_MEMORY] = q(requests[RESOURCE_MEMORY])
    used_resources[RESOURCE_EPHEMERAL_STORAGE] = q(requests[RESOURCE_EPHEMERAL_STORAGE])
    used_resources[_EXTENDED_REQUESTS] = q(requests[EXTENDED_RESOURCE_NAME])
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Not allowing a pod to be created that exceeds remaining quota")
    requests = {RESOURCE_CPU: "600m", RESOURCE_MEMORY: "100Mi"}
    pod = new_test_pod_for_quota(f, "fail-pod", requests, {})
    expect_error(f.core.create_namespaced_pod, ns, pod)

    by("Not allowing a pod to be created that exceeds remaining quota(validation on extended "
       "resources)")
    requests = {RESOURCE_CPU: "500m", RESOURCE_MEMORY: "100Mi",
                RESOURCE_EPHEMERAL_STORAGE: "30Gi", EXTENDED_RESOURCE_NAME: "2"}
    limits = {EXTENDED_RESOURCE_NAME: "2"}
    pod = new_test_pod_for_quota(f, "fail-pod-for-extended-resource", requests, limits)
    expect_error(f.core.create_namespaced_pod, ns, pod)

    by("Ensuring a pod cannot update its resource requirements")
    # a pod cannot dynamically update its resource requirements.
    requests = {RESOURCE_CPU: "100m", RESOURCE_MEMORY: "100Mi",
                RESOURCE_EPHEMERAL_STORAGE: "10Gi"}
    pod_to_update["spec"]["containers"][0].setdefault("resources", {})["requests"] = requests
    expect_error(raw_call, f.api_client, "PUT",
                 "/api/v1/namespaces/%s/pods/%s" % (ns, pod_to_update["metadata"]["name"]),
                 body=pod_to_update)

    by("Ensuring attempts to update pod resource requirements did not change quota usage")
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Deleting the pod")
    expect_no_error(f.core.delete_namespaced_pod, pod_name, ns,
                    body=client.V1DeleteOptions(grace_period_seconds=0))

    by("Ensuring resource quota status released the pod usage")
    used_resources[RESOURCE_QUOTAS] = q(str(c + 1))
    used_resources[RESOURCE_PODS] = q("0")
    used_resources[RESOURCE_CPU] = q("0")
    used_resources[RESOURCE_MEMORY] = q("0")
    used_resources[RESOURCE_EPHEMERAL_STORAGE] = q("0")
    used_resources[_EXTENDED_REQUESTS] = q("0")
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))


# Release: v1.16
# Testname: ResourceQuota, object count quota, configmap
# Description: Create a ResourceQuota. Creation MUST be successful and its
# ResourceQuotaStatus MUST match to expected used and total allowed resource quota count
# within namespace. Create a ConfigMap. Its creation MUST be successful and resource usage
# count against the ConfigMap object MUST be captured in ResourceQuotaStatus of the
# ResourceQuota. Delete the ConfigMap. Deletion MUST succeed and resource usage count against
# the ConfigMap object MUST be released from ResourceQuotaStatus of the ResourceQuota.
@pytest.mark.test_timeout(60 + 30 + 3 * 60 + 30)
@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the "
             "life of a configMap. [Conformance]")
def test_resource_quota_config_map(new_framework):
    f = rq_framework(new_framework)
    ns = f.namespace.metadata.name
    # On contended servers the service account controller can slow down, leading to the
    # count changing during a run. Wait up to 15s for the count to stabilize, assuming that
    # updates come at a consistent rate, and are not held indefinitely.
    found, err = stable_count(f.core.list_namespaced_config_map, ns, 1, 60, 15)
    expect_ok(err)
    default_config_maps = "%d" % found
    hard_config_maps = "%d" % (found + 1)

    c = count_quota(f)

    by("Creating a ResourceQuota")
    quota_name = "test-quota"
    resource_quota = new_test_resource_quota(quota_name)
    resource_quota.spec.hard[RESOURCE_CONFIG_MAPS] = q(hard_config_maps).string()
    expect_no_error(create_resource_quota, f.core, ns, resource_quota)

    by("Ensuring resource quota status is calculated")
    used_resources = {RESOURCE_QUOTAS: q(str(c + 1)),
                      RESOURCE_CONFIG_MAPS: q(default_config_maps)}
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Creating a ConfigMap")
    config_map = new_test_config_map_for_quota("test-configmap")
    config_map = expect_no_error(f.core.create_namespaced_config_map, ns, config_map)

    by("Ensuring resource quota status captures configMap creation")
    used_resources = {RESOURCE_QUOTAS: q(str(c + 1)),
                      RESOURCE_CONFIG_MAPS: q(hard_config_maps)}
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Deleting a ConfigMap")
    expect_no_error(f.core.delete_namespaced_config_map, config_map.metadata.name, ns)

    by("Ensuring resource quota status released usage")
    used_resources[RESOURCE_CONFIG_MAPS] = q(default_config_maps)
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))


# Release: v1.16
# Testname: ResourceQuota, object count quota, replicationController
# Description: Create a ResourceQuota. Creation MUST be successful and its
# ResourceQuotaStatus MUST match to expected used and total allowed resource quota count
# within namespace. Create a ReplicationController. Its creation MUST be successful and
# resource usage count against the ReplicationController object MUST be captured in
# ResourceQuotaStatus of the ResourceQuota. Delete the ReplicationController. Deletion MUST
# succeed and resource usage count against the ReplicationController object MUST be released
# from ResourceQuotaStatus of the ResourceQuota.
@pytest.mark.test_timeout(30 + 3 * 60 + 30)
@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the "
             "life of a replication controller. [Conformance]")
def test_resource_quota_replication_controller(new_framework):
    f = rq_framework(new_framework)
    ns = f.namespace.metadata.name
    c = count_quota(f)

    by("Creating a ResourceQuota")
    quota_name = "test-quota"
    resource_quota = new_test_resource_quota(quota_name)
    expect_no_error(create_resource_quota, f.core, ns, resource_quota)

    by("Ensuring resource quota status is calculated")
    used_resources = {RESOURCE_QUOTAS: q(str(c + 1)), RESOURCE_REPLICATION_CONTROLLERS: q("0")}
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Creating a ReplicationController")
    replication_controller = new_test_replication_controller_for_quota("test-rc", "nginx", 0)
    replication_controller = expect_no_error(f.core.create_namespaced_replication_controller,
                                             ns, replication_controller)

    by("Ensuring resource quota status captures replication controller creation")
    used_resources = {RESOURCE_REPLICATION_CONTROLLERS: q("1")}
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Deleting a ReplicationController")
    # Without the delete options, the object isn't actually removed until the GC verifies
    # that all children have been detached. ReplicationControllers default to "orphan",
    # which is different from most resources. (Why? To preserve a common workflow from prior
    # to the GC's introduction.)
    expect_no_error(f.core.delete_namespaced_replication_controller,
                    replication_controller.metadata.name, ns,
                    body=client.V1DeleteOptions(propagation_policy="Background"))

    by("Ensuring resource quota status released usage")
    used_resources[RESOURCE_REPLICATION_CONTROLLERS] = q("0")
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))


# Release: v1.16
# Testname: ResourceQuota, object count quota, replicaSet
# Description: Create a ResourceQuota. Creation MUST be successful and its
# ResourceQuotaStatus MUST match to expected used and total allowed resource quota count
# within namespace. Create a ReplicaSet. Its creation MUST be successful and resource usage
# count against the ReplicaSet object MUST be captured in ResourceQuotaStatus of the
# ResourceQuota. Delete the ReplicaSet. Deletion MUST succeed and resource usage count
# against the ReplicaSet object MUST be released from ResourceQuotaStatus of the
# ResourceQuota.
@pytest.mark.test_timeout(30 + 3 * 60 + 30)
@conformance("[sig-api-machinery] ResourceQuota should create a ResourceQuota and capture the "
             "life of a replica set. [Conformance]")
def test_resource_quota_replica_set(new_framework):
    f = rq_framework(new_framework)
    ns = f.namespace.metadata.name
    apps = client.AppsV1Api(f.api_client)
    c = count_quota(f)

    by("Creating a ResourceQuota")
    quota_name = "test-quota"
    resource_quota = new_test_resource_quota(quota_name)
    expect_no_error(create_resource_quota, f.core, ns, resource_quota)

    by("Ensuring resource quota status is calculated")
    used_resources = {RESOURCE_QUOTAS: q(str(c + 1)), "count/replicasets.apps": q("0")}
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Creating a ReplicaSet")
    replica_set = new_test_replica_set_for_quota("test-rs", "nginx", 0)
    replica_set = expect_no_error(apps.create_namespaced_replica_set, ns, replica_set)

    by("Ensuring resource quota status captures replicaset creation")
    used_resources = {"count/replicasets.apps": q("1")}
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))

    by("Deleting a ReplicaSet")
    expect_no_error(apps.delete_namespaced_replica_set, replica_set.metadata.name, ns)

    by("Ensuring resource quota status released usage")
    used_resources["count/replicasets.apps"] = q("0")
    expect_ok(wait_for_resource_quota(f.core, ns, quota_name, used_resources))


def _zero_compute(used_resources):
    used_resources[RESOURCE_PODS] = q("0")
    used_resources[RESOURCE_REQUESTS_CPU] = q("0")
    used_resources[RESOURCE_REQUESTS_MEMORY] = q("0")
    used_resources[RESOURCE_LIMITS_CPU] = q("0")
    used_resources[RESOURCE_LIMITS_MEMORY] = q("0")


def _pod_compute(used_resources, requests, limits):
    used_resources[RESOURCE_PODS] = q("1")
    used_resources[RESOURCE_REQUESTS_CPU] = q(requests[RESOURCE_CPU])
    used_resources[RESOURCE_REQUESTS_MEMORY] = q(requests[RESOURCE_MEMORY])
    used_resources[RESOURCE_LIMITS_CPU] = q(limits[RESOURCE_CPU])
    used_resources[RESOURCE_LIMITS_MEMORY] = q(limits[RESOURCE_MEMORY])


# Release: v1.16
# Testname: ResourceQuota, quota scope, Terminating and NotTerminating scope
# Description: Create two ResourceQuotas, one with 'Terminating' scope and another
# 'NotTerminating' scope. Request and the limit counts for CPU and Memory resources are set
# for the ResourceQuota. Creation MUST be successful and their ResourceQuotaStatus MUST match
# to expected used and total allowed resource quota count within namespace. Create a Pod
# with specified CPU and Memory ResourceRequirements fall within quota limits. Pod creation
# MUST be successful and usage count MUST be captured in ResourceQuotaStatus of
# 'NotTerminating' scoped ResourceQuota but MUST NOT in 'Terminating' scoped ResourceQuota.
# Delete the Pod. Pod deletion MUST succeed and Pod resource usage count MUST be released
# from ResourceQuotaStatus of 'NotTerminating' scoped ResourceQuota. Create a pod with
# specified activeDeadlineSeconds and resourceRequirements for CPU and Memory fall within
# quota limits. Pod creation MUST be successful and usage count MUST be captured in
# ResourceQuotaStatus of 'Terminating' scoped ResourceQuota but MUST NOT in 'NotTerminating'
# scoped ResourceQuota. Delete the Pod. Pod deletion MUST succeed and Pod resource usage
# count MUST be released from ResourceQuotaStatus of 'Terminating' scoped ResourceQuota.
@pytest.mark.test_timeout(8 * 60 + 30)
@conformance("[sig-api-machinery] ResourceQuota should verify ResourceQuota with terminating "
             "scopes. [Conformance]")
def test_resource_quota_terminating_scopes(new_framework):
    f = rq_framework(new_framework)
    ns = f.namespace.metadata.name

    by("Creating a ResourceQuota with terminating scope")
    quota_terminating_name = "quota-terminating"
    resource_quota_terminating = expect_no_error(
        create_resource_quota, f.core, ns,
        new_test_resource_quota_with_scope(quota_terminating_name, SCOPE_TERMINATING))

    by("Ensuring ResourceQuota status is calculated")
    used_resources = {RESOURCE_PODS: q("0")}
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_terminating.metadata.name,
                                      used_resources))

    by("Creating a ResourceQuota with not terminating scope")
    quota_not_terminating_name = "quota-not-terminating"
    resource_quota_not_terminating = expect_no_error(
        create_resource_quota, f.core, ns,
        new_test_resource_quota_with_scope(quota_not_terminating_name, SCOPE_NOT_TERMINATING))

    by("Ensuring ResourceQuota status is calculated")
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_not_terminating.metadata.name,
                                      used_resources))

    by("Creating a long running pod")
    pod_name = "test-pod"
    requests = {RESOURCE_CPU: "500m", RESOURCE_MEMORY: "200Mi"}
    limits = {RESOURCE_CPU: "1", RESOURCE_MEMORY: "400Mi"}
    pod = new_test_pod_for_quota(f, pod_name, requests, limits)
    expect_no_error(f.core.create_namespaced_pod, ns, pod)

    by("Ensuring resource quota with not terminating scope captures the pod usage")
    _pod_compute(used_resources, requests, limits)
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_not_terminating.metadata.name,
                                      used_resources))

    by("Ensuring resource quota with terminating scope ignored the pod usage")
    _zero_compute(used_resources)
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_terminating.metadata.name,
                                      used_resources))

    by("Deleting the pod")
    expect_no_error(f.core.delete_namespaced_pod, pod_name, ns,
                    body=client.V1DeleteOptions(grace_period_seconds=0))

    by("Ensuring resource quota status released the pod usage")
    _zero_compute(used_resources)
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_not_terminating.metadata.name,
                                      used_resources))

    by("Creating a terminating pod")
    pod_name = "terminating-pod"
    pod = new_test_pod_for_quota(f, pod_name, requests, limits)
    active_deadline_seconds = 3600
    pod.spec.active_deadline_seconds = active_deadline_seconds
    expect_no_error(f.core.create_namespaced_pod, ns, pod)

    by("Ensuring resource quota with terminating scope captures the pod usage")
    _pod_compute(used_resources, requests, limits)
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_terminating.metadata.name,
                                      used_resources))

    by("Ensuring resource quota with not terminating scope ignored the pod usage")
    _zero_compute(used_resources)
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_not_terminating.metadata.name,
                                      used_resources))

    by("Deleting the pod")
    expect_no_error(f.core.delete_namespaced_pod, pod_name, ns,
                    body=client.V1DeleteOptions(grace_period_seconds=0))

    by("Ensuring resource quota status released the pod usage")
    _zero_compute(used_resources)
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_terminating.metadata.name,
                                      used_resources))


# Release: v1.16
# Testname: ResourceQuota, quota scope, BestEffort and NotBestEffort scope
# Description: Create two ResourceQuotas, one with 'BestEffort' scope and another with
# 'NotBestEffort' scope. Creation MUST be successful and their ResourceQuotaStatus MUST match
# to expected used and total allowed resource quota count within namespace. Create a
# 'BestEffort' Pod by not explicitly specifying resource limits and requests. Pod creation
# MUST be successful and usage count MUST be captured in ResourceQuotaStatus of 'BestEffort'
# scoped ResourceQuota but MUST NOT in 'NotBestEffort' scoped ResourceQuota. Delete the Pod.
# Pod deletion MUST succeed and Pod resource usage count MUST be released from
# ResourceQuotaStatus of 'BestEffort' scoped ResourceQuota. Create a 'NotBestEffort' Pod by
# explicitly specifying resource limits and requests. Pod creation MUST be successful and
# usage count MUST be captured in ResourceQuotaStatus of 'NotBestEffort' scoped
# ResourceQuota but MUST NOT in 'BestEffort' scoped ResourceQuota. Delete the Pod. Pod
# deletion MUST succeed and Pod resource usage count MUST be released from
# ResourceQuotaStatus of 'NotBestEffort' scoped ResourceQuota.
@pytest.mark.test_timeout(8 * 60 + 30)
@conformance("[sig-api-machinery] ResourceQuota should verify ResourceQuota with best effort "
             "scope. [Conformance]")
def test_resource_quota_best_effort_scope(new_framework):
    f = rq_framework(new_framework)
    ns = f.namespace.metadata.name

    by("Creating a ResourceQuota with best effort scope")
    resource_quota_best_effort = expect_no_error(
        create_resource_quota, f.core, ns,
        new_test_resource_quota_with_scope("quota-besteffort", SCOPE_BEST_EFFORT))

    by("Ensuring ResourceQuota status is calculated")
    used_resources = {RESOURCE_PODS: q("0")}
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_best_effort.metadata.name,
                                      used_resources))

    by("Creating a ResourceQuota with not best effort scope")
    resource_quota_not_best_effort = expect_no_error(
        create_resource_quota, f.core, ns,
        new_test_resource_quota_with_scope("quota-not-besteffort", SCOPE_NOT_BEST_EFFORT))

    by("Ensuring ResourceQuota status is calculated")
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_not_best_effort.metadata.name,
                                      used_resources))

    by("Creating a best-effort pod")
    pod = new_test_pod_for_quota(f, POD_NAME, {}, {})
    pod = expect_no_error(f.core.create_namespaced_pod, ns, pod)

    by("Ensuring resource quota with best effort scope captures the pod usage")
    used_resources[RESOURCE_PODS] = q("1")
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_best_effort.metadata.name,
                                      used_resources))

    by("Ensuring resource quota with not best effort ignored the pod usage")
    used_resources[RESOURCE_PODS] = q("0")
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_not_best_effort.metadata.name,
                                      used_resources))

    by("Deleting the pod")
    expect_no_error(f.core.delete_namespaced_pod, pod.metadata.name, ns,
                    body=client.V1DeleteOptions(grace_period_seconds=0))

    by("Ensuring resource quota status released the pod usage")
    used_resources[RESOURCE_PODS] = q("0")
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_best_effort.metadata.name,
                                      used_resources))

    by("Creating a not best-effort pod")
    requests = {RESOURCE_CPU: "500m", RESOURCE_MEMORY: "200Mi"}
    limits = {RESOURCE_CPU: "1", RESOURCE_MEMORY: "400Mi"}
    pod = new_test_pod_for_quota(f, "burstable-pod", requests, limits)
    pod = expect_no_error(f.core.create_namespaced_pod, ns, pod)

    by("Ensuring resource quota with not best effort scope captures the pod usage")
    used_resources[RESOURCE_PODS] = q("1")
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_not_best_effort.metadata.name,
                                      used_resources))

    by("Ensuring resource quota with best effort scope ignored the pod usage")
    used_resources[RESOURCE_PODS] = q("0")
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_best_effort.metadata.name,
                                      used_resources))

    by("Deleting the pod")
    expect_no_error(f.core.delete_namespaced_pod, pod.metadata.name, ns,
                    body=client.V1DeleteOptions(grace_period_seconds=0))

    by("Ensuring resource quota status released the pod usage")
    used_resources[RESOURCE_PODS] = q("0")
    expect_ok(wait_for_resource_quota(f.core, ns, resource_quota_not_best_effort.metadata.name,
                                      used_resources))


def expect_have_key_with_value(rl, key, expected):
    """gomega.Expect(rl).To(gomega.HaveKeyWithValue(key, resource.MustParse(expected))):
    the value must be Equal (the same Quantity struct)."""
    if not (rl and key in rl and go_equal(resource_list_get(rl, key), q(expected))):
        fail("Expected\n    <v1.ResourceList | len:%d>: %s\nto have {key: value}\n    "
             "{%s: %s}", len(rl or {}), format_resource_list(rl), key, expected)


def expect_quantity_equal(actual, expected_text, explain=""):
    """gomega.Expect(actual).To(gomega.Equal(resource.MustParse(expected_text)), explain)"""
    if not go_equal(actual, q(expected_text)):
        fail("%s\nExpected\n    <resource.Quantity>: %s (%s)\nto equal\n    "
             "<resource.Quantity>: %s", explain, actual.string(), actual.format or '""',
             expected_text)


# Release: v1.16
# Testname: ResourceQuota, update and delete
# Description: Create a ResourceQuota for CPU and Memory quota limits. Creation MUST be
# successful. When ResourceQuota is updated to modify CPU and Memory quota limits, update
# MUST succeed with updated values for CPU and Memory limits. When ResourceQuota is deleted,
# it MUST not be available in the namespace.
@conformance("[sig-api-machinery] ResourceQuota should be able to update and delete "
             "ResourceQuota. [Conformance]")
def test_resource_quota_update_and_delete(new_framework):
    f = rq_framework(new_framework)
    core = f.core
    ns = f.namespace.metadata.name

    by("Creating a ResourceQuota")
    quota_name = "test-quota"
    resource_quota = client.V1ResourceQuota(metadata=client.V1ObjectMeta(),
                                            spec=client.V1ResourceQuotaSpec(hard={}))
    resource_quota.metadata.name = quota_name
    resource_quota.spec.hard[RESOURCE_CPU] = q("1").string()
    resource_quota.spec.hard[RESOURCE_MEMORY] = q("500Mi").string()
    expect_no_error(create_resource_quota, core, ns, resource_quota)

    by("Getting a ResourceQuota")
    resource_quota_result = expect_no_error(core.read_namespaced_resource_quota, quota_name, ns)
    expect_have_key_with_value(resource_quota_result.spec.hard, RESOURCE_CPU, "1")
    expect_have_key_with_value(resource_quota_result.spec.hard, RESOURCE_MEMORY, "500Mi")

    by("Updating a ResourceQuota")
    resource_quota.spec.hard[RESOURCE_CPU] = q("2").string()
    resource_quota.spec.hard[RESOURCE_MEMORY] = q("1Gi").string()
    # (the object built above: no resourceVersion, as upstream's Update of it)
    resource_quota_result = expect_no_error(core.replace_namespaced_resource_quota, quota_name,
                                            ns, resource_quota)
    expect_have_key_with_value(resource_quota_result.spec.hard, RESOURCE_CPU, "2")
    expect_have_key_with_value(resource_quota_result.spec.hard, RESOURCE_MEMORY, "1Gi")

    by("Verifying a ResourceQuota was modified")
    resource_quota_result = expect_no_error(core.read_namespaced_resource_quota, quota_name, ns)
    expect_have_key_with_value(resource_quota_result.spec.hard, RESOURCE_CPU, "2")
    expect_have_key_with_value(resource_quota_result.spec.hard, RESOURCE_MEMORY, "1Gi")

    by("Deleting a ResourceQuota")
    expect_no_error(delete_resource_quota, core, ns, quota_name)

    by("Verifying the deleted ResourceQuota")
    try:
        core.read_namespaced_resource_quota(quota_name, ns)
        err = None
    except ApiException as e:
        err = e
    if not is_not_found(err):
        fail("Expected `not found` error, got: %s",
             "<nil>" if err is None else describe_error(err))


# Release: v1.25
# Testname: ResourceQuota, manage lifecycle of a ResourceQuota
# Description: Attempt to create a ResourceQuota for CPU and Memory quota limits. Creation
# MUST be successful. Attempt to list all namespaces with a label selector which MUST
# succeed. One list MUST be found. The ResourceQuota when patched MUST succeed. Given the
# patching of the ResourceQuota, the fields MUST equal the new values. It MUST succeed at
# deleting a collection of ResourceQuota via a label selector.
@conformance("[sig-api-machinery] ResourceQuota should manage the lifecycle of a ResourceQuota "
             "[Conformance]")
def test_resource_quota_lifecycle(new_framework):
    f = rq_framework(new_framework)
    core = f.core
    ns = f.namespace.metadata.name

    rq_name = "e2e-quota-" + rand_string(5)
    label = {"e2e-rq-label": rq_name}
    label_selector = selector_from_set(label)

    by("Creating a ResourceQuota")
    resource_quota = client.V1ResourceQuota(
        metadata=client.V1ObjectMeta(name=rq_name, labels=label),
        spec=client.V1ResourceQuotaSpec(hard={}))
    resource_quota.spec.hard[RESOURCE_CPU] = q("1").string()
    resource_quota.spec.hard[RESOURCE_MEMORY] = q("500Mi").string()
    expect_no_error(create_resource_quota, core, ns, resource_quota)

    by("Getting a ResourceQuota")
    resource_quota_result = expect_no_error(core.read_namespaced_resource_quota, rq_name, ns)
    expect_quantity_equal(resource_list_get(resource_quota_result.spec.hard, RESOURCE_CPU), "1")
    expect_quantity_equal(resource_list_get(resource_quota_result.spec.hard, RESOURCE_MEMORY),
                          "500Mi")

    by("Listing all ResourceQuotas with LabelSelector")
    try:
        rq = core.list_resource_quota_for_all_namespaces(label_selector=label_selector)
    except ApiException as err:
        fail("Failed to list job. %s: %s", describe_error(err), describe_error(err))
    if len(rq.items) != 1:
        fail("Failed to find ResourceQuotes %s\nExpected\n    <[]v1.ResourceQuota | len:%d>\n"
             "to have length 1", rq_name, len(rq.items))

    by("Patching the ResourceQuota")
    payload = "{\"metadata\":{\"labels\":{\"" + rq_name + "\":\"patched\"}},\"spec\":{\"hard\":" \
        "{ \"memory\":\"750Mi\"}}}"
    try:
        patched_resource_quota = core.patch_namespaced_resource_quota(rq_name, ns,
                                                                      json.loads(payload))
    except ApiException as err:
        fail("failed to patch ResourceQuota %s in namespace %s: %s", rq_name, ns,
             describe_error(err))
    patched_labels = patched_resource_quota.metadata.labels or {}
    if patched_labels.get(rq_name, "") != "patched":
        fail("Failed to find the label for this ResourceQuota. Current labels: %s\nExpected\n"
             "    <string>: %s\nto equal\n    <string>: patched", patched_labels,
             patched_labels.get(rq_name, ""))
    patched_memory = memory(patched_resource_quota.spec.hard)
    expect_quantity_equal(patched_memory, "750Mi",
                          "Hard memory value for ResourceQuota %r is %s not 750Mi." % (
                              patched_resource_quota.metadata.name, patched_memory.string()))

    by("Deleting a Collection of ResourceQuotas")
    expect_no_error(core.delete_collection_namespaced_resource_quota, ns,
                    label_selector=label_selector, body=client.V1DeleteOptions())

    by("Verifying the deleted ResourceQuota")
    try:
        core.read_namespaced_resource_quota(rq_name, ns)
        err = None
    except ApiException as e:
        err = e
    if not is_not_found(err):
        fail("Expected `not found` error, got: %s",
             "<nil>" if err is None else describe_error(err))


# Release: v1.26
# Testname: ResourceQuota, apply changes to a ResourceQuota status
# Description: Attempt to create a ResourceQuota for CPU and Memory quota limits. Creation
# MUST be successful. Updating the hard status values MUST succeed and the new values MUST
# be found. The reported hard status values MUST equal the spec hard values. Patching the
# spec hard values MUST succeed and the new values MUST be found. Patching the hard status
# values MUST succeed. The reported hard status values MUST equal the new spec hard values.
# Getting the /status MUST succeed and the reported hard status values MUST equal the spec
# hard values. Repatching the hard status values MUST succeed. The spec MUST NOT be changed
# when patching /status.
@pytest.mark.test_timeout(2 * POD_START_SHORT_TIMEOUT + 6 * 60 + 60)
@conformance("[sig-api-machinery] ResourceQuota should apply changes to a resourcequota status "
             "[Conformance]")
def test_resource_quota_apply_status(new_framework):
    f = rq_framework(new_framework)
    core = f.core
    ns = f.namespace.metadata.name
    rq_name = "e2e-rq-status-" + rand_string(5)
    label = {"e2e-rq-label": rq_name}
    label_selector = selector_from_set(label)

    def w(timeout, rv, condition):
        """watchtools.Until(ctxUntil, rv, w, condition) over the ListWatch whose WatchFunc
        watches the namespace's ResourceQuotas with the label selector."""
        return watch_until(timeout, rv, core.list_namespaced_resource_quota, ns,
                           label_selector=label_selector, allow_watch_bookmarks=True,
                           conditions=[condition])

    try:
        rq_list = core.list_resource_quota_for_all_namespaces(label_selector=label_selector)
    except ApiException as err:
        fail("failed to list Services: %s", describe_error(err))

    by("Creating resourceQuota %r" % rq_name)
    resource_quota = client.V1ResourceQuota(
        metadata=client.V1ObjectMeta(name=rq_name, labels=label),
        spec=client.V1ResourceQuotaSpec(hard={RESOURCE_CPU: q("500m").string(),
                                              RESOURCE_MEMORY: q("500Mi").string()}))
    expect_no_error(create_resource_quota, core, ns, resource_quota)

    initial_resource_quota = expect_no_error(core.read_namespaced_resource_quota, rq_name, ns)
    initial_cpu = cpu(initial_resource_quota.spec.hard)
    expect_quantity_equal(initial_cpu, "500m", "Hard cpu value for ResourceQuota %r is %s not "
                          "500m." % (initial_resource_quota.metadata.name, initial_cpu.string()))
    logf("Resource quota %r reports spec: hard cpu limit of %s", rq_name, initial_cpu.string())
    initial_memory = memory(initial_resource_quota.spec.hard)
    expect_quantity_equal(initial_memory, "500Mi", "Hard memory value for ResourceQuota %r is "
                          "%s not 500Mi." % (initial_resource_quota.metadata.name,
                                             initial_memory.string()))
    logf("Resource quota %r reports spec: hard memory limit of %s", rq_name,
         initial_memory.string())

    by("Updating resourceQuota %r /status" % rq_name)
    hard_limits = quota_add({}, initial_resource_quota.spec.hard)
    updated = {}

    def update_status():
        try:
            update_status_obj = core.read_namespaced_resource_quota(rq_name, ns)
        except ApiException as err:
            fail("Unable to get ResourceQuota %r: %s", rq_name, describe_error(err))
        reencode_resource_quota(update_status_obj)
        update_status_obj.status = client.V1ResourceQuotaStatus(hard=dict(hard_limits))
        updated["rq"] = core.replace_namespaced_resource_quota_status(rq_name, ns,
                                                                      update_status_obj)

    # retry.RetryOnConflict(retry.DefaultRetry, ...)
    try:
        retry_on_conflict(update_status)
    except ApiException as err:
        fail("Failed to update resourceQuota: %s", describe_error(err))
    updated_resource_quota = updated["rq"]

    def hard_matches(target):
        def condition(event):
            rq = event.get("object")
            if isinstance(rq, client.V1ResourceQuota):
                status_hard = rq.status.hard if rq.status else None
                found = (rq.metadata.name == target.metadata.name and
                         rq.metadata.namespace == ns and
                         semantic_equal_lists(status_hard, target.spec.hard))
                if not found:
                    logf("observed resourceQuota %r in namespace %r with hard status: %s",
                         rq.metadata.name, rq.metadata.namespace, _hard_repr(status_hard))
                    return False, None
                logf("Found resourceQuota %r in namespace %r with hard status: %s",
                     rq.metadata.name, rq.metadata.namespace, _hard_repr(status_hard))
                return found, None
            logf("Observed event: %r", event.get("raw_object", rq))
            return False, None
        return condition

    by("Confirm /status for %r resourceQuota via watch" % rq_name)
    _, err = w(POD_START_SHORT_TIMEOUT, rq_list.metadata.resource_version,
               hard_matches(updated_resource_quota))
    if err is not None:
        fail("failed to locate ResourceQuota %r in namespace %r: %s",
             updated_resource_quota.metadata.name, ns, err)
    logf("ResourceQuota %r /status was updated", updated_resource_quota.metadata.name)

    # Sync resourceQuota list before patching /status
    try:
        rq_list = core.list_resource_quota_for_all_namespaces(label_selector=label_selector)
    except ApiException as err:
        fail("failed to list Services: %s", describe_error(err))

    by("Patching hard spec values for cpu & memory")
    try:
        x_resource_quota = core.patch_namespaced_resource_quota(
            updated_resource_quota.metadata.name, ns,
            json.loads('{"spec":{"hard":{"cpu":"1","memory":"1Gi"}}}'))
    except ApiException as err:
        # upstream's message reads xResourceQuota.Name of the nil result: a nil pointer
        # dereference, which fails the test as well
        fail("runtime error: invalid memory address or nil pointer dereference "
             "(xResourceQuota.Name; patch error: %s)", describe_error(err))
    logf("Resource quota %r reports spec: hard cpu limit of %s", rq_name,
         cpu(x_resource_quota.spec.hard).string())
    logf("Resource quota %r reports spec: hard memory limit of %s", rq_name,
         memory(x_resource_quota.spec.hard).string())

    by("Patching %r /status" % rq_name)
    hard_limits = quota_add({}, x_resource_quota.spec.hard)
    rq_status_json = json.dumps(hard_limits, sort_keys=True, separators=(",", ":"))
    patched_resource_quota = expect_no_error(
        core.patch_namespaced_resource_quota_status, rq_name, ns,
        json.loads('{"status": {"hard": ' + rq_status_json + '}}'))

    by("Confirm /status for %r resourceQuota via watch" % rq_name)
    until_deadline = time.monotonic() + POD_START_SHORT_TIMEOUT  # ctxUntil
    _, err = w(POD_START_SHORT_TIMEOUT, rq_list.metadata.resource_version,
               hard_matches(patched_resource_quota))
    if err is not None:
        fail("failed to locate ResourceQuota %r in namespace %r: %s",
             patched_resource_quota.metadata.name, ns, err)
    logf("ResourceQuota %r /status was patched", patched_resource_quota.metadata.name)

    by("Get %r /status" % rq_name)
    unstruct = expect_no_error(raw_call, f.api_client, "GET",
                               "/api/v1/namespaces/%s/resourcequotas/%s/status" % (
                                   ns, resource_quota.metadata.name))
    rq = unstructured_to_resource_quota(unstruct)
    status_hard = rq.status.hard if rq.status else None
    rq_cpu = cpu(status_hard)
    expect_quantity_equal(rq_cpu, "1", "Hard cpu value for ResourceQuota %r is %s not 1." % (
        rq.metadata.name, rq_cpu.string()))
    logf("Resourcequota %r reports status: hard cpu of %s", rq_name, rq_cpu.string())
    rq_memory = memory(status_hard)
    expect_quantity_equal(rq_memory, "1Gi", "Hard memory value for ResourceQuota %r is %s not "
                          "1Gi." % (rq.metadata.name, rq_memory.string()))
    logf("Resourcequota %r reports status: hard memory of %s", rq_name, rq_memory.string())

    # Sync resourceQuota list before repatching /status
    try:
        rq_list = core.list_resource_quota_for_all_namespaces(label_selector=label_selector)
    except ApiException as err:
        fail("failed to list Services: %s", describe_error(err))

    by("Repatching %r /status before checking Spec is unchanged" % rq_name)
    new_hard_limits = {RESOURCE_CPU: q("2").string(), RESOURCE_MEMORY: q("2Gi").string()}
    rq_status_json = json.dumps(new_hard_limits, sort_keys=True, separators=(",", ":"))
    repatched_resource_quota = expect_no_error(
        core.patch_namespaced_resource_quota_status, rq_name, ns,
        json.loads('{"status": {"hard": ' + rq_status_json + '}}'))
    repatched_hard = repatched_resource_quota.status.hard \
        if repatched_resource_quota.status else None
    repatched_cpu = cpu(repatched_hard)
    expect_quantity_equal(repatched_cpu, "2", "Hard cpu value for ResourceQuota %r is %s not 2."
                          % (repatched_resource_quota.metadata.name, repatched_cpu.string()))
    logf("Resourcequota %r reports status: hard cpu of %s",
         repatched_resource_quota.metadata.name, repatched_cpu.string())
    repatched_memory = memory(repatched_hard)
    expect_quantity_equal(repatched_memory, "2Gi", "Hard memory value for ResourceQuota %r is "
                          "%s not 2Gi." % (repatched_resource_quota.metadata.name,
                                           repatched_memory.string()))
    logf("Resourcequota %r reports status: hard memory of %s",
         repatched_resource_quota.metadata.name, repatched_memory.string())

    def repatched(event):
        rq = event.get("object")
        if isinstance(rq, client.V1ResourceQuota):
            status_hard = rq.status.hard if rq.status else None
            found = (rq.metadata.name == patched_resource_quota.metadata.name and
                     rq.metadata.namespace == ns and
                     go_equal(cpu(status_hard), q("2"), pointer=True) and
                     go_equal(memory(status_hard), q("2Gi"), pointer=True))
            if not found:
                logf("observed resourceQuota %r in namespace %r with hard status: %s",
                     rq.metadata.name, rq.metadata.namespace, _hard_repr(status_hard))
                return False, None
            logf("Found resourceQuota %r in namespace %r with hard status: %s",
                 rq.metadata.name, rq.metadata.namespace, _hard_repr(status_hard))
            return found, None
        logf("Observed event: %r", event.get("raw_object", rq))
        return False, None

    # (the same ctxUntil as the previous watch)
    _, err = w(max(until_deadline - time.monotonic(), 0), rq_list.metadata.resource_version,
               repatched)
    if err is not None:
        fail("failed to locate ResourceQuota %r in namespace %r: %s",
             patched_resource_quota.metadata.name, ns, err)

    # the resource_quota_controller ignores changes to the status so we have to wait for a
    # full resync of the controller to reconcile the status again, this full resync is set
    # every 5 minutes by default so we need to poll at least one minute more just in case we
    # we start to poll just after the full resync has happened and he have to wait until next
    # full resync.
    # Ref: https://issues.k8s.io/121911
    def reset():
        try:
            resource_quota_result = core.read_namespaced_resource_quota(rq_name, ns)
        except ApiException:
            return False, None
        spec_hard = resource_quota_result.spec.hard if resource_quota_result.spec else None
        status_hard = resource_quota_result.status.hard if resource_quota_result.status \
            else None
        if go_equal(cpu(spec_hard), cpu(status_hard), pointer=True):
            if not go_equal(cpu(status_hard), q("1"), pointer=True):
                logf("Hard cpu status value for ResourceQuota %r is %s not 1.",
                     repatched_resource_quota.metadata.name, cpu(status_hard).string())
                return False, None
            if not go_equal(memory(status_hard), q("1Gi"), pointer=True):
                logf("Hard memory status value for ResourceQuota %r is %s not 1Gi.",
                     repatched_resource_quota.metadata.name, memory(status_hard).string())
                return False, None
            logf("ResourceQuota %r Spec was unchanged and /status reset",
                 resource_quota_result.metadata.name)
            return True, None
        logf("ResourceQuota %r Spec and Status does not match: %s",
             resource_quota_result.metadata.name,
             json.dumps(_GO_API.sanitize_for_serialization(resource_quota_result)))
        return False, None

    err = _poll(5, 6 * 60, reset, immediate=True)
    if err is not None:
        fail("Error waiting for ResourceQuota %r to reset its Status: %s",
             patched_resource_quota.metadata.name, err)
