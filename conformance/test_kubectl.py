"""Ports of the ReplicationController-based [Conformance] tests of test/e2e/kubectl/kubectl.go
(kubernetes/kubernetes v1.32): "Kubectl describe should check if kubectl describe prints
relevant information for rc and pods", "Kubectl expose should create services for rc",
and "Kubectl patch should add annotations for pods in rc". The two "Update Demo" tests need
pods/proxy and wait in conformance/pending/kubectl_update_demo.py (see its doc).

They run the real kubectl (/usr/bin/kubectl, 1.32; SHEPHERD_KUBECTL overrides) as
e2ekubectl does: ``kubectl --server=URL --kubeconfig=FILE --namespace=NS ARGS...``. The
session fixture ``kubectl`` writes that kubeconfig from the cluster admin's certificate
(conftest.py's ``shepherd pki`` output: ca.crt, admin.crt, admin.key; the same identity the
Python client uses) and gives kubectl its own $HOME, so its discovery cache starts empty.
They need shepherd-controller-manager's ReplicationController controller, the endpoints
controller, the scheduler and the two nodes: the pods run for real.

Manifests (upstream reads them from test/e2e/testing-manifests/kubectl/ and
reproduced below with the same content): ``agnhost-primary-controller.json.in`` (image
{{.AgnhostImage}} substituted) and ``agnhost-primary-service.json`` (verbatim).

Image substitutions:
* imageutils.Agnhost (the agnhost-primary RC, run with agnhost's default `pause`, whose
  "Paused" the expose test looks for in the log) becomes AGNHOST_IMAGE (agnhost-lite, same
  Entrypoint/Cmd, prints "Paused").

Upstream version note: in v1.32 the expose test's validateService reads the service's
Endpoints (e2eendpoints.GetContainerPortsByPodUID); later releases read EndpointSlices.
"""

import os
import shutil
import tempfile
import time

import pytest
from kubernetes.client.rest import ApiException

from e2e_framework import (AGNHOST_IMAGE, POD_START_TIMEOUT, POLL, by, conformance,
                           describe_error, expect_no_error, fail, is_not_found, logf,
                           reason_for)
from e2e_rc import (SERVICE_START_TIMEOUT, ClusterVerification, Kubectl,
                    look_for_string_in_log, wait_for_service, write_admin_kubeconfig)

# test/e2e/testing-manifests/kubectl/agnhost-primary-controller.json.in, {{.AgnhostImage}}
# substituted
AGNHOST_PRIMARY_CONTROLLER_JSON = """{
   "kind":"ReplicationController",
   "apiVersion":"v1",
   "metadata":{
      "name":"agnhost-primary",
      "labels":{
         "app":"agnhost",
         "role":"primary"
      }
   },
   "spec":{
      "replicas":1,
      "selector":{
         "app":"agnhost",
         "role":"primary"
      },
      "template":{
         "metadata":{
            "labels":{
               "app":"agnhost",
               "role":"primary"
            }
         },
         "spec":{
            "containers":[
               {
                  "name":"agnhost-primary",
                  "image": "%s",
                  "ports":[
                     {
                        "name":"agnhost-server",
                        "containerPort":6379
                     }
                  ]
               }
            ]
         }
      }
   }
}
""" % AGNHOST_IMAGE

# test/e2e/testing-manifests/kubectl/agnhost-primary-service.json
AGNHOST_PRIMARY_SERVICE_JSON = """{
   "kind": "Service",
   "apiVersion": "v1",
   "metadata": {
      "name": "agnhost-primary",
      "labels": {
         "app": "agnhost",
         "role": "primary"
      }
   },
   "spec": {
      "ports": [
         {
            "port": 6379,
            "targetPort": "agnhost-server"
         }
      ],
      "selector": {
         "app": "agnhost",
         "role": "primary"
      }
   }
}"""

@pytest.fixture(scope="session")
def kubectl(shepherd):
    """A Kubectl for the session's server, as the cluster admin (see the module doc)."""
    workdir = tempfile.mkdtemp(prefix="shepherd-kubectl-")
    try:
        kubeconfig = write_admin_kubeconfig(
            os.path.join(workdir, "kubeconfig"), shepherd.base_url,
            os.path.join(shepherd.pki_dir, "ca.crt"), os.path.join(shepherd.pki_dir, "admin.crt"),
            os.path.join(shepherd.pki_dir, "admin.key"))
        home = os.path.join(workdir, "home")
        os.makedirs(home)
        yield Kubectl(shepherd.base_url, kubeconfig, home)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def kubectl_framework(new_framework):
    """SIGDescribe("Kubectl client"): NewDefaultFramework("kubectl"),
    NamespacePodSecurityLevel baseline."""
    return new_framework("kubectl", "baseline")


