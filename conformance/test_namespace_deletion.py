"""Ports of the namespace-deletion [Conformance] tests of test/e2e/apimachinery/namespace.go
(kubernetes/kubernetes): "should ensure that all pods are removed when a namespace is
deleted" and "should ensure that all services are removed when a namespace is deleted".

They need the namespace controller (shepherd-controller-manager empties and removes the
deleted namespace) and, for the pods, the scheduler and a node (conftest.py). Image
substitutions: none; the pod runs imageutils.GetPauseImageName(), which is the same
reference as upstream's (PAUSE_IMAGE).
"""

import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (PAUSE_IMAGE, by, conformance, describe_error, expect_no_error, fail,
                           go_deref, is_not_found, logf, wait_for_object_in_namespace,
                           wait_for_pod_running)

BASE = "namespaces"
LEVEL = "baseline"  # f.NamespacePodSecurityLevel = admissionapi.LevelBaseline


def wait_for_default_service_account_in_namespace(f, ns):
    """framework.WaitForDefaultServiceAccountInNamespace (ServiceAccountProvisionTimeout)."""
    wait_for_object_in_namespace(f.core.list_namespaced_service_account, ns, "default",
                                 "service account")


def wait_for_namespace_removed(f, name, max_wait_seconds):
    """wait.Poll(1*time.Second, maxWaitSeconds, Get namespace until IsNotFound): the first
    check after one interval; any other error (or none) keeps polling."""
    deadline = time.monotonic() + max_wait_seconds
    while True:
        time.sleep(1)
        try:
            f.core.read_namespace(name)
        except ApiException as err:
            if is_not_found(err):
                return
        if time.monotonic() >= deadline:
            fail("failed to wait for namespace %s to be removed: timed out waiting for the "
                 "condition", name)


def ensure_pods_are_removed_when_namespace_is_deleted(f):
    """ensurePodsAreRemovedWhenNamespaceIsDeleted"""
    by("Creating a test namespace")
    namespace_name = "nsdeletetest"
    namespace = f.create_namespace(namespace_name)

    by("Waiting for a default service account to be provisioned in namespace")
    wait_for_default_service_account_in_namespace(f, namespace.metadata.name)

    by("Creating a pod in the namespace")
    pod_name = "test-pod"
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name=pod_name),
        spec=client.V1PodSpec(containers=[client.V1Container(name="nginx",
                                                             image=PAUSE_IMAGE)]))
    pod = expect_no_error(f.core.create_namespaced_pod, namespace.metadata.name, pod,
                          explain="failed to create pod %s in namespace: %s"
                                  % (pod_name, namespace.metadata.name))

    by("Waiting for the pod to have running status")
    err = wait_for_pod_running(f.core, pod)
    if err is not None:
        fail("unexpected error: %s", err)

    by("Deleting the namespace")
    expect_no_error(f.core.delete_namespace, namespace.metadata.name,
                    body=client.V1DeleteOptions(),
                    explain="failed to delete namespace: %s" % namespace.metadata.name)

    by("Waiting for the namespace to be removed.")
    max_wait_seconds = 60 + go_deref(pod.spec.termination_grace_period_seconds,
                                     "pod.Spec.TerminationGracePeriodSeconds")
    wait_for_namespace_removed(f, namespace.metadata.name, max_wait_seconds)

    by("Recreating the namespace")
    namespace = f.create_namespace(namespace_name)

    by("Verifying there are no pods in the namespace")
    try:
        got = f.core.read_namespaced_pod(pod.metadata.name, namespace.metadata.name)
    except ApiException as err:
        logf("getting pod %s: %s", pod.metadata.name, describe_error(err))
    else:
        fail("failed to get pod %s in namespace: %s: expected an error, got the pod %s",
             pod.metadata.name, namespace.metadata.name, got.metadata.uid)


def ensure_services_are_removed_when_namespace_is_deleted(f):
    """ensureServicesAreRemovedWhenNamespaceIsDeleted"""
    by("Creating a test namespace")
    namespace_name = "nsdeletetest"
    namespace = f.create_namespace(namespace_name)

    by("Waiting for a default service account to be provisioned in namespace")
    wait_for_default_service_account_in_namespace(f, namespace.metadata.name)

    by("Creating a service in the namespace")
    service_name = "test-service"
    labels = {"foo": "bar", "baz": "blah"}
    service = client.V1Service(
        metadata=client.V1ObjectMeta(name=service_name),
        spec=client.V1ServiceSpec(
            selector=labels,
            ports=[client.V1ServicePort(port=80, target_port=80)]))  # intstr.FromInt32(80)
    service = expect_no_error(f.core.create_namespaced_service, namespace.metadata.name,
                              service, explain="failed to create service %s in namespace %s"
                                               % (service_name, namespace.metadata.name))

    by("Deleting the namespace")
    expect_no_error(f.core.delete_namespace, namespace.metadata.name,
                    body=client.V1DeleteOptions(),
                    explain="failed to delete namespace: %s" % namespace.metadata.name)

    by("Waiting for the namespace to be removed.")
    max_wait_seconds = 60
    wait_for_namespace_removed(f, namespace.metadata.name, max_wait_seconds)

    by("Recreating the namespace")
    namespace = f.create_namespace(namespace_name)

    by("Verifying there is no service in the namespace")
    try:
        got = f.core.read_namespaced_service(service.metadata.name, namespace.metadata.name)
    except ApiException as err:
        logf("getting service %s: %s", service.metadata.name, describe_error(err))
    else:
        fail("failed to get service %s in namespace: %s: expected an error, got the service %s",
             service.metadata.name, namespace.metadata.name, got.metadata.uid)


# Release: v1.11
# Testname: namespace-deletion-removes-pods
# Description: Ensure that if a namespace is deleted then all pods are removed from that
# namespace.
@conformance("[sig-api-machinery] Namespaces [Serial] should ensure that all pods are removed "
             "when a namespace is deleted [Conformance]")
def test_namespace_deletion_removes_pods(new_framework):
    f = new_framework(BASE, LEVEL)
    ensure_pods_are_removed_when_namespace_is_deleted(f)


# Release: v1.11
# Testname: namespace-deletion-removes-services
# Description: Ensure that if a namespace is deleted then all services are removed from that
# namespace.
@conformance("[sig-api-machinery] Namespaces [Serial] should ensure that all services are "
             "removed when a namespace is deleted [Conformance]")
def test_namespace_deletion_removes_services(new_framework):
    f = new_framework(BASE, LEVEL)
    ensure_services_are_removed_when_namespace_is_deleted(f)
