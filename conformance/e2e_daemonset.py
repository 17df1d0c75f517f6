"""The parts of upstream's DaemonSet e2e helpers the ported DaemonSet and ControllerRevision
tests use (test_daemon_set.py, test_controller_revision.py).

Upstream (kubernetes/kubernetes v1.32):

* test/e2e/apps/daemon_set.go: the constants (dsRetryPeriod, dsRetryTimeout, the
  ``daemonset-`` label keys, NamespaceNodeSelectors), nonTerminalPhaseSelector,
  updateDaemonSetWithRetries, getDaemonSetImagePatch, newDaemonSet(WithLabel),
  listDaemonPods, separateDaemonSetNodeLabels, clearDaemonSetNodeLabels,
  patchNamespaceAnnotations, setDaemonSetNodeLabels, checkRunningOnAllNodes,
  checkAtLeastOneNewPod, checkRunningOnNoNodes, checkDaemonPodsImageAndAvailability,
  checkDaemonSetPodsLabels, waitForHistoryCreated, listDaemonHistories, curHistory,
  waitFailedDaemonPodDeleted, and the Describe's BeforeEach/AfterEach (the ControllerRevision
  Describe has the same two);
* test/e2e/apps/controller_revision.go: checkControllerRevisionListQuantity,
  hashAndNameForDaemonSet and its constants;
* test/e2e/framework/daemonset/fixtures.go (e2edaemonset): NewDaemonSet,
  CheckRunningOnAllNodes, SchedulableNodes, CheckDaemonPodOnNodes,
  checkDaemonPodStateOnNodes, CheckDaemonStatus (v1.32: an Eventually over the DaemonSet
  for f.Timeouts.PodStart, polling every framework.Poll);
* pkg/controller/daemon (compiled into the e2e binary upstream): NodeShouldRunDaemonPod
  with NewPod, predicates and util.AddOrUpdateDaemonPodTolerations, and Match/getPatch;
  component-helpers' nodeaffinity.GetRequiredNodeAffinity(pod).Match(node) and
  v1helper.FindMatchingUntoleratedTaint / Toleration.ToleratesTaint;
* pkg/controller ComputeHash (see below); k8s.io/kubectl podutils.IsPodAvailable;
* test/e2e/framework/resource/resources.go: DeleteResourceAndWaitForGC for a DaemonSet
  (``delete_daemon_set_and_wait_for_gc``, a wrapper around e2e_resource.py's
  ``delete_resource_and_wait_for_gc``; GetReplicasFromRuntimeObject is 0 for DaemonSets:
  poll every 100 ms, 10 minutes for the pods to become inactive, 20 minutes for them to be
  gone).

Every wait returns None or the error text (Go's error), so that the tests keep upstream's
framework.ExpectNoError at the call site. ``create_daemon_set`` is Create + ExpectNoError;
it also fails the test, with a plain message, when the official client cannot decode the
response (it insists on the four status counters apps/v1 always serves; client-go would
decode a missing one as 0).

Two pieces of upstream Go cannot be reproduced byte for byte in Python and are emulated:

* daemon.Match compares the revision's raw ``data`` bytes with getPatch(ds): the DaemonSet
  json.Marshal'ed from its Go struct, decoded into a generic map and re-marshalled (keys
  sorted, compact, Go's HTML-safe string escaping). ``get_patch`` does the same from the
  typed Python model: ``go_encode`` writes a model the way encoding/json writes the Go type
  (unset fields and omitempty zero values left out, except Go pointer fields and fields
  without omitempty, listed in _KEEP_ZERO, and the values Go always writes:
  ``metadata.creationTimestamp: null``, ``resources: {}`` in every container,
  ``containers: null``), for the fields of a pod template; resource quantities are compared
  as the server wrote them (Go would print them canonically; no ported template has any).
  The raw bytes of each revision's ``data`` are cut out of the list response body
  (``list_daemon_histories``), as client-go's RawExtension keeps them.
* controller.ComputeHash (hashAndNameForDaemonSet in controller_revision.go) is FNV-32a over
  a go-spew dump of the Go PodTemplateSpec struct (every field in Go declaration order, with
  Go type names and slice capacities), plus the collision count, safe-encoded. That dump
  only exists in Go; ``compute_hash`` hashes the Go JSON encoding of the template instead
  (FNV-32a, the collision count as 4 little-endian bytes, rand.SafeEncodeString). The value
  therefore differs from the one the Go e2e binary would compute — just as the Go binary's
  value differs from Shepherd's own template hash when the upstream suite runs against
  Shepherd; the test only uses it as a name and a label value.

Images (the nodes never pull; see e2e_framework.py and e2e_deployment.py): upstream's
WebserverImage (imageutils.Httpd, httpd serving until stopped) becomes the pause image
(registry.k8s.io/pause:3.10, e2e_deployment.WEBSERVER_IMAGE), which runs until it is
stopped; no ported test connects to the web server. AgnhostImage (run with its default
``pause``) becomes AGNHOST_IMAGE (agnhost-lite, whose default command is ``pause`` too).
"""

import datetime
import json
import re
import struct
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_deployment import WEBSERVER_IMAGE, is_controlled_by
from e2e_framework import (AGNHOST_IMAGE, CONTEXT_DEADLINE, POD_START_TIMEOUT, POLL,
                           by, describe_error, expect_no_error, fail,
                           get_ready_schedulable_nodes, go_time, is_conflict, is_not_found,
                           logf, poll, selector_from_set)