def check_output_return_error(output, required):
    """checkOutputReturnError: each requirement's first item must appear on a line at or
    after the previous requirement's line, and its other items on that same line."""
    output_lines = output.split("\n")
    current_line = 0
    for requirement in required:
        while current_line < len(output_lines) and \
                requirement[0] not in output_lines[current_line]:
            current_line += 1
        if current_line == len(output_lines):
            return "failed to find %s in %s" % (requirement[0], output)
        for item in requirement[1:]:
            if item not in output_lines[current_line]:
                return "failed to find %s in %s" % (item, output_lines[current_line])
    return None


def check_output(output, required):
    """checkOutput"""
    err = check_output_return_error(output, required)
    if err is not None:
        fail("%s", err)


def check_kubectl_output_with_retry(kubectl, namespace, required, *args):
    """checkKubectlOutputWithRetry: PollImmediate(1s, 1min) of the command until its output
    passes checkOutputReturnError."""
    poll_err = None
    deadline = time.monotonic() + 60
    while True:
        output = kubectl.run_kubectl_or_die(namespace, *args)
        poll_err = check_output_return_error(output, required)
        if poll_err is None:
            break
        if time.monotonic() + 1 > deadline:
            break
        time.sleep(1)
    if poll_err is not None:
        fail("%s", poll_err)


def cluster_state(f):
    """clusterState: pods labelled app=agnhost in phase Running."""
    return ClusterVerification(f.core, f.namespace.metadata.name, {"app": "agnhost"},
                               ["Running"])


def dump_all_namespace_info(f, ns):
    """e2edebug.DumpAllNamespaceInfo (events and pods of the namespace)."""
    try:
        events = f.core.list_namespaced_event(ns)
        for ev in sorted(events.items, key=lambda e: str(e.first_timestamp or "")):
            logf("At %s - event for %s: %s %s: %s", ev.first_timestamp,
                 ev.involved_object.name, ev.source.component if ev.source else "",
                 ev.reason, ev.message)
        pods = f.core.list_namespaced_pod(ns)
        for pod in pods.items:
            logf("POD %s NODE %s PHASE %s", pod.metadata.name, pod.spec.node_name,
                 pod.status.phase if pod.status else None)
    except ApiException as err:
        logf("dumping namespace %s failed: %s", ns, describe_error(err))


def wait_for_or_fail_with_debug(f, at_least):
    """waitForOrFailWithDebug: clusterState().WaitFor(atLeast, PodStartTimeout)."""
    pods, err = cluster_state(f).wait_for(at_least, POD_START_TIMEOUT)
    if err is not None or len(pods) < at_least:
        dump_all_namespace_info(f, f.namespace.metadata.name)
        fail("Verified %d of %d pods , error: %s", len(pods), at_least, err)


def for_each_pod(f, pod_func):
    """forEachPod: clusterState().ForEach(podFunc), its error ignored."""
    cluster_state(f).for_each(pod_func)


# Release: v1.9
# Testname: Kubectl, describe pod or rc
# Description: Deploy an agnhost controller and an agnhost service. Kubectl describe pods
# SHOULD return the name, namespace, labels, state and other information as expected.
# Kubectl describe on rc, service, node and namespace SHOULD also return proper information.
@conformance("[sig-cli] Kubectl client Kubectl describe should check if kubectl describe prints "
             "relevant information for rc and pods [Conformance]")
