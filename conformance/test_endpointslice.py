"""Ports of the EndpointSlice [Conformance] tests of test/e2e/network/endpointslice.go
(kubernetes/kubernetes, the ginkgo v2 / context version): "should have Endpoints and
EndpointSlices pointing to API Server", "should create and delete
Endpoints and EndpointSlices for a Service with a selector specified", "should create
Endpoints and EndpointSlices for Pods matching a Service" and "should support creating
EndpointSlice API operations".

They need shepherd-controller-manager's Endpoints and EndpointSlice controllers and its
garbage collector (the slices are owned by their Service), and, for the pods, the scheduler
and the two nodes (conftest.py): the pods run for real and get their IPs from the nodes.

Image substitution: imageutils.Nginx (a server that runs until it is stopped) becomes
AGNHOST_IMAGE (agnhost-lite, whose default command `pause` runs until it is stopped); the
containers keep upstream's name "container1" and their declared ports (3000, 3001, 3002).
Nothing needs to listen on them: the Services publish not-ready addresses and the test only
reads the Endpoints and EndpointSlices (upstream's nginx does not listen on them either).

Decoding: the official Python client refuses an EndpointSlice whose `endpoints` is null
(its model requires the field, kubernetes-client/python#2214 and #2423), which is how
kube-apiserver serves a slice without endpoints (the placeholder slice of a Service with no
matching pods); client-go decodes it as an empty slice. The tests that read the
controller's slices therefore list them as JSON and decode them with a null `endpoints`
(or `items`) taken as empty, as Go does (``list_endpoint_slices``). The discovery documents
are read as JSON as well and only the fields upstream looks at are checked: the
discovery.k8s.io group and its v1 version, and the endpointslices resource.
client-go's ServerGroups first asks for aggregated discovery; the port asks for plain
application/json, which client-go also accepts.

Not ported:
* "should support a Service with multiple ports specified in multiple EndpointSlices" and
  "should support a Service with multiple endpoint IPs specified in multiple EndpointSlices"
  (not [Conformance]): they connect to the Service's cluster IP from a pod (execHostnameTest
  to agnhost `netexec` servers), which needs a service proxy such as kube-proxy; Shepherd has
  none (and agnhost-lite has no `netexec`).
"""

import json
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_framework import (AGNHOST_IMAGE, CONTEXT_DEADLINE, POLL_TIMED_OUT, poll, PodClient, Watcher, WatchClosed, by, conformance,
                           describe_error, expect_no_error, fail, go_deref, is_not_found, logf,
                           raw_call, retry_on_conflict, to_model)

BASE = "endpointslice"
LEVEL = "baseline"  # f.NamespacePodSecurityLevel = admissionapi.LevelBaseline

FOREVER_TEST_TIMEOUT = 30  # wait.ForeverTestTimeout
NGINX_IMAGE = AGNHOST_IMAGE  # imageutils.GetE2EImage(imageutils.Nginx), see the module doc

LABEL_SERVICE_NAME = "kubernetes.io/service-name"           # discoveryv1.LabelServiceName
LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"  # discoveryv1.LabelManagedBy
GROUP_NAME = "discovery.k8s.io"                              # discoveryv1.GroupName



def endpointslice_framework(new_framework):
    """SIGDescribe("EndpointSlice"): NewDefaultFramework("endpointslice"),
    NamespacePodSecurityLevel baseline."""
    return new_framework(BASE, LEVEL)



def go_json(f, obj):
    """json.Marshal / %#v stand-in for failure messages."""
    return json.dumps(f.api_client.sanitize_for_serialization(obj), sort_keys=True)


def list_endpoint_slices(f, ns, label_selector):
    """cs.DiscoveryV1().EndpointSlices(ns).List(ctx, ListOptions{LabelSelector}): decoded as
    client-go does, a null `endpoints` (or `items`) being an empty list (see the module doc).
    Raises ApiException."""
    raw = raw_call(f.api_client, "GET",
                   "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices" % ns,
                   query={"labelSelector": label_selector})
    if raw.get("items") is None:
        raw["items"] = []
    for item in raw["items"]:
        if item.get("endpoints") is None:
            item["endpoints"] = []
    return to_model(raw, "V1EndpointSliceList")


def create_service_report_err(f, ns, service):
    """createServiceReportErr"""
    # (upstream's message, verbatim)
    return expect_no_error(f.core.create_namespaced_service, ns, service,
                           explain="error deleting Service")