from e2e_resource import KIND_DAEMON_SET, delete_resource_and_wait_for_gc

# --------------------------------------------------------------------------- constants

# test/e2e/apps/daemon_set.go
DS_RETRY_PERIOD = 1.0         # dsRetryPeriod
DS_RETRY_TIMEOUT = 5 * 60.0   # dsRetryTimeout
DAEMONSET_LABEL_PREFIX = "daemonset-"                      # daemonsetLabelPrefix
DAEMONSET_NAME_LABEL = DAEMONSET_LABEL_PREFIX + "name"     # daemonsetNameLabel
DAEMONSET_COLOR_LABEL = DAEMONSET_LABEL_PREFIX + "color"   # daemonsetColorLabel
NAMESPACE_NODE_SELECTORS = ["scheduler.alpha.kubernetes.io/node-selector"]

# test/e2e/apps/controller_revision.go
CONTROLLER_REVISION_RETRY_PERIOD = 1.0    # controllerRevisionRetryPeriod
CONTROLLER_REVISION_RETRY_TIMEOUT = 60.0  # controllerRevisionRetryTimeout

# appsv1.DefaultDaemonSetUniqueLabelKey
DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY = "controller-revision-hash"

# test/e2e/apps/types.go, with the substitutions of the module doc
WEBSERVER = WEBSERVER_IMAGE   # WebserverImage
AGNHOST = AGNHOST_IMAGE       # AgnhostImage

# nonTerminalPhaseSelector.String(): status.phase NotEquals Failed, then Succeeded
NON_TERMINAL_PHASE_SELECTOR = "status.phase!=Failed,status.phase!=Succeeded"


def expect_no_err(err, explain=""):
    """framework.ExpectNoError(err, explain...) for the helpers' error texts."""
    if err is not None:
        if explain:
            fail("%s: %s", explain, err)
        fail("unexpected error: %s", err)


def poll_until_context_timeout(interval, timeout, immediate, condition):
    """wait.PollUntilContextTimeout(ctx, interval, timeout, immediate, condition):
    condition() returns (done, error text or None). None, the condition's error, or
    "context deadline exceeded"."""
    return poll(interval, timeout, condition, immediate=immediate,
                timeout_error=CONTEXT_DEADLINE)


def _sanitize(obj):
    return client.ApiClient().sanitize_for_serialization(obj)


# --------------------------------------------------------------------------- fixtures


def new_daemon_set_fixture(ds_name, image, labels, volumes, mounts, ports, *args):
    """e2edaemonset.NewDaemonSet"""
    return client.V1DaemonSet(
        metadata=client.V1ObjectMeta(name=ds_name, labels=labels),
        spec=client.V1DaemonSetSpec(
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(
                    containers=[client.V1Container(
                        name="app", image=image, args=list(args) or None, ports=ports,
                        volume_mounts=mounts, security_context=client.V1SecurityContext())],
                    security_context=client.V1PodSecurityContext(),
                    volumes=volumes))))


def new_daemon_set_with_label(ds_name, image, label):
    """newDaemonSetWithLabel: the fixture with one port, containerPort 9376."""
    return new_daemon_set_fixture(ds_name, image, label, None, None,
                                  [client.V1ContainerPort(container_port=9376)])


def new_daemon_set(ds_name, image, label):
    """newDaemonSet: newDaemonSetWithLabel without the DaemonSet's own labels."""
    ds = new_daemon_set_with_label(ds_name, image, label)
    ds.metadata.labels = None
    return ds


def create_daemon_set(apps, ns, ds, explain=""):
    """DaemonSets(ns).Create followed by framework.ExpectNoError: fails the test on an API
    error, and also when the response is not a valid apps/v1 DaemonSet for the official
    client (which, unlike client-go, rejects a status without its required counters)."""
    try:
        return expect_no_error(apps.create_namespaced_daemon_set, ns, ds, explain=explain)
    except ValueError as err:
        fail("%sthe server's create response is not a valid apps/v1 DaemonSet: %s",
             (explain + ": ") if explain else "", err)


def get_daemon_set_image_patch(container_name, container_image):
    """getDaemonSetImagePatch"""
    return ('{"spec":{"template":{"spec":{"containers":[{"name":"%s","image":"%s"}]}}}}'
            % (container_name, container_image))


def update_daemon_set_with_retries(apps, namespace, name, apply_update):
    """updateDaemonSetWithRetries: PollUntilContextTimeout(10ms, 1 minute, immediate) of
    get, apply_update(ds), update; a Get error ends it, an Update error is retried.
    Returns (ds, error text or None)."""
    update_err = [None]
    result = [None]

    def condition():
        try:
            ds = apps.read_namespaced_daemon_set(name, namespace)
        except ApiException as err:
            result[0] = None
            return False, describe_error(err)
        apply_update(ds)
        try:
            result[0] = apps.replace_namespaced_daemon_set(name, namespace, ds)
            logf("Updating DaemonSet %s", name)
            return True, None
        except ApiException as err:
            update_err[0] = describe_error(err)
            result[0] = None
            return False, None

    err = poll_until_context_timeout(0.01, 60, True, condition)
    if err == CONTEXT_DEADLINE:  # wait.Interrupted(pollErr)
        err = "couldn't apply the provided updated to DaemonSet %r: %s" % (name,
                                                                          update_err[0])
    return result[0], err