def test_kubectl_describe_rc_and_pods(new_framework, kubectl):
    f = kubectl_framework(new_framework)
    ns = f.namespace.metadata.name
    c = f.core
    controller_json = AGNHOST_PRIMARY_CONTROLLER_JSON
    service_json = AGNHOST_PRIMARY_SERVICE_JSON

    kubectl.run_kubectl_or_die_input(ns, controller_json, "create", "-f", "-")
    kubectl.run_kubectl_or_die_input(ns, service_json, "create", "-f", "-")

    by("Waiting for Agnhost primary to start.")
    wait_for_or_fail_with_debug(f, 1)

    # Pod
    def describe_pod(pod):
        output = kubectl.run_kubectl_or_die(ns, "describe", "pod", pod.metadata.name)
        required_strings = [
            ["Name:", "agnhost-primary-"],
            ["Namespace:", ns],
            ["Node:"],
            ["Labels:", "app=agnhost"],
            ["role=primary"],
            ["Annotations:"],
            ["Status:", "Running"],
            ["IP:"],
            ["Controlled By:", "ReplicationController/agnhost-primary"],
            ["Image:", AGNHOST_IMAGE],
            ["State:", "Running"],
            ["QoS Class:", "BestEffort"],
        ]
        check_output(output, required_strings)

    for_each_pod(f, describe_pod)

    # Rc
    required_strings = [
        ["Name:", "agnhost-primary"],
        ["Namespace:", ns],
        ["Selector:", "app=agnhost,role=primary"],
        ["Labels:", "app=agnhost"],
        ["role=primary"],
        ["Annotations:"],
        ["Replicas:", "1 current", "1 desired"],
        ["Pods Status:", "1 Running", "0 Waiting", "0 Succeeded", "0 Failed"],
        ["Pod Template:"],
        ["Image:", AGNHOST_IMAGE],
        ["Events:"]]
    check_kubectl_output_with_retry(kubectl, ns, required_strings, "describe", "rc",
                                    "agnhost-primary")

    # Service
    output = kubectl.run_kubectl_or_die(ns, "describe", "service", "agnhost-primary")
    required_strings = [
        ["Name:", "agnhost-primary"],
        ["Namespace:", ns],
        ["Labels:", "app=agnhost"],
        ["role=primary"],
        ["Annotations:"],
        ["Selector:", "app=agnhost", "role=primary"],
        ["Type:", "ClusterIP"],
        ["IP:"],
        ["Port:", "<unset>", "6379/TCP"],
        ["Endpoints:"],
        ["Session Affinity:", "None"]]
    check_output(output, required_strings)

    # Node
    # It should be OK to list unschedulable Nodes here.
    nodes = expect_no_error(c.list_node)
    node = nodes.items[0]
    output = kubectl.run_kubectl_or_die(ns, "describe", "node", node.metadata.name)
    required_strings = [
        ["Name:", node.metadata.name],
        ["Labels:"],
        ["Annotations:"],
        ["CreationTimestamp:"],
        ["Conditions:"],
        ["Type", "Status", "LastHeartbeatTime", "LastTransitionTime", "Reason", "Message"],
        ["Addresses:"],
        ["Capacity:"],
        ["Version:"],
        ["Kernel Version:"],
        ["OS Image:"],
        ["Container Runtime Version:"],
        ["Kubelet Version:"],
        ["Kube-Proxy Version:"],
        ["Pods:"]]
    check_output(output, required_strings)

    # Namespace
    output = kubectl.run_kubectl_or_die(ns, "describe", "namespace", ns)
    required_strings = [
        ["Name:", ns],
        ["Labels:"],
        ["Annotations:"],
        ["Status:", "Active"]]
    check_output(output, required_strings)

    # Quota and limitrange are skipped for now.


def _target_port_int_value(target_port):
    """intstr.IntOrString.IntValue(): the int, or the string parsed as an int (0 if it is
    not one)."""
    if isinstance(target_port, int):
        return target_port
    try:
        return int(str(target_port))
    except ValueError:
        return 0


def get_container_ports_by_pod_uid(ep):
    """e2eendpoints.GetContainerPortsByPodUID: pod UID -> the ports of every subset
    address."""
    m = {}
    for ss in ep.subsets or []:
        for port in ss.ports or []:
            for addr in ss.addresses or []:
                if addr.target_ref is None:
                    fail("runtime error: invalid memory address or nil pointer dereference "
                         "(addr.TargetRef of %s)", addr.ip)
                m.setdefault(addr.target_ref.uid, []).append(port.port)
    return m


# Release: v1.9
# Testname: Kubectl, create service, replication controller
# Description: Create a Pod running agnhost listening to port 6379. Using kubectl expose the
# agnhost primary replication controllers at port 1234. Validate that the replication
# controller is listening on port 1234 and the target port is set to 6379, port that agnhost
# primary is listening. Using kubectl expose the agnhost primary as a service at port 2345.
# The service MUST be listening on port 2345 and the target port is set to 6379, port that
# agnhost primary is listening.
@conformance("[sig-cli] Kubectl client Kubectl expose should create services for rc "
             "[Conformance]")