def open_watch(list_fn, *args, **kwargs):
    """client.Watch(ctx, ListOptions) followed by framework.ExpectNoError(err): the watch
    request has been answered (or has failed) when it returns."""
    w = Watcher(list_fn, *args, **kwargs)
    deadline = time.monotonic() + FOREVER_TEST_TIMEOUT
    # Watcher.started is set just before the response (or the error) is recorded.
    while w.error is None and getattr(w, "_resp", None) is None:
        if time.monotonic() > deadline:
            w.stop()
            fail("unexpected error: the watch request was not answered within %ss",
                 FOREVER_TEST_TIMEOUT)
        time.sleep(0.01)
    if w.error is not None:
        w.stop()
        fail("unexpected error: %s", describe_error(w.error))
    return w


# --------------------------------------------------------------------------- helpers


def expect_endpoints_and_slices(f, ns, svc, pods, num_subsets, num_slices, named_port):
    """expectEndpointsAndSlices: Endpoints and EndpointSlices exist for the Service with the
    expected addresses, ports and target references."""
    endpoint_slices = []

    def slices_match():
        found, has_matching_slices = has_matching_endpoint_slices(f, ns, svc.metadata.name,
                                                                  len(pods), num_slices)
        if not has_matching_slices:
            return False, None
        endpoint_slices[:] = found
        return True, None

    err = poll(2, 2 * 60, slices_match, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("Timed out waiting for EndpointSlices to match expectations: %s", err)

    endpoints_box = [client.V1Endpoints()]

    def endpoints_match():
        found, has_matching = has_matching_endpoints(f, ns, svc.metadata.name, len(pods),
                                                     num_subsets)
        if not has_matching:
            logf("Matching Endpoints not found")
            return False, None
        endpoints_box[0] = found
        return True, None

    err = poll(2, 2 * 60, endpoints_match, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("Timed out waiting for Endpoints to match expectations: %s", err)
    endpoints = endpoints_box[0]

    pods_by_ip = {}
    for pod in pods:
        pods_by_ip[pod.status.pod_ip] = pod
        if len(pod.spec.containers) != 1:
            fail("Expected pod to have 1 container, got %d", len(pod.spec.containers))

    endpoints_name = endpoints.metadata.name if endpoints.metadata else ""
    if endpoints_name != svc.metadata.name:
        fail("Expected Endpoints name to be %s, got %s", svc.metadata.name, endpoints_name)

    svc_ports = svc.spec.ports or []
    total_endpoint_addresses = 0
    for subset in endpoints.subsets or []:
        addresses = (subset.addresses or []) + (subset.not_ready_addresses or [])
        total_endpoint_addresses += len(addresses)

        subset_ports = subset.ports or []
        if len(subset_ports) != len(svc_ports):
            fail("Expected subset to have %d ports, got %d", len(svc_ports), len(subset_ports))

        # If not a named port, the subset ports should directly correspond with the Service
        # ports.
        if not named_port:
            for i, subset_port in enumerate(subset_ports):
                svc_port = svc_ports[i]
                if (subset_port.name or "") != (svc_port.name or ""):
                    fail("Expected port name to be %s, got %s", svc_port.name, subset_port.name)
                if subset_port.protocol != svc_port.protocol:
                    fail("Expected protocol to be %s, got %s", svc_port.protocol,
                         subset_port.protocol)
                if subset_port.port != target_port_int_val(svc_port):
                    fail("Expected port to be %d, got %d", target_port_int_val(svc_port),
                         subset_port.port)

        for address in addresses:
            pod = pods_by_ip.get(address.ip)
            if pod is None:
                fail("Unexpected address with IP: %s", address.ip)

            ensure_pod_target_ref(pod, address.target_ref)

            # If a named port, the subset ports should directly correspond with each
            # individual pod.
            if named_port:
                container = pod.spec.containers[0]
                for port in container.ports or []:
                    if port.name == target_port_string(svc_ports[0]):
                        subset_port = subset_ports[0]
                        if subset_port.port != port.container_port:
                            fail("Expected subset port to be %d, got %d", port.container_port,
                                 subset_port.port)
                        if (subset_port.name or "") != (svc_ports[0].name or ""):
                            fail("Expected subset port name to be %s, got %s",
                                 svc_ports[0].name, subset_port.name)

    if len(pods) != total_endpoint_addresses:
        fail("Expected %d addresses, got %d", len(pods), total_endpoint_addresses)

    if len(pods) == 0 and len(endpoint_slices) != 1:
        fail("Expected 1 EndpointSlice, got %d", len(endpoint_slices))

    # Use a set for deduping values. Duplicate addresses are technically valid here although
    # rare.
    es_addresses = set()
    for endpoint_slice in endpoint_slices:
        for endpoint in endpoint_slice.endpoints or []:
            es_addresses.add(endpoint.addresses[0])
        es_ports = endpoint_slice.ports or []
        if len(pods) == 0 and len(es_ports) != 0:
            fail("Expected EndpointSlice to have 0 ports, got %d", len(es_ports))
        if len(pods) > 0 and len(es_ports) != len(svc_ports):
            fail("Expected EndpointSlice to have %d ports, got %d", len(svc_ports),
                 len(es_ports))

        # If not a named port, the EndpointSlice ports should directly correspond with the
        # Service ports.
        if not named_port:
            for i, es_port in enumerate(es_ports):
                svc_port = svc_ports[i]
                if go_deref(es_port.name, "esPort.Name") != (svc_port.name or ""):
                    fail("Expected port name to be %s, got %s", svc_port.name, es_port.name)
                if go_deref(es_port.protocol, "esPort.Protocol") != svc_port.protocol:
                    fail("Expected protocol to be %s, got %s", svc_port.protocol,
                         es_port.protocol)
                if go_deref(es_port.port, "esPort.Port") != target_port_int_val(svc_port):
                    fail("Expected port to be %d, got %d", target_port_int_val(svc_port),
                         es_port.port)

        for endpoint in endpoint_slice.endpoints or []:
            if not endpoint.addresses:
                fail("Expected EndpointSlice endpoint to have at least 1 address")
            pod = pods_by_ip.get(endpoint.addresses[0])
            if pod is None:
                fail("Unexpected address with IP: %s", endpoint.addresses[0])

            ensure_pod_target_ref(pod, endpoint.target_ref)

            # If a named port, the EndpointSlice ports should directly correspond with each
            # individual pod.
            if named_port:
                container = pod.spec.containers[0]
                for port in container.ports or []:
                    if port.name == target_port_string(svc_ports[0]):
                        es_port = es_ports[0]
                        if go_deref(es_port.port, "esPort.Port") != port.container_port:
                            fail("Expected EndpointSlice port to be %d, got %d",
                                 port.container_port, es_port.port)
                        if go_deref(es_port.name, "esPort.Name") != (svc_ports[0].name or ""):
                            fail("Expected EndpointSlice port name to be %s, got %s",
                                 svc_ports[0].name, es_port.name)

    if len(pods) != len(es_addresses):
        fail("Expected %d addresses, got %d", len(pods), len(es_addresses))


def target_port_int_val(svc_port):
    """svcPort.TargetPort.IntVal: 0 for a string target port."""
    tp = svc_port.target_port
    return tp if isinstance(tp, int) else 0


def target_port_string(svc_port):
    """svcPort.TargetPort.String()"""
    tp = svc_port.target_port
    if tp is None:
        return "0"
    return str(tp)


def delete_endpoint_slices(f, ns, svc):
    """deleteEndpointSlices: deletes the EndpointSlices of the Service."""
    list_options = "%s=%s" % (LABEL_SERVICE_NAME, svc.metadata.name)
    es_list = expect_no_error(list_endpoint_slices, f, ns, list_options,
                              explain="Error fetching EndpointSlices for %s/%s Service"
                                      % (ns, svc.metadata.name))
    discovery = client.DiscoveryV1Api(f.api_client)
    for endpoint_slice in es_list.items:
        expect_no_error(discovery.delete_namespaced_endpoint_slice, endpoint_slice.metadata.name,
                        ns, body=client.V1DeleteOptions(),
                        explain="Error deleting %s/%s EndpointSlice"
                                % (ns, endpoint_slice.metadata.name))


def has_matching_endpoint_slices(f, ns, svc_name, num_endpoints, num_slices):
    """hasMatchingEndpointSlices: (slices, whether they match)."""
    list_options = "%s=%s" % (LABEL_SERVICE_NAME, svc_name)
    es_list = expect_no_error(list_endpoint_slices, f, ns, list_options,
                              explain="Error fetching EndpointSlice for Service %s/%s"
                                      % (ns, svc_name))

    if not es_list.items:
        logf("EndpointSlice for Service %s/%s not found", ns, svc_name)
        return [], False
    # In some cases the EndpointSlice controller will create more EndpointSlices than
    # necessary resulting in some duplication. This is valid and tests should only fail here
    # if less EndpointSlices than expected are added.
    if len(es_list.items) < num_slices:
        logf("Expected at least %d EndpointSlices for Service %s/%s, got %d", num_slices, ns,
             svc_name, len(es_list.items))
        for i, ep_slice in enumerate(es_list.items):
            logf("%d - %s", i, go_json(f, ep_slice))
        return es_list.items, False

    actual_num_endpoints = 0
    for endpoint_slice in es_list.items:
        actual_num_endpoints += len(endpoint_slice.endpoints or [])
    # In some cases the EndpointSlice controller will create more EndpointSlices than
    # necessary resulting in some duplication. This is valid and tests should only fail here
    # if less EndpointSlices than expected are added.
    if actual_num_endpoints < num_endpoints:
        logf("EndpointSlices for %s/%s Service have %d/%d endpoints", ns, svc_name,
             actual_num_endpoints, num_endpoints)
        return es_list.items, False

    return es_list.items, True


def has_matching_endpoints(f, ns, svc_name, num_ips, num_subsets):
    """hasMatchingEndpoints: (endpoints or None, whether they match)."""
    try:
        endpoints = f.core.read_namespaced_endpoints(svc_name, ns)
    except ApiException as err:
        if is_not_found(err):
            logf("Endpoints for %s/%s Service not found", ns, svc_name)
            return None, False
        fail("Error fetching Endpoints for %s/%s Service: unexpected error: %s", ns, svc_name,
             describe_error(err))
    subsets = endpoints.subsets or []
    if len(subsets) != num_subsets:
        logf("Endpoints for %s/%s Service with %d/%d Subsets", ns, svc_name, len(subsets),
             num_subsets)
        return None, False

    actual_num_ips = 0
    for endpoint_subset in subsets:
        actual_num_ips += len(endpoint_subset.addresses or []) + \
            len(endpoint_subset.not_ready_addresses or [])
    if actual_num_ips != num_ips:
        logf("Endpoints for %s/%s Service with %d/%d IPs", ns, svc_name, actual_num_ips, num_ips)
        return None, False

    return endpoints, True


def ensure_pod_target_ref(pod, target_ref):
    """ensurePodTargetRef: the Pod matches the target reference."""
    if target_ref is None:
        fail("Expected TargetRef to not be nil")
    if (target_ref.kind or "") != "Pod":
        fail("Expected TargetRef.Kind to be Pod, got %s", target_ref.kind)
    if (target_ref.namespace or "") != pod.metadata.namespace:
        fail("Expected TargetRef.Namespace to be %s, got %s", pod.metadata.namespace,
             target_ref.namespace)
    if (target_ref.name or "") != pod.metadata.name:
        fail("Expected TargetRef.Name to be %s, got %s", pod.metadata.name, target_ref.name)
    if (target_ref.uid or "") != pod.metadata.uid:
        fail("Expected TargetRef.UID to be %s, got %s", pod.metadata.uid, target_ref.uid)


# --------------------------------------------------------------------------- tests


# Release: v1.21
# Testname: EndpointSlice API
# Description: The discovery.k8s.io API group MUST exist in the /apis discovery document.
# The discovery.k8s.io/v1 API group/version MUST exist in the /apis/discovery.k8s.io
# discovery document. The endpointslices resource MUST exist in the
# /apis/discovery.k8s.io/v1 discovery document. The endpointslice controller should create
# and delete EndpointSlices for Pods matching a Service.
def endpoint_slices_equal(endpoints, endpoint_slice_list):
    """endpointSlicesEqual: the same addresses (ready and not) and ports, over the slices of
    the cluster's IP family (IPv4 here)."""
    ep_addresses, ep_ports = set(), set()
    for subset in endpoints.subsets or []:
        for addr in (subset.addresses or []) + (subset.not_ready_addresses or []):
            ep_addresses.add(addr.ip)
        for port in subset.ports or []:
            ep_ports.add(port.port)
    logf("Endpoints addresses: %s , ports: %s", sorted(ep_addresses), sorted(ep_ports))
    addr_type = "IPv4"  # framework.TestContext.ClusterIsIPv6() is false
    slice_addresses, slice_ports = set(), set()
    for sl in endpoint_slice_list.items:
        if sl.address_type != addr_type:
            logf("Skipping slice %s: wanted %s family, got %s", sl.metadata.name, addr_type,
                 sl.address_type)
            continue
        for ep in sl.endpoints or []:
            slice_addresses.update(ep.addresses or [])
        for port in sl.ports or []:
            if port.port is not None:
                slice_ports.add(port.port)
    logf("EndpointSlices addresses: %s , ports: %s", sorted(slice_addresses), sorted(slice_ports))
    return slice_addresses == ep_addresses and slice_ports == ep_ports


@conformance("[sig-network] EndpointSlice should have Endpoints and EndpointSlices pointing to "
             "API Server [Conformance]")
def test_endpointslice_pointing_to_api_server(new_framework):
    f = endpointslice_framework(new_framework)
    namespace, name = "default", "kubernetes"
    expect_no_error(f.core.read_namespaced_service, name, namespace,
                    explain='error obtaining API server "kubernetes" Service resource on "default" namespace')
    endpoints = expect_no_error(
        f.core.read_namespaced_endpoints, name, namespace,
        explain='error obtaining API server "kubernetes" Endpoint resource on "default" namespace')
    if not endpoints.subsets:
        fail("Expected at least 1 subset in endpoints, got %d: %r", 0, endpoints.subsets)
    endpoint_slice_list = expect_no_error(
        list_endpoint_slices, f, namespace, LABEL_SERVICE_NAME + "=" + name,
        explain='error obtaining API server "kubernetes" EndpointSlice resource on "default" namespace')
    if not endpoint_slice_list.items:
        fail("Expected at least 1 EndpointSlice, got %d: %r", len(endpoints.subsets), endpoints.subsets)
    if not endpoint_slices_equal(endpoints, endpoint_slice_list):
        fail("Expected EndpointSlice to have same addresses and port as Endpoints, got %r: %r",
             endpoints, endpoint_slice_list)


@conformance("[sig-network] EndpointSlice should create and delete Endpoints and "
             "EndpointSlices for a Service with a selector specified [Conformance]")
def test_endpointslice_create_delete_for_service_with_selector(new_framework):
    f = endpointslice_framework(new_framework)
    cs = f.core
    svc = create_service_report_err(f, f.namespace.metadata.name, client.V1Service(
        metadata=client.V1ObjectMeta(name="example-empty-selector"),
        spec=client.V1ServiceSpec(
            selector={
                "does-not-match-anything": "endpoints-and-endpoint-slices-should-still-be-created",
            },
            ports=[client.V1ServicePort(name="example", port=80, protocol="TCP")])))
    svc_ns, svc_name = svc.metadata.namespace, svc.metadata.name

    # Expect Endpoints resource to be created.
    def endpoints_exist():
        try:
            cs.read_namespaced_endpoints(svc_name, svc_ns)
        except ApiException:
            return False, None
        return True, None

    err = poll(2, FOREVER_TEST_TIMEOUT, endpoints_exist, timeout_error=POLL_TIMED_OUT)
    if err is not None:
        fail("No Endpoints found for Service %s/%s: %s", svc_ns, svc_name, err)

    # Expect EndpointSlice resource to be created.
    found = []

    def slice_exists():
        try:
            endpoint_slice_list = list_endpoint_slices(f, svc_ns,
                                                       "kubernetes.io/service-name=" + svc_name)
        except ApiException as e:
            return False, describe_error(e)
        if not endpoint_slice_list.items:
            return False, None
        found[:] = [endpoint_slice_list.items[0]]
        return True, None

    err = poll(2, FOREVER_TEST_TIMEOUT, slice_exists, timeout_error=POLL_TIMED_OUT)
    if err is not None:
        fail("No EndpointSlice found for Service %s/%s: %s", svc_ns, svc_name, err)
    endpoint_slice = found[0]

    # Ensure EndpointSlice has expected values.
    labels = endpoint_slice.metadata.labels or {}
    expected_managed_by = "endpointslice-controller.k8s.io"
    if LABEL_MANAGED_BY not in labels:
        fail("Expected EndpointSlice to have %s label, got %s", LABEL_MANAGED_BY, labels)
    elif labels[LABEL_MANAGED_BY] != expected_managed_by:
        fail("Expected EndpointSlice to have %s label with %s value, got %s", LABEL_MANAGED_BY,
             expected_managed_by, labels[LABEL_MANAGED_BY])
    if endpoint_slice.endpoints:
        fail("Expected EndpointSlice to have 0 endpoints, got %d: %s",
             len(endpoint_slice.endpoints), go_json(f, endpoint_slice.endpoints))

    expect_no_error(cs.delete_namespaced_service, svc_name, svc_ns,
                    body=client.V1DeleteOptions(), explain="error deleting Service")

    # Expect Endpoints resource to be deleted when Service is.
    def endpoints_gone():
        try:
            cs.read_namespaced_endpoints(svc_name, svc_ns)
        except ApiException as e:
            if is_not_found(e):
                return True, None
            return False, describe_error(e)
        return False, None

    err = poll(2, FOREVER_TEST_TIMEOUT, endpoints_gone, timeout_error=POLL_TIMED_OUT)
    if err is not None:
        fail("Endpoints resource not deleted after Service %s/%s was deleted: %s", svc_ns,
             svc_name, err)

    # Expect EndpointSlice resource to be deleted when Service is. Wait for up to 90 seconds
    # since garbage collector only polls every 30 seconds and may need to retry informer
    # resync at some point during an e2e run.
    def slices_gone():
        try:
            endpoint_slice_list = list_endpoint_slices(f, svc_ns,
                                                       "kubernetes.io/service-name=" + svc_name)
        except ApiException as e:
            return False, describe_error(e)
        if not endpoint_slice_list.items:
            return True, None
        return False, None

    err = poll(2, 90, slices_gone, timeout_error=POLL_TIMED_OUT)
    if err is not None:
        fail("EndpointSlice resource not deleted after Service %s/%s was deleted: %s", svc_ns,
             svc_name, err)


# Release: v1.21
# Testname: EndpointSlice API
# Description: The discovery.k8s.io API group MUST exist in the /apis discovery document.
# The discovery.k8s.io/v1 API group/version MUST exist in the /apis/discovery.k8s.io
# discovery document. The endpointslices resource MUST exist in the
# /apis/discovery.k8s.io/v1 discovery document. The endpointslice controller must create
# EndpointSlices for Pods mataching a Service.
@conformance("[sig-network] EndpointSlice should create Endpoints and EndpointSlices for Pods "
             "matching a Service [Conformance]")
def test_endpointslice_for_pods_matching_service(new_framework):
    f = endpointslice_framework(new_framework)
    ns = f.namespace.metadata.name
    pod_client = PodClient(f)

    label_pod1 = "pod1"
    label_pod2 = "pod2"
    label_pod3 = "pod3"
    label_shared12 = "shared12"
    label_value = "on"

    pod1 = pod_client.create(client.V1Pod(
        metadata=client.V1ObjectMeta(name="pod1", labels={label_pod1: label_value,
                                                          label_shared12: label_value}),
        spec=client.V1PodSpec(containers=[client.V1Container(
            name="container1", image=NGINX_IMAGE,
            ports=[client.V1ContainerPort(name="example-name", container_port=3000)])])))

    pod2 = pod_client.create(client.V1Pod(
        metadata=client.V1ObjectMeta(name="pod2", labels={label_pod2: label_value,
                                                          label_shared12: label_value}),
        spec=client.V1PodSpec(containers=[client.V1Container(
            name="container1", image=NGINX_IMAGE,
            ports=[client.V1ContainerPort(name="example-name", container_port=3001),
                   client.V1ContainerPort(name="other-port", container_port=3002)])])))

    svc1 = create_service_report_err(f, ns, client.V1Service(
        metadata=client.V1ObjectMeta(name="example-int-port"),
        spec=client.V1ServiceSpec(
            selector={label_pod1: label_value},
            publish_not_ready_addresses=True,
            ports=[client.V1ServicePort(name="example", port=80, target_port=3000,
                                        protocol="TCP")])))  # intstr.FromInt32(3000)

    svc2 = create_service_report_err(f, ns, client.V1Service(
        metadata=client.V1ObjectMeta(name="example-named-port"),
        spec=client.V1ServiceSpec(
            selector={label_shared12: label_value},
            publish_not_ready_addresses=True,
            ports=[client.V1ServicePort(name="http", port=80, target_port="example-name",
                                        protocol="TCP")])))  # intstr.FromString

    svc3 = create_service_report_err(f, ns, client.V1Service(
        metadata=client.V1ObjectMeta(name="example-no-match"),
        spec=client.V1ServiceSpec(
            selector={label_pod3: label_value},
            publish_not_ready_addresses=True,
            ports=[client.V1ServicePort(name="example-no-match", port=80, target_port=8080,
                                        protocol="TCP")])))  # intstr.FromInt32(8080)

    pods = {"pod1": pod1, "pod2": pod2}

    def pods_have_ips():
        for key in ("pod1", "pod2"):
            try:
                pods[key] = pod_client.get(pods[key].metadata.name)
            except ApiException as e:
                return False, describe_error(e)
            status = pods[key].status
            if not (status.pod_i_ps if status is not None else None):
                return False, None
        return True, None

    err = poll(2, 3 * 60, pods_have_ips, timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("timed out waiting for Pods to have IPs assigned: unexpected error: %s", err)
    pod1, pod2 = pods["pod1"], pods["pod2"]

    by("referencing a single matching pod")
    expect_endpoints_and_slices(f, ns, svc1, [pod1], 1, 1, False)

    by("referencing matching pods with named port")
    expect_endpoints_and_slices(f, ns, svc2, [pod1, pod2], 2, 2, True)

    by("creating empty Endpoints and EndpointSlices for no matching Pods")
    expect_endpoints_and_slices(f, ns, svc3, [], 0, 1, False)

    # TODO (upstream): Update test to cover Endpoints recreation after deletes once it
    # actually works.
    by("recreating EndpointSlices after they've been deleted")
    delete_endpoint_slices(f, ns, svc2)
    expect_endpoints_and_slices(f, ns, svc2, [pod1, pod2], 2, 2, True)


# Release: v1.21
# Testname: EndpointSlice API
# Description: The discovery.k8s.io API group MUST exist in the /apis discovery document.
# The discovery.k8s.io/v1 API group/version MUST exist in the /apis/discovery.k8s.io
# discovery document. The endpointslices resource MUST exist in the
# /apis/discovery.k8s.io/v1 discovery document. The endpointslices resource must support
# create, get, list, watch, update, patch, delete, and deletecollection.
@conformance("[sig-network] EndpointSlice should support creating EndpointSlice API "
             "operations [Conformance]")
def test_endpointslice_api_operations(new_framework):
    f = endpointslice_framework(new_framework)
    # Setup
    ns = f.namespace.metadata.name
    eps_version = "v1"
    eps_client = client.DiscoveryV1Api(f.api_client)

    eps_template = client.V1EndpointSlice(
        metadata=client.V1ObjectMeta(generate_name="e2e-example-ing",
                                     labels={"special-label": f.unique_name}),
        address_type="IPv4",
        endpoints=[
            client.V1Endpoint(addresses=["1.2.3.4", "5.6.7.8"]),
            client.V1Endpoint(addresses=["2.2.3.4", "6.6.7.8"]),
        ])
    label_selector = "special-label=" + f.unique_name

    # Discovery
    by("getting /apis")
    # f.ClientSet.Discovery().ServerGroups(): the legacy group from /api (NotFound and
    # Forbidden tolerated), then /apis.
    groups = []
    try:
        legacy = raw_call(f.api_client, "GET", "/api")
    except ApiException as err:
        if not is_not_found(err) and err.status != 403:
            fail("unexpected error: %s", describe_error(err))
        legacy = {}
    if legacy.get("versions"):
        groups.append({"name": "", "versions": [{"groupVersion": v, "version": v}
                                                for v in legacy["versions"]]})
    try:
        group_list = raw_call(f.api_client, "GET", "/apis")
    except ApiException as err:
        if not is_not_found(err) and err.status != 403:
            fail("unexpected error: %s", describe_error(err))
        group_list = {}
    groups.extend(group_list.get("groups") or [])
    found = False
    for group in groups:
        if group.get("name") == GROUP_NAME:
            for version in group.get("versions") or []:
                if version.get("version") == eps_version:
                    found = True
                    break
    if not found:
        fail("expected discovery API group/version, got %s", json.dumps(groups))

    by("getting /apis/discovery.k8s.io")
    group = expect_no_error(raw_call, f.api_client, "GET", "/apis/discovery.k8s.io")
    found = False
    for version in group.get("versions") or []:
        if version.get("version") == eps_version:
            found = True
            break
    if not found:
        fail("expected discovery API version, got %s", json.dumps(group.get("versions")))

    # (upstream's step text, verbatim: no slash before the version)
    by("getting /apis/discovery.k8s.io" + eps_version)
    # ServerResourcesForGroupVersion(discoveryv1.SchemeGroupVersion.String())
    resources = expect_no_error(raw_call, f.api_client, "GET",
                                "/apis/%s/%s" % (GROUP_NAME, eps_version))
    found_eps = False
    for resource in resources.get("resources") or []:
        if resource.get("name") == "endpointslices":
            found_eps = True
    if not found_eps:
        fail("expected endpointslices, got %s", json.dumps(resources.get("resources")))

    # EndpointSlice resource create/read/update/watch verbs
    by("creating")
    expect_no_error(eps_client.create_namespaced_endpoint_slice, ns, eps_template)
    expect_no_error(eps_client.create_namespaced_endpoint_slice, ns, eps_template)
    created_eps = expect_no_error(eps_client.create_namespaced_endpoint_slice, ns, eps_template)

    by("getting")
    queried_eps = expect_no_error(eps_client.read_namespaced_endpoint_slice,
                                  created_eps.metadata.name, ns)
    assert queried_eps.metadata.uid == created_eps.metadata.uid, \
        "Expected UID %r to equal %r" % (queried_eps.metadata.uid, created_eps.metadata.uid)

    by("listing")
    eps_list = expect_no_error(eps_client.list_namespaced_endpoint_slice, ns,
                               label_selector=label_selector)
    assert len(eps_list.items) == 3, \
        "filtered list should have 3 items: got %d" % len(eps_list.items)

    by("watching")
    logf("starting watch")
    eps_watch = open_watch(eps_client.list_namespaced_endpoint_slice, ns,
                           resource_version=eps_list.metadata.resource_version,
                           label_selector=label_selector)
    cluster_watch = None
    try:
        # Test cluster-wide list and watch
        by("cluster-wide listing")
        cluster_eps_list = expect_no_error(eps_client.list_endpoint_slice_for_all_namespaces,
                                           label_selector=label_selector)
        assert len(cluster_eps_list.items) == 3, \
            "filtered list should have 3 items: got %d" % len(cluster_eps_list.items)

        by("cluster-wide watching")
        logf("starting watch")
        # (upstream discards this watch; it ends with the test's context)
        cluster_watch = open_watch(eps_client.list_endpoint_slice_for_all_namespaces,
                                   resource_version=eps_list.metadata.resource_version,
                                   label_selector=label_selector)

        by("patching")
        patched_eps = expect_no_error(
            raw_call, f.api_client, "PATCH",
            "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices/%s"
            % (ns, created_eps.metadata.name),
            body=json.loads('{"metadata":{"annotations":{"patched":"true"}}}'),
            headers={"Content-Type": "application/merge-patch+json"},
            response_type="V1EndpointSlice")
        annotations = patched_eps.metadata.annotations or {}
        assert annotations.get("patched") == "true", \
            "patched object should have the applied annotation: got %r" % annotations

        by("updating")
        updated = []

        def update():
            eps_to_update = eps_client.read_namespaced_endpoint_slice(created_eps.metadata.name,
                                                                      ns)
            # (a nil map in Go: assigning to it panics)
            go_deref(eps_to_update.metadata.annotations,
                     "epsToUpdate.Annotations")["updated"] = "true"
            updated.append(eps_client.replace_namespaced_endpoint_slice(
                created_eps.metadata.name, ns, eps_to_update))
            return updated[-1]

        expect_no_error(retry_on_conflict, update)
        updated_eps = updated[-1]
        annotations = updated_eps.metadata.annotations or {}
        assert annotations.get("updated") == "true", \
            "updated object should have the applied annotation: got %r" % annotations

        logf("waiting for watch events with expected annotations")
        saw_annotations = False
        while not saw_annotations:
            try:
                evt = eps_watch.next(FOREVER_TEST_TIMEOUT)
            except WatchClosed:
                fail("watch channel should not close")
            if evt is None:
                fail("timed out waiting for watch event")
            if evt["type"] != "MODIFIED":
                fail("Expected\n    <watch.EventType>: %s\nto equal\n    <watch.EventType>: "
                     "MODIFIED", evt["type"])
            watched_eps = evt["object"]
            if not isinstance(watched_eps, client.V1EndpointSlice):
                fail("expected EndpointSlice, got %s", type(watched_eps).__name__)
            watched_annotations = watched_eps.metadata.annotations or {}
            if watched_annotations.get("patched") == "true":
                logf("saw patched and updated annotations")
                saw_annotations = True
                eps_watch.stop()
            else:
                logf("missing expected annotations, waiting: %r", watched_annotations)
    finally:
        eps_watch.stop()
        if cluster_watch is not None:
            cluster_watch.stop()

    by("deleting")
    expect_no_error(eps_client.delete_namespaced_endpoint_slice, created_eps.metadata.name, ns,
                    body=client.V1DeleteOptions())
    try:
        eps_client.read_namespaced_endpoint_slice(created_eps.metadata.name, ns)
    except ApiException as err:
        if not is_not_found(err):
            fail("expected 404, got %s", describe_error(err))
    else:
        fail("expected 404, got <nil>")
    eps_list = expect_no_error(eps_client.list_namespaced_endpoint_slice, ns,
                               label_selector=label_selector)
    assert len(eps_list.items) == 2, \
        "filtered list should have 2 items: got %d" % len(eps_list.items)
    for eps in eps_list.items:
        if (eps.metadata.namespace == created_eps.metadata.namespace and
                eps.metadata.name == created_eps.metadata.name):
            fail("listing after deleting createdEPS")

    by("deleting a collection")
    expect_no_error(eps_client.delete_collection_namespaced_endpoint_slice, ns,
                    body=client.V1DeleteOptions(), label_selector=label_selector)
    eps_list = expect_no_error(eps_client.list_namespaced_endpoint_slice, ns,
                               label_selector=label_selector)
    assert len(eps_list.items) == 0, \
        "filtered list should have 0 items: got %d" % len(eps_list.items)