# --------------------------------------------------------------------------- pods


def is_pod_available(pod, min_ready_seconds, now):
    """podutils.IsPodAvailable / podutil.IsPodAvailable: Ready, for at least
    minReadySeconds (counted from the Ready condition's lastTransitionTime)."""
    conds = (pod.status.conditions if pod.status is not None else None) or []
    ready = next((c for c in conds if c.type == "Ready"), None)
    if ready is None or ready.status != "True":
        return False
    if min_ready_seconds == 0:
        return True
    t = ready.last_transition_time
    return t is not None and t + datetime.timedelta(seconds=min_ready_seconds) < now


def _now():
    """metav1.Now()"""
    return datetime.datetime.now(datetime.timezone.utc)


def list_daemon_pods(core, ns, label):
    """listDaemonPods: the pods with the labels that are not in a terminal phase
    (nonTerminalPhaseSelector); the list must not be empty."""
    pod_list = expect_no_error(core.list_namespaced_pod, ns,
                               label_selector=selector_from_set(label),
                               field_selector=NON_TERMINAL_PHASE_SELECTOR)
    if not pod_list.items:
        fail("Expected\n    <[]v1.Pod | len:0>: []\nnot to be empty")
    return pod_list


def check_daemon_set_pods_labels(pod_list, hash_):
    """checkDaemonSetPodsLabels: every pod not being deleted carries a non-empty
    controller-revision-hash, equal to hash_ when hash_ is non-empty."""
    for pod in pod_list.items:
        # Ignore all the DS pods that will be deleted
        if pod.metadata.deletion_timestamp is not None:
            continue
        pod_hash = (pod.metadata.labels or {}).get(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, "")
        if pod_hash == "":
            fail("Expected\n    <string>: \nnot to be empty (pod %s)", pod.metadata.name)
        if len(hash_) > 0 and pod_hash != hash_:
            fail("unexpected hash for pod %s\nExpected\n    <string>: %s\nto equal\n    "
                 "<string>: %s", pod.metadata.name, pod_hash, hash_)


def wait_failed_daemon_pod_deleted(core, pod):
    """waitFailedDaemonPodDeleted: done once a Get of the pod answers NotFound."""

    def condition():
        try:
            core.read_namespaced_pod(pod.metadata.name, pod.metadata.namespace)
        except ApiException as err:
            if is_not_found(err):
                return True, None
            return False, "failed to get failed daemon pod %r: %s" % (pod.metadata.name,
                                                                      describe_error(err))
        return False, None

    return condition


# --------------------------------------------------------------------------- nodes


def separate_daemon_set_node_labels(labels):
    """separateDaemonSetNodeLabels: (the daemonset-* labels, the others)."""
    daemon_set_labels, other_labels = {}, {}
    for k, v in (labels or {}).items():
        if k.startswith(DAEMONSET_LABEL_PREFIX):
            daemon_set_labels[k] = v
        else:
            other_labels[k] = v
    return daemon_set_labels, other_labels


def set_daemon_set_node_labels(core, node_name, labels):
    """setDaemonSetNodeLabels: PollUntilContextTimeout(dsRetryPeriod, dsRetryTimeout,
    immediate) of get, replace the node's daemonset-* labels by `labels`, update (conflicts
    retried). Returns (node, error text or None)."""
    state = {"node": None, "new_labels": None}

    def condition():
        try:
            node = core.read_node(node_name)
        except ApiException as err:
            return False, describe_error(err)
        # remove all labels this test is creating
        daemon_set_labels, other_labels = separate_daemon_set_node_labels(node.metadata.labels)
        if daemon_set_labels == labels:
            state["node"] = node
            return True, None
        node.metadata.labels = dict(other_labels)
        node.metadata.labels.update(labels)
        try:
            state["node"] = core.replace_node(node_name, node)
        except ApiException as err:
            if is_conflict(err):
                logf("failed to update node due to resource version conflict")
                return False, None
            return False, describe_error(err)
        state["new_labels"], _ = separate_daemon_set_node_labels(state["node"].metadata.labels)
        return True, None

    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True, condition)
    if err is not None:
        return None, err
    # (newLabels stays nil when the node already had the labels: len(nil) == 0)
    if len(state["new_labels"] or {}) != len(labels):
        return None, "could not set daemon set test labels as expected"
    return state["node"], None


def clear_daemon_set_node_labels(core):
    """clearDaemonSetNodeLabels: remove the daemonset-* labels of every ready schedulable
    node. Returns None or the error text."""
    node_list, err = get_ready_schedulable_nodes(core)
    if err is not None:
        return err
    for node in node_list.items:
        _, err = set_daemon_set_node_labels(core, node.metadata.name, {})
        if err is not None:
            return err
    return None


def patch_namespace_annotations(core, ns_name):
    """patchNamespaceAnnotations: a strategic merge patch setting the node-selector
    annotations of the namespace to "". Returns (namespace, error text or None)."""
    annotations = {n: "" for n in NAMESPACE_NODE_SELECTORS}
    ns_patch = {"metadata": {"annotations": annotations}}
    try:
        return core.patch_namespace(ns_name, ns_patch), None
    except ApiException as err:
        return None, describe_error(err)