def test_kubectl_expose_rc(new_framework, kubectl):
    f = kubectl_framework(new_framework)
    ns = f.namespace.metadata.name
    c = f.core
    controller_json = AGNHOST_PRIMARY_CONTROLLER_JSON

    agnhost_port = 6379

    by("creating Agnhost RC")

    logf("namespace %s", ns)
    kubectl.run_kubectl_or_die_input(ns, controller_json, "create", "-f", "-")

    # It may take a while for the pods to get registered in some cases, wait to be sure.
    by("Waiting for Agnhost primary to start.")
    wait_for_or_fail_with_debug(f, 1)

    def wait_startup(pod):
        logf("wait on agnhost-primary startup in %s ", ns)
        # (upstream ignores the result)
        look_for_string_in_log(kubectl, ns, pod.metadata.name, "agnhost-primary", "Paused",
                               POD_START_TIMEOUT)

    for_each_pod(f, wait_startup)

    def validate_service(name, service_port, timeout):
        # wait.Poll(framework.Poll, timeout, ...): not immediate
        deadline = time.monotonic() + timeout
        err = None
        while True:
            time.sleep(POLL)
            try:
                ep = c.read_namespaced_endpoints(name, ns)
            except ApiException as get_err:
                # log the real error
                logf("Get endpoints failed (interval %ss): %s", POLL, describe_error(get_err))
                # if the error is API not found or could not find default credentials or TLS
                # handshake timeout, try again
                if not (is_not_found(get_err) or get_err.status == 401 or
                        reason_for(get_err) == "ServerTimeout"):
                    err = describe_error(get_err)
                    break
                ep = None
            if ep is not None:
                uid_to_port = get_container_ports_by_pod_uid(ep)
                if len(uid_to_port) == 0:
                    logf("No endpoint found, retrying")
                else:
                    if len(uid_to_port) > 1:
                        fail("Too many endpoints found")
                    for port in uid_to_port.values():
                        if port[0] != agnhost_port:
                            fail("Wrong endpoint port: %d", port[0])
                    break
            if time.monotonic() + POLL > deadline:
                err = "timed out waiting for the condition"
                break
        if err is not None:
            fail("unexpected error: %s", err)

        e2eservice = expect_no_error(c.read_namespaced_service, name, ns)

        if len(e2eservice.spec.ports or []) != 1:
            fail("1 port is expected")
        port = e2eservice.spec.ports[0]
        if port.port != service_port:
            fail("Wrong service port: %d", port.port)
        if _target_port_int_value(port.target_port) != agnhost_port:
            fail("Wrong target port: %d", _target_port_int_value(port.target_port))

    by("exposing RC")
    kubectl.run_kubectl_or_die(ns, "expose", "rc", "agnhost-primary", "--name=rm2",
                               "--port=1234", "--target-port=%d" % agnhost_port)
    err = wait_for_service(c, ns, "rm2", True, POLL, SERVICE_START_TIMEOUT)
    if err is not None:
        fail("unexpected error: %s", err)
    validate_service("rm2", 1234, SERVICE_START_TIMEOUT)

    by("exposing service")
    kubectl.run_kubectl_or_die(ns, "expose", "service", "rm2", "--name=rm3", "--port=2345",
                               "--target-port=%d" % agnhost_port)
    err = wait_for_service(c, ns, "rm3", True, POLL, SERVICE_START_TIMEOUT)
    if err is not None:
        fail("unexpected error: %s", err)
    validate_service("rm3", 2345, SERVICE_START_TIMEOUT)


# Release: v1.9
# Testname: Kubectl, patch to annotate
# Description: Start running agnhost and a replication controller. When the pod is running,
# using 'kubectl patch' command add annotations. The annotation MUST be added to running pods
# and SHOULD be able to read added annotations from each of the Pods running under the
# replication controller.
@conformance("[sig-cli] Kubectl client Kubectl patch should add annotations for pods in rc "
             "[Conformance]")
def test_kubectl_patch_annotations_for_pods_in_rc(new_framework, kubectl):
    f = kubectl_framework(new_framework)
    ns = f.namespace.metadata.name
    controller_json = AGNHOST_PRIMARY_CONTROLLER_JSON
    by("creating Agnhost RC")
    kubectl.run_kubectl_or_die_input(ns, controller_json, "create", "-f", "-")
    by("Waiting for Agnhost primary to start.")
    wait_for_or_fail_with_debug(f, 1)
    by("patching all pods")
    for_each_pod(f, lambda pod: kubectl.run_kubectl_or_die(
        ns, "patch", "pod", pod.metadata.name, "-p", '{"metadata":{"annotations":{"x":"y"}}}'))

    by("checking annotations")

    def check(pod):
        found = False
        for key, val in (pod.metadata.annotations or {}).items():
            if key == "x" and val == "y":
                found = True
                break
        if not found:
            fail("Added annotation not found")

    for_each_pod(f, check)