# pkg/controller/daemon/util.AddOrUpdateDaemonPodTolerations: (key, effect), operator
# Exists, no tolerationSeconds; the last one only for hostNetwork pods.
_DAEMON_TOLERATIONS = [
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
]
_NETWORK_UNAVAILABLE_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def _daemon_pod_tolerations(pod_spec):
    """NewPod's tolerations: the template's, then the daemon defaults
    (AddOrUpdateTolerationInPodSpec: an existing toleration with the same key, operator,
    value and effect is replaced in place, else the default is appended)."""
    tolerations = [(t.key or "", t.operator or "", t.value or "", t.effect or "",
                    t.toleration_seconds) for t in (pod_spec.tolerations or [])]
    defaults = list(_DAEMON_TOLERATIONS)
    if pod_spec.host_network:
        defaults.append(_NETWORK_UNAVAILABLE_TOLERATION)
    for key, effect in defaults:
        new = (key, "Exists", "", effect, None)
        for i, t in enumerate(tolerations):
            if t[:4] == new[:4]:
                tolerations[i] = new
                break
        else:
            tolerations.append(new)
    return tolerations


def _tolerates_taint(toleration, taint):
    """v1.Toleration.ToleratesTaint"""
    key, operator, value, effect, _ = toleration
    if effect and effect != (taint.effect or ""):
        return False
    if key and key != (taint.key or ""):
        return False
    if operator in ("", "Equal"):
        return value == (taint.value or "")
    if operator == "Exists":
        return True
    return False


def _find_matching_untolerated_taint(taints, tolerations, effects):
    """v1helper.FindMatchingUntoleratedTaint with a filter on the taint's effect:
    (taint, True) for the first filtered taint no toleration tolerates."""
    for taint in taints or []:
        if taint.effect not in effects:
            continue
        if not any(_tolerates_taint(t, taint) for t in tolerations):
            return taint, True
    return None, False


def _requirement_matches(req, value, present, is_field):
    """nodeaffinity's NodeSelectorRequirement matching (labels or metadata.name fields)."""
    op = req.operator
    values = req.values or []
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if is_field:
        return False  # only In and NotIn are valid for fields: a parse error, no match
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        try:
            have, want = int(value), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _required_node_affinity_matches(pod_spec, node):
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): every spec.nodeSelector label
    on the node, and one of the required node affinity terms matching (a term without
    requirements matches nothing; parse errors count as no match)."""
    node_labels = node.metadata.labels or {}
    for k, v in (pod_spec.node_selector or {}).items():
        if node_labels.get(k) != v:
            return False
    affinity = pod_spec.affinity
    required = None
    if affinity is not None and affinity.node_affinity is not None:
        required = affinity.node_affinity.required_during_scheduling_ignored_during_execution
    if required is None:
        return True
    for term in required.node_selector_terms or []:
        exprs = term.match_expressions or []
        fields = term.match_fields or []
        if not exprs and not fields:
            continue
        ok = all(_requirement_matches(r, node_labels.get(r.key), r.key in node_labels, False)
                 for r in exprs)
        ok = ok and all(r.key == "metadata.name" and
                        _requirement_matches(r, node.metadata.name, True, True) for r in fields)
        if ok:
            return True
    return False


def node_should_run_daemon_pod(node, ds):
    """daemon.NodeShouldRunDaemonPod: (shouldRun, shouldContinueRunning) for the daemon pod
    NewPod(ds, node.Name) would make (the template with spec.nodeName = the node and the
    default daemon tolerations)."""
    pod_spec = ds.spec.template.spec
    # If the daemon set specifies a node name, check that it matches with node.Name.
    if not (not pod_spec.node_name or pod_spec.node_name == node.metadata.name):
        return False, False
    taints = node.spec.taints if node.spec is not None else None
    tolerations = _daemon_pod_tolerations(pod_spec)
    # predicates: the pod's nodeName is the node, so it fits
    fits_node_affinity = _required_node_affinity_matches(pod_spec, node)
    _, has_untolerated = _find_matching_untolerated_taint(taints, tolerations,
                                                          ("NoExecute", "NoSchedule"))
    if not fits_node_affinity:
        return False, False
    if has_untolerated:
        # Scheduled daemon pods should continue running if they tolerate NoExecute taint.
        _, has_untolerated_no_execute = _find_matching_untolerated_taint(
            taints, tolerations, ("NoExecute",))
        return False, not has_untolerated_no_execute
    return True, True


def schedulable_nodes(core, ds):
    """e2edaemonset.SchedulableNodes: the names of the nodes that should run a daemon
    pod."""
    node_list = expect_no_error(core.list_node)
    node_names = []
    for node in node_list.items:
        should_run, _ = node_should_run_daemon_pod(node, ds)
        if not should_run:
            logf("DaemonSet pods can't tolerate node %s with taints %s, skip checking this "
                 "node", node.metadata.name,
                 _sanitize(node.spec.taints if node.spec is not None else None))
            continue
        node_names.append(node.metadata.name)
    return node_names


def _check_daemon_pod_state_on_nodes(core, ds, ns, node_names, state_checker):
    """e2edaemonset.checkDaemonPodStateOnNodes: exactly one pod controlled by ds, not being
    deleted and passing state_checker, on each of node_names, and none elsewhere."""
    try:
        pod_list = core.list_namespaced_pod(ns)
    except ApiException as err:
        logf("could not get the pod list: %s", describe_error(err))
        return False, None
    nodes_to_pod_count = {}
    for pod in pod_list.items:
        if not is_controlled_by(pod, ds):
            continue
        if pod.metadata.deletion_timestamp is not None:
            continue
        if state_checker(pod):
            nodes_to_pod_count[pod.spec.node_name or ""] = \
                nodes_to_pod_count.get(pod.spec.node_name or "", 0) + 1
    logf("Number of nodes with available pods controlled by daemonset %s: %d",
         ds.metadata.name, len(nodes_to_pod_count))
    # Ensure that exactly 1 pod is running on all nodes in nodeNames.
    for node_name in node_names:
        if nodes_to_pod_count.get(node_name, 0) != 1:
            logf("Node %s is running %d daemon pod, expected 1", node_name,
                 nodes_to_pod_count.get(node_name, 0))
            return False, None
    logf("Number of running nodes: %d, number of available pods: %d in daemonset %s",
         len(node_names), len(nodes_to_pod_count), ds.metadata.name)
    # Ensure that sizes of the lists are the same. We've verified that every element of
    # nodeNames is in nodesToPodCount, so verifying the lengths are equal ensures that
    # there aren't pods running on any other nodes.
    return len(nodes_to_pod_count) == len(node_names), None


def check_daemon_pod_on_nodes(f, ds, node_names):
    """e2edaemonset.CheckDaemonPodOnNodes: a condition; the state is
    podutils.IsPodAvailable(pod, ds.Spec.MinReadySeconds, now)."""
    min_ready = ds.spec.min_ready_seconds or 0

    def condition():
        now = _now()
        return _check_daemon_pod_state_on_nodes(
            f.core, ds, f.namespace.metadata.name, node_names,
            lambda pod: is_pod_available(pod, min_ready, now))

    return condition


def check_running_on_all_nodes(f, ds):
    """checkRunningOnAllNodes -> e2edaemonset.CheckRunningOnAllNodes: a condition."""

    def condition():
        node_names = schedulable_nodes(f.core, ds)
        return check_daemon_pod_on_nodes(f, ds, node_names)()

    return condition


def check_running_on_no_nodes(f, ds):
    """checkRunningOnNoNodes: CheckDaemonPodOnNodes with no nodes."""
    return check_daemon_pod_on_nodes(f, ds, [])


def check_daemon_status(f, apps, ds_name):
    """e2edaemonset.CheckDaemonStatus (v1.32): Eventually (polling every framework.Poll, for
    f.Timeouts.PodStart) the DaemonSet has desiredNumberScheduled == currentNumberScheduled
    == numberReady. Returns None or the error text."""
    deadline = time.monotonic() + POD_START_TIMEOUT
    last = "no attempt"
    while True:
        try:
            ds = apps.read_namespaced_daemon_set(ds_name, f.namespace.metadata.name)
        except ApiException as err:
            last = describe_error(err)
        else:
            st = ds.status
            desired = (st.desired_number_scheduled or 0) if st else 0
            scheduled = (st.current_number_scheduled or 0) if st else 0
            ready = (st.number_ready or 0) if st else 0
            if desired == scheduled and scheduled == ready:
                return None
            last = ("Expected daemon set to reach state where all desired pods are scheduled "
                    "and ready. Got instead DesiredScheduled: %d, CurrentScheduled: %d, "
                    "Ready: %d\n%s" % (desired, scheduled, ready,
                                       json.dumps(_sanitize(ds), indent=1)))
        if time.monotonic() + POLL > deadline:
            return "Timed out after %.3fs.\n%s" % (POD_START_TIMEOUT, last)
        time.sleep(POLL)


def check_at_least_one_new_pod(core, ns, label, new_image):
    """checkAtLeastOneNewPod: a condition."""

    def condition():
        pods = list_daemon_pods(core, ns, label)
        for pod in pods.items:
            if pod.spec.containers[0].image == new_image:
                return True, None
        return False, None

    return condition


def check_daemon_pods_image_and_availability(core, ds, image, max_unavailable):
    """checkDaemonPodsImageAndAvailability: a condition; an error (ending the poll) as soon
    as more than max_unavailable controlled pods not being deleted are unavailable; done
    once every node that should run a daemon pod has one with `image`."""
    min_ready = ds.spec.min_ready_seconds or 0

    def condition():
        try:
            pod_list = core.list_namespaced_pod(ds.metadata.namespace)
        except ApiException as err:
            return False, describe_error(err)
        unavailable_pods = 0
        nodes_to_updated_pod_count = {}
        now = _now()
        for pod in pod_list.items:
            # Ignore the pod on the node that is supposed to be deleted
            if pod.metadata.deletion_timestamp is not None:
                continue
            if not is_controlled_by(pod, ds):
                continue
            pod_image = pod.spec.containers[0].image
            if pod_image != image:
                logf("Wrong image for pod: %s. Expected: %s, got: %s.", pod.metadata.name,
                     image, pod_image)
            else:
                node = pod.spec.node_name or ""
                nodes_to_updated_pod_count[node] = nodes_to_updated_pod_count.get(node, 0) + 1
            if not is_pod_available(pod, min_ready, now):
                logf("Pod %s is not available", pod.metadata.name)
                unavailable_pods += 1
        if unavailable_pods > max_unavailable:
            return False, ("number of unavailable pods: %d is greater than maxUnavailable: %d"
                           % (unavailable_pods, max_unavailable))
        # Make sure every daemon pod on the node has been updated
        node_names = schedulable_nodes(core, ds)
        for node in node_names:
            if nodes_to_updated_pod_count.get(node, 0) == 0:
                return False, None
        return True, None

    return condition


# --------------------------------------------------------------------------- revisions


# The Go fields of the pod template tree whose zero value encoding/json still writes: pointer
# fields (*int64, *bool, *string, ...) and fields without omitempty; (model, attribute).
_KEEP_ZERO = {
    ("V1PodSpec", "termination_grace_period_seconds"),
    ("V1PodSpec", "active_deadline_seconds"),
    ("V1PodSpec", "automount_service_account_token"),
    ("V1PodSpec", "share_process_namespace"),
    ("V1PodSpec", "priority"),
    ("V1PodSpec", "enable_service_links"),
    ("V1PodSpec", "preemption_policy"),
    ("V1PodSpec", "runtime_class_name"),
    ("V1PodSpec", "set_hostname_as_fqdn"),
    ("V1PodSpec", "host_users"),
    ("V1PodSpec", "containers"),
    ("V1PodSecurityContext", "run_as_user"),
    ("V1PodSecurityContext", "run_as_group"),
    ("V1PodSecurityContext", "run_as_non_root"),
    ("V1PodSecurityContext", "fs_group"),
    ("V1PodSecurityContext", "fs_group_change_policy"),
    ("V1PodSecurityContext", "supplemental_groups_policy"),
    ("V1SecurityContext", "privileged"),
    ("V1SecurityContext", "run_as_user"),
    ("V1SecurityContext", "run_as_group"),
    ("V1SecurityContext", "run_as_non_root"),
    ("V1SecurityContext", "read_only_root_filesystem"),
    ("V1SecurityContext", "allow_privilege_escalation"),
    ("V1SecurityContext", "proc_mount"),
    ("V1Probe", "termination_grace_period_seconds"),
    ("V1ContainerPort", "container_port"),
    ("V1Toleration", "toleration_seconds"),
    ("V1WeightedPodAffinityTerm", "weight"),
    ("V1PreferredSchedulingTerm", "weight"),
    ("V1TopologySpreadConstraint", "max_skew"),
    ("V1TopologySpreadConstraint", "min_domains"),
    ("V1GRPCAction", "port"),
    ("V1KeyToPath", "mode"),
    ("V1ConfigMapVolumeSource", "default_mode"),
    ("V1ConfigMapVolumeSource", "optional"),
    ("V1SecretVolumeSource", "default_mode"),
    ("V1SecretVolumeSource", "optional"),
    ("V1ProjectedVolumeSource", "default_mode"),
    ("V1DownwardAPIVolumeSource", "default_mode"),
    ("V1DownwardAPIVolumeFile", "mode"),
    ("V1ConfigMapKeySelector", "optional"),
    ("V1SecretKeySelector", "optional"),
    ("V1ConfigMapEnvSource", "optional"),
    ("V1SecretEnvSource", "optional"),
    ("V1ConfigMapProjection", "optional"),
    ("V1SecretProjection", "optional"),
}

# Fields Go writes when unset: struct-typed fields (an empty struct; metav1.Time writes
# null) and nil values of fields without omitempty (null).
_ALWAYS_NULL = {
    ("V1ObjectMeta", "creation_timestamp"),
    ("V1PodSpec", "containers"),
}
_ALWAYS_STRUCT = {
    ("V1PodTemplateSpec", "metadata"): "V1ObjectMeta",
    ("V1PodTemplateSpec", "spec"): "V1PodSpec",
    ("V1Container", "resources"): "V1ResourceRequirements",
    ("V1EphemeralContainer", "resources"): "V1ResourceRequirements",
}

_OMIT = object()


def _is_model(value):
    return hasattr(value, "openapi_types") and hasattr(value, "attribute_map")


def go_encode(model):
    """The JSON value encoding/json writes for the Go struct `model` stands for (see the
    module doc): a dict (key order irrelevant: the result is re-marshalled sorted)."""
    name = type(model).__name__
    out = {}
    for attr, typ in model.openapi_types.items():
        key = model.attribute_map[attr]
        value = getattr(model, attr)
        enc = _go_encode_field(name, attr, typ, value)
        if enc is not _OMIT:
            out[key] = enc
    return out


def _go_encode_field(model_name, attr, typ, value):
    keep_zero = (model_name, attr) in _KEEP_ZERO
    if value is None:
        if (model_name, attr) in _ALWAYS_STRUCT:
            return go_encode(getattr(client, _ALWAYS_STRUCT[(model_name, attr)])())
        if (model_name, attr) in _ALWAYS_NULL:
            return None
        return _OMIT
    if _is_model(value):
        return go_encode(value)  # a struct or a non-nil pointer to one
    if isinstance(value, list):
        if not value and not keep_zero:
            return _OMIT
        return [go_encode(v) if _is_model(v) else _go_scalar(v) for v in value]
    if isinstance(value, dict):
        if typ.startswith("dict("):
            if not value:
                return _OMIT  # omitempty map
            return {k: (go_encode(v) if _is_model(v) else _go_scalar(v))
                    for k, v in value.items()}
        return value  # an `object` field (IntOrString, RawExtension, ...) as decoded
    if typ == "object":
        return _go_scalar(value)  # IntOrString & co are structs in Go: always written
    if value in ("", 0, False) and not isinstance(value, float) and not keep_zero:
        return _OMIT  # omitempty zero value
    return _go_scalar(value)


def _go_scalar(value):
    if isinstance(value, datetime.datetime):
        return go_time(value, False)
    return value


def go_marshal_sorted(value):
    """encoding/json.Marshal of a generic value (maps: keys sorted), as bytes: compact, with
    Go's HTML-safe escaping of <, > and & and of U+2028/U+2029."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    text = (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return text.encode("utf-8")


def get_patch(ds):
    """daemon.getPatch: the strategic merge patch that replaces spec.template:
    {"spec":{"template":<the template with "$patch":"replace">}}, as Go encodes it."""
    template = go_encode(ds.spec.template if ds.spec.template is not None
                         else client.V1PodTemplateSpec())
    template["$patch"] = "replace"
    return go_marshal_sorted({"spec": {"template": template}})


def match(ds, history):
    """daemon.Match: the revision's raw data bytes equal getPatch(ds)."""
    return get_patch(ds) == getattr(history, "raw_data", None)


def _fnv32a(data, h=0x811C9DC5):
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode_string(s):
    """rand.SafeEncodeString: each byte mapped into "bcdfghjklmnpqrstvwxz2456789"."""
    alphanums = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphanums[b % len(alphanums)] for b in s.encode())


def compute_hash(template, collision_count):
    """controller.ComputeHash, emulated (see the module doc): FNV-32a over the Go JSON of
    the template, then the collision count (when set) as 4 little-endian bytes."""
    h = _fnv32a(go_marshal_sorted(go_encode(template)))
    if collision_count is not None:
        h = _fnv32a(struct.pack("<I", collision_count & 0xFFFFFFFF), h)
    return safe_encode_string(str(h))


def hash_and_name_for_daemon_set(ds):
    """hashAndNameForDaemonSet: (hash, <ds name>-<hash>)."""
    hash_ = compute_hash(ds.spec.template,
                         ds.status.collision_count if ds.status is not None else None)
    return hash_, ds.metadata.name + "-" + hash_


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _ws(s, i):
    return _WS.match(s, i).end()


def _object_members(s, i):
    """(key, value start, value end) of each member of the JSON object starting at s[i]."""
    i = _ws(s, i)
    if s[i] != "{":
        return
    i = _ws(s, i + 1)
    if s[i] == "}":
        return
    while True:
        key, i = json.decoder.scanstring(s, i + 1)
        i = _ws(s, i)
        i = _ws(s, i + 1)  # the ':'
        _, end = _DECODER.raw_decode(s, i)
        yield key, i, end
        i = _ws(s, end)
        if s[i] == "}":
            return
        i = _ws(s, i + 1)  # the ','


def _array_elements(s, i):
    """(start, end) of each element of the JSON array starting at s[i]."""
    i = _ws(s, i)
    if s[i] != "[":
        return
    i = _ws(s, i + 1)
    if s[i] == "]":
        return
    while True:
        _, end = _DECODER.raw_decode(s, i)
        yield i, end
        i = _ws(s, end)
        if s[i] == "]":
            return
        i = _ws(s, i + 1)


def _raw_item_data(body):
    """The raw bytes of each item's "data" in a ControllerRevisionList body (None where an
    item has none), as client-go's RawExtension.UnmarshalJSON keeps them."""
    out = []
    for key, start, _ in _object_members(body, 0):
        if key != "items":
            continue
        for istart, _ in _array_elements(body, start):
            raw = None
            for k, vstart, vend in _object_members(body, istart):
                if k == "data":
                    raw = body[vstart:vend].encode("utf-8")
                    if raw == b"null":
                        raw = None
            out.append(raw)
    return out


def list_controller_revisions(apps, api_client, ns, label_selector=None):
    """ControllerRevisions(ns).List: the typed list, each item with `raw_data` (Data.Raw)."""
    kwargs = {"_preload_content": False}
    if label_selector is not None:
        kwargs["label_selector"] = label_selector
    resp = apps.list_namespaced_controller_revision(ns, **kwargs)
    try:
        body = resp.data.decode("utf-8")
    finally:
        resp.release_conn()

    class _Resp:
        data = body

    history_list = api_client.deserialize(_Resp(), "V1ControllerRevisionList")
    for item, raw in zip(history_list.items, _raw_item_data(body)):
        item.raw_data = raw
    return history_list


def wait_for_history_created(apps, ns, label, num_history):
    """waitForHistoryCreated: until exactly num_history revisions carry the labels."""

    def condition():
        try:
            history_list = apps.list_namespaced_controller_revision(
                ns, label_selector=selector_from_set(label))
        except ApiException as err:
            return False, describe_error(err)
        if len(history_list.items) == num_history:
            return True, None
        logf("%d/%d controllerrevisions created.", len(history_list.items), num_history)
        return False, None

    err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True, condition)
    expect_no_err(err, "error waiting for controllerrevisions to be created")


def list_daemon_histories(apps, api_client, ns, label):
    """listDaemonHistories: the revisions with the labels; must not be empty."""
    try:
        history_list = list_controller_revisions(apps, api_client, ns,
                                                 selector_from_set(label))
    except ApiException as err:
        fail("unexpected error: %s", describe_error(err))
    if not history_list.items:
        fail("Expected\n    <[]v1.ControllerRevision | len:0>: []\nnot to be empty")
    return history_list


def cur_history(history_list, ds):
    """curHistory: every revision has a hash label, and exactly one Matches ds."""
    cur = None
    found_cur_histories = 0
    for history in history_list.items:
        # Every history should have the hash label
        if not (history.metadata.labels or {}).get(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY):
            fail("Expected\n    <string>: \nnot to be empty (revision %s has no %s label)",
                 history.metadata.name, DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY)
        if match(ds, history):
            cur = history
            found_cur_histories += 1
    if found_cur_histories != 1:
        for history in history_list.items:
            logf("revision %s (revision %s) data: %s", history.metadata.name,
                 history.revision, history.raw_data)
        logf("the DaemonSet's patch: %s", get_patch(ds))
        fail("Expected\n    <int>: %d\nto equal\n    <int>: 1", found_cur_histories)
    return cur


def check_controller_revision_list_quantity(f, apps, label, quantity):
    """checkControllerRevisionListQuantity: a condition; done when exactly `quantity`
    revisions of the namespace match the label selector."""

    def condition():
        logf("Requesting list of ControllerRevisions to confirm quantity")
        try:
            lst = apps.list_namespaced_controller_revision(f.namespace.metadata.name,
                                                           label_selector=label)
        except ApiException as err:
            return False, describe_error(err)
        if len(lst.items) != quantity:
            return False, None
        logf("Found %d ControllerRevisions", quantity)
        return True, None

    return condition


# --------------------------------------------------------------------------- cleanup


def delete_daemon_set_and_wait_for_gc(core, apps, ns, name):
    """e2eresource.DeleteResourceAndWaitForGC(ctx, c, extensionsinternal.Kind("DaemonSet"),
    ns, name): e2e_resource.delete_resource_and_wait_for_gc (its pods selected by
    spec.selector; GetReplicasFromRuntimeObject is 0 for a DaemonSet, so it polls every
    100 ms). ``core`` and ``apps`` are the same clientset's (``apps`` kept for the callers).
    Returns None or the error text."""
    return delete_resource_and_wait_for_gc(core.api_client, KIND_DAEMON_SET, ns, name)


class DaemonSetDescribe:
    """The common setup of SIGDescribe("Daemon set [Serial]") and
    SIGDescribe("ControllerRevision [Serial]"): NewDefaultFramework(base_name) with
    NamespacePodSecurityLevel baseline, the BeforeEach (patchNamespaceAnnotations,
    clearDaemonSetNodeLabels) and the AfterEach (delete every DaemonSet of the namespace and
    wait for its pods to go, dump DaemonSets and pods, clearDaemonSetNodeLabels)."""

    def __init__(self, new_framework, base_name):
        self.f = new_framework(base_name, "baseline")
        self.c = self.f.core
        self.apps = client.AppsV1Api(self.f.api_client)
        self.ns = self.f.namespace.metadata.name

    def before_each(self):
        updated_ns, err = patch_namespace_annotations(self.c, self.ns)
        expect_no_err(err)
        self.ns = updated_ns.metadata.name
        expect_no_err(clear_daemon_set_node_labels(self.c))

    def after_each(self):
        f = self.f
        ns = f.namespace.metadata.name
        daemonsets = expect_no_error(self.apps.list_namespaced_daemon_set, ns,
                                     explain="unable to dump DaemonSets")
        for ds in daemonsets.items:
            by('Deleting DaemonSet "%s"' % ds.metadata.name)
            expect_no_err(delete_daemon_set_and_wait_for_gc(self.c, self.apps, ns,
                                                            ds.metadata.name))
            err = poll_until_context_timeout(DS_RETRY_PERIOD, DS_RETRY_TIMEOUT, True,
                                             check_running_on_no_nodes(f, ds))
            expect_no_err(err, "error waiting for daemon pod to be reaped")
        try:
            logf("daemonset: %s", json.dumps(_sanitize(self.apps.list_namespaced_daemon_set(ns))))
        except ApiException as err:
            logf("unable to dump daemonsets: %s", describe_error(err))
        try:
            logf("pods: %s", json.dumps(_sanitize(self.c.list_namespaced_pod(ns))))
        except ApiException as err:
            logf("unable to dump pods: %s", describe_error(err))
        expect_no_err(clear_daemon_set_node_labels(self.c))

    def run(self, body):
        """Ginkgo's order: BeforeEach, the It, then the AfterEach also when the spec
        failed (a failure there is reported after the spec's own)."""
        try:
            self.before_each()
            body(self)
        except BaseException:
            try:
                self.after_each()
            except BaseException as err:  # pytest.fail's exception is not an Exception
                logf("AfterEach failed too: %s", err)
            raise
        self.after_each()

