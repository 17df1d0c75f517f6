"""The helpers of test/e2e/apps/disruption.go (kubernetes/kubernetes, v1.32) the ported
DisruptionController [Conformance] tests (test_disruption.py) use, and the policy/v1 client
they talk through.

Upstream source: test/e2e/apps/disruption.go as of mmorel-35/kubernetes@0b0abd6c (a recent
fork of kubernetes/kubernetes), cross-checked against an earlier stored version of the file:
the conformance tests and the helpers below are the same in both (the versions differ only
in `any` vs `interface{}` and in a non-conformance test's gomega matcher), so they are those
of v1.32.

What stands for what:

* ``PodDisruptionBudgetClient``: ``cs.PolicyV1().PodDisruptionBudgets(ns)`` (get, create,
  update, updateStatus, patch, list, delete, deleteCollection; ns "" is all namespaces for
  List), and ``get_status_unstructured`` for ``dc.Resource(poddisruptionbudgets)
  .Namespace(ns).Get(ctx, name, {}, "status")`` (the dynamic client: plain JSON).
* ``evict_v1``: ``cs.CoreV1().Pods(ns).EvictV1(ctx, eviction)`` (POST
  pods/{name}/eviction with a policy/v1 Eviction).
* ``has_status_cause``: ``apierrors.HasStatusCause``.
* ``create_merge_patch``: ``jsonpatch.CreateMergePatch`` (gopkg.in/evanphx/json-patch.v4),
  ``go_json_marshal``: ``json.Marshal`` of a typed PodDisruptionBudget.
* The rest are disruption.go's own helpers, one Python function each, named after them
  (createPDBMinAvailableOrDie -> create_pdb_min_available_or_die, ...).

Wire fidelity: the installed python3-kubernetes (22.6) models policy/v1 PodDisruptionBudget
without spec.unhealthyPodEvictionPolicy (nor any field added after 1.22). client-go v1.32
knows every field, and its Get-modify-Update sends back all the server returned. So the PDB
client talks JSON (ApiClient.call_api) and hands back typed models that remember the JSON
they were decoded from (e2e_batch.decode / wire_body, as the batch/v1 client does): when
such a model is sent again, the fields the model does not know are put back from that JSON.

Images: createPodsOrDie and createReplicaSetOrDie run imageutils.GetPauseImageName()
(registry.k8s.io/pause:3.10), the same reference as the nodes' offline pause image
(PAUSE_IMAGE): no substitution.
"""

import copy
import json

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_batch import decode, set_extra_field, wire_body
from e2e_framework import (CONTEXT_DEADLINE, PAUSE_IMAGE, POLL, by, describe_error,
                           expect_no_error, fail, is_not_found, is_pod_ready, logf, poll,
                           raw_call, retry_on_conflict, status_of)

# schedulingTimeout is longer specifically because sometimes we need to wait awhile to
# guarantee that we've been patient waiting for something ordinary to happen: a pod to get
# scheduled and move into Ready
BIG_CLUSTER_SIZE = 7            # bigClusterSize
SCHEDULING_TIMEOUT = 10 * 60    # schedulingTimeout
TIMEOUT = 60                    # timeout
DEFAULT_NAME = "foo"            # defaultName
DEFAULT_LABELS = {"foo": "bar"}  # defaultLabels

FOREVER_TEST_TIMEOUT = 30       # wait.ForeverTestTimeout
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"  # policyv1.DisruptionBudgetCause

GROUP_VERSION = "policy/v1"
KIND = "PodDisruptionBudget"
MODEL = "V1PodDisruptionBudget"


# --------------------------------------------------------------------------- clients


class PodDisruptionBudgetClient:
    """cs.PolicyV1().PodDisruptionBudgets(ns) over JSON (see the module doc); ns "" is all
    namespaces (List only). Errors raise ApiException."""

    def __init__(self, api_client, namespace):
        self.api_client = api_client
        self.namespace = namespace

    def _path(self, name=None, subresource=None):
        if self.namespace:
            path = "/apis/%s/namespaces/%s/poddisruptionbudgets" % (GROUP_VERSION,
                                                                   self.namespace)
        else:
            path = "/apis/%s/poddisruptionbudgets" % GROUP_VERSION
        if name is not None:
            path += "/" + name
        if subresource is not None:
            path += "/" + subresource
        return path

    def _call(self, method, path, body=None, headers=None, query=None):
        return raw_call(self.api_client, method, path, body=body, headers=headers,
                        query=query)

    def get(self, name):
        return decode(self._call("GET", self._path(name)), MODEL)

    def create(self, pdb):
        body = wire_body(self.api_client, pdb, GROUP_VERSION, KIND)
        return decode(self._call("POST", self._path(), body=body), MODEL)

    def update(self, pdb):
        body = wire_body(self.api_client, pdb, GROUP_VERSION, KIND)
        return decode(self._call("PUT", self._path(pdb.metadata.name), body=body), MODEL)

    def update_status(self, pdb):
        body = wire_body(self.api_client, pdb, GROUP_VERSION, KIND)
        return decode(self._call("PUT", self._path(pdb.metadata.name, "status"), body=body),
                      MODEL)

    def patch(self, name, patch_type, data, subresource=None):
        """Patch(ctx, name, pt, data, opts, subresources...): ``data`` is the patch text."""
        return decode(self._call("PATCH", self._path(name, subresource),
                                 body=json.loads(data),
                                 headers={"Content-Type": patch_type}), MODEL)

    def list(self, label_selector=None):
        query = {"labelSelector": label_selector} if label_selector else None
        return decode(self._call("GET", self._path(), query=query), MODEL + "List")

    def delete(self, name):
        return self._call("DELETE", self._path(name), body={})

    def delete_collection(self):
        """DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})"""
        return self._call("DELETE", self._path(), body={})

    def get_status_unstructured(self, name):
        """dc.Resource(pdbStatusResource).Namespace(ns).Get(ctx, name, {}, "status"): the
        object as JSON (unstructured)."""
        return self._call("GET", self._path(name, "status"))


def pdbs(api_client, ns):
    """cs.PolicyV1().PodDisruptionBudgets(ns)"""
    return PodDisruptionBudgetClient(api_client, ns)


def evict_v1(api_client, ns, eviction):
    """cs.CoreV1().Pods(ns).EvictV1(ctx, eviction): POST /api/v1/namespaces/{ns}/pods/{name}/
    eviction with the policy/v1 Eviction (apiVersion and kind set, as client-go's encoder
    writes them). Raises ApiException."""
    body = {"kind": "Eviction", "apiVersion": "policy/v1", "metadata": {
        "name": eviction["metadata"]["name"],
        "namespace": eviction["metadata"]["namespace"],
    }}
    raw_call(api_client, "POST", "/api/v1/namespaces/%s/pods/%s/eviction" % (
        eviction["metadata"]["namespace"], eviction["metadata"]["name"]), body=body)


def new_eviction(name, ns):
    """&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}"""
    return {"metadata": {"name": name, "namespace": ns}}


def has_status_cause(err, cause_type):
    """apierrors.HasStatusCause: err is an API status error whose details carry a cause of
    that type."""
    if not isinstance(err, ApiException):
        return False
    details = status_of(err).get("details")
    if not isinstance(details, dict):
        return False
    # metav1.StatusCause.Type is written as "reason" (`json:"reason,omitempty"`)
    return any(isinstance(c, dict) and c.get("reason") == cause_type
               for c in details.get("causes") or [])


def expect_match_error_disruption_budget(err, description):
    """gomega.Expect(err).To(gomega.MatchError(func(err error) bool { return
    apierrors.HasStatusCause(err, policyv1.DisruptionBudgetCause) }, description))"""
    if err is None:
        fail("Expected an error to have occurred.  Got:\n    <nil>: nil")
    if not has_status_cause(err, DISRUPTION_BUDGET_CAUSE):
        fail("Expected\n    %s\nto match error function %s", describe_error(err), description)


# --------------------------------------------------------------------------- JSON helpers


def int_or_string(value):
    """intstr.IntOrString.String()"""
    if value is None:
        fail("runtime error: invalid memory address or nil pointer dereference")
    return value if isinstance(value, str) else str(int(value))


def int_val(value):
    """intstr.IntOrString.IntVal (0 for a string)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _omit_empty(model, wire):
    """encoding/json's omitempty for the maps and slices of a typed model: every map and
    slice field of the API types is `omitempty`, so an empty one is not written."""
    if not (hasattr(model, "openapi_types") and isinstance(wire, dict)):
        return
    for attr, type_name in model.openapi_types.items():
        key = model.attribute_map[attr]
        value = getattr(model, attr)
        if key not in wire:
            continue
        if (type_name.startswith("dict(") or type_name.startswith("list[")) and not value:
            del wire[key]
        elif type_name.startswith("list[") and isinstance(wire[key], list):
            for m, w in zip(value, wire[key]):
                _omit_empty(m, w)
        elif hasattr(value, "openapi_types"):
            _omit_empty(value, wire[key])


def go_json_marshal(api_client, pdb):
    """json.Marshal(pdb) of a typed PodDisruptionBudget decoded by unstructuredToPDB (Kind
    and APIVersion cleared, so not written): the fields as client-go writes them, empty
    maps and slices omitted."""
    wire = wire_body(api_client, pdb)
    wire.pop("apiVersion", None)
    wire.pop("kind", None)
    _omit_empty(pdb, wire)
    return json.dumps(wire, separators=(",", ":"))


def _merge_diff(original, modified):
    """json-patch v4 getDiff: the merge patch turning `original` into `modified` (objects)."""
    patch = {}
    for key, value in modified.items():
        if key not in original:
            patch[key] = value
            continue
        old = original[key]
        if isinstance(value, dict) and isinstance(old, dict):
            sub = _merge_diff(old, value)
            if sub:
                patch[key] = sub
        elif value != old or type(value) is not type(old):
            patch[key] = value
    for key in original:
        if key not in modified:
            patch[key] = None
    return patch


def create_merge_patch(original_json, modified_json):
    """jsonpatch.CreateMergePatch(originalJSON, modifiedJSON): (patch bytes, error)."""
    return json.dumps(_merge_diff(json.loads(original_json), json.loads(modified_json)),
                      separators=(",", ":")), None


# --------------------------------------------------------------------------- disruption.go


def _ns_of(f):
    return f.namespace.metadata.name


def new_pdb_min_available(ns, name, min_available, labels):
    return client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name=name, namespace=ns, labels=labels),
        spec=client.V1PodDisruptionBudgetSpec(
            selector=client.V1LabelSelector(match_labels={"foo": "bar"}),
            min_available=min_available))


def create_pdb_min_available_or_die(api_client, ns, name, min_available, labels):
    """createPDBMinAvailableOrDie"""
    pdb = new_pdb_min_available(ns, name, min_available, labels)
    expect_no_error(pdbs(api_client, ns).create, pdb,
                    explain="Waiting for the pdb to be created with minAvailable %d in "
                            "namespace %s" % (int_val(min_available), ns))
    wait_for_pdb_to_be_processed(api_client, ns, name)


def create_pdb_max_unavailable_or_die(api_client, ns, name, max_unavailable,
                                      unhealthy_pod_eviction_policy):
    """createPDBMaxUnavailableOrDie (spec.unhealthyPodEvictionPolicy is set beside the
    model, which lacks it; see the module doc)."""
    pdb = client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name=name, namespace=ns),
        spec=client.V1PodDisruptionBudgetSpec(
            selector=client.V1LabelSelector(match_labels={"foo": "bar"}),
            max_unavailable=max_unavailable))
    if unhealthy_pod_eviction_policy is not None:
        set_extra_field(pdb, ["spec", "unhealthyPodEvictionPolicy"],
                        unhealthy_pod_eviction_policy)
    expect_no_error(pdbs(api_client, ns).create, pdb,
                    explain="Waiting for the pdb to be created with maxUnavailable %d in "
                            "namespace %s" % (int_val(max_unavailable), ns))
    wait_for_pdb_to_be_processed(api_client, ns, name)


def update_pdb_or_die(api_client, ns, name, update_fn, api):
    """updatePDBOrDie: RetryOnConflict(Get, update_fn, api) where ``api`` is "update"
    (PodDisruptionBudgets(ns).Update) or "update_status" (.UpdateStatus); then
    waitForPdbToBeProcessed. Returns the updated PDB."""
    client_ = pdbs(api_client, ns)
    updated = [None]

    def attempt():
        old = client_.get(name)
        old = update_fn(old)
        updated[0] = getattr(client_, api)(old)

    expect_no_error(retry_on_conflict, attempt,
                    explain="Waiting for the PDB update to be processed in namespace %s" % ns)
    wait_for_pdb_to_be_processed(api_client, ns, name)
    return updated[0]


def patch_pdb_or_die(api_client, ns, name, patch_fn, *subresources):
    """patchPDBOrDie: RetryOnConflict(getPDBStatusOrDie, patch_fn, merge Patch with the
    subresources); then waitForPdbToBeProcessed. ``patch_fn(old)`` returns (bytes, error).
    Returns the patched PDB."""
    client_ = pdbs(api_client, ns)
    updated = [None]

    def attempt():
        old = get_pdb_status_or_die(api_client, ns, name)
        patch_bytes, err = patch_fn(old)
        if err is not None:
            fail("unexpected error: %s", err)
        updated[0] = client_.patch(old.metadata.name, "application/merge-patch+json",
                                   patch_bytes, *subresources)

    expect_no_error(retry_on_conflict, attempt,
                    explain="Waiting for the pdb update to be processed in namespace %s" % ns)
    wait_for_pdb_to_be_processed(api_client, ns, name)
    return updated[0]


def delete_pdb_or_die(api_client, ns, name):
    """deletePDBOrDie"""
    expect_no_error(pdbs(api_client, ns).delete, name,
                    explain="Deleting pdb in namespace %s" % ns)
    wait_for_pdb_to_be_deleted(api_client, ns, name)


def list_pdbs(api_client, ns, label_selector, count, expected_pdb_names):
    """listPDBs"""
    pdb_list = expect_no_error(pdbs(api_client, ns).list, label_selector,
                               explain="Listing PDB set in namespace %s" % ns)
    names = [item.metadata.name for item in pdb_list.items]
    if len(pdb_list.items) != count:
        fail("Expecting %d PDBs returned in namespace %s\nExpected\n    %s\nto have length %d",
             count, ns, ["%s/%s" % (i.metadata.namespace, i.metadata.name)
                         for i in pdb_list.items], count)
    pdb_names = []
    for item in pdb_list.items:
        pdb_names.append(item.metadata.name)
    if sorted(pdb_names) != sorted(expected_pdb_names):  # gomega.ConsistOf
        fail("Expecting returned PDBs '%s' in namespace %s\nExpected\n    %s\nto consist of\n"
             "    %s", expected_pdb_names, ns, names, expected_pdb_names)


def delete_pdb_collection(api_client, ns):
    """deletePDBCollection"""
    by("deleting a collection of PDBs")
    expect_no_error(pdbs(api_client, ns).delete_collection,
                    explain="Deleting PDB set in namespace %s" % ns)
    wait_for_pdb_collection_to_be_deleted(api_client, ns)


def wait_for_pdb_collection_to_be_deleted(api_client, ns):
    """waitForPDBCollectionToBeDeleted"""
    by("Waiting for the PDB collection to be deleted")
    client_ = pdbs(api_client, ns)

    def condition():
        try:
            pdb_list = client_.list()
        except ApiException as err:
            return False, describe_error(err)
        if len(pdb_list.items) != 0:
            return False, None
        return True, None

    err = poll(POLL, SCHEDULING_TIMEOUT, condition, immediate=True,
               timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("Waiting for the PDB collection to be deleted in namespace %s: %s", ns, err)


def new_pod(ns, i):
    """createPodsOrDie's pod"""
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name="pod-%d" % i, namespace=ns, labels={"foo": "bar"}),
        spec=client.V1PodSpec(
            containers=[client.V1Container(name="donothing", image=PAUSE_IMAGE)],
            restart_policy="Always"))


def create_pods_or_die(core, ns, n):
    """createPodsOrDie"""
    for i in range(n):
        pod = new_pod(ns, i)
        expect_no_error(core.create_namespaced_pod, ns, pod,
                        explain="Creating pod %r in namespace %r" % (pod.metadata.name, ns))


def wait_for_pods_or_die(core, ns, n):
    """waitForPodsOrDie: until at least n pods labelled foo=bar are ready and not being
    deleted (poll framework.Poll, schedulingTimeout)."""
    by("Waiting for all pods to be running")

    def condition():
        try:
            pods = core.list_namespaced_pod(ns, label_selector="foo=bar")
        except ApiException as err:
            return False, describe_error(err)
        if pods is None:
            return False, "pods is nil"
        if len(pods.items) < n:
            logf("pods: %d < %d", len(pods.items), n)
            return False, None
        ready = 0
        for pod in pods.items:
            if is_pod_ready(pod) and pod.metadata.deletion_timestamp is None:
                ready += 1
        if ready < n:
            logf("running pods: %d < %d", ready, n)
            return False, None
        return True, None

    err = poll(POLL, SCHEDULING_TIMEOUT, condition, immediate=True,
               timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("Waiting for pods in namespace %r to be ready: %s", ns, err)


def create_replica_set_or_die(apps, ns, size, exclusive):
    """createReplicaSetOrDie"""
    container = client.V1Container(name="donothing", image=PAUSE_IMAGE)
    if exclusive:
        container.ports = [client.V1ContainerPort(host_port=5555, container_port=5555)]
    rs = client.V1ReplicaSet(
        metadata=client.V1ObjectMeta(name="rs", namespace=ns),
        spec=client.V1ReplicaSetSpec(
            replicas=size,
            selector=client.V1LabelSelector(match_labels={"foo": "bar"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"foo": "bar"}),
                spec=client.V1PodSpec(containers=[container]))))
    expect_no_error(apps.create_namespaced_replica_set, ns, rs,
                    explain="Creating replica set %r in namespace %r" % (rs.metadata.name, ns))


def locate_running_pod(core, ns):
    """locateRunningPod: (pod, error text or None): the first pod of the namespace that is
    ready and not being deleted (poll framework.Poll, schedulingTimeout)."""
    by("locating a running pod")
    found = [None]

    def condition():
        try:
            pod_list = core.list_namespaced_pod(ns)
        except ApiException as err:
            return False, describe_error(err)
        for p in pod_list.items:
            if is_pod_ready(p) and p.metadata.deletion_timestamp is None:
                found[0] = p
                return True, None
        return False, None

    err = poll(POLL, SCHEDULING_TIMEOUT, condition, immediate=True,
               timeout_error=CONTEXT_DEADLINE)
    return found[0], err


def wait_for_pdb_to_be_processed(api_client, ns, name):
    """waitForPdbToBeProcessed: until status.observedGeneration >= metadata.generation."""
    by("Waiting for the pdb to be processed")
    client_ = pdbs(api_client, ns)

    def condition():
        try:
            pdb = client_.get(name)
        except ApiException as err:
            return False, describe_error(err)
        observed = (pdb.status.observed_generation if pdb.status else None) or 0
        if observed < (pdb.metadata.generation or 0):
            return False, None
        return True, None

    err = poll(POLL, SCHEDULING_TIMEOUT, condition, immediate=True,
               timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("Waiting for the pdb to be processed in namespace %s: %s", ns, err)


def wait_for_pdb_to_be_deleted(api_client, ns, name):
    """waitForPdbToBeDeleted"""
    by("Waiting for the pdb to be deleted")
    client_ = pdbs(api_client, ns)

    def condition():
        try:
            client_.get(name)
        except ApiException as err:
            if is_not_found(err):
                return True, None  # done
            return False, describe_error(err)
        return False, None

    err = poll(POLL, SCHEDULING_TIMEOUT, condition, immediate=True,
               timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        fail("Waiting for the pdb to be deleted in namespace %s: %s", ns, err)


def wait_for_pdb_to_observe_healthy_pods(api_client, ns, healthy_count, desired_healthy):
    """waitForPdbToObserveHealthyPods: PDB "foo" has status.currentHealthy == healthy_count
    and status.desiredHealthy == desired_healthy (poll framework.Poll,
    wait.ForeverTestTimeout)."""
    by("Waiting for the pdb to observed all healthy pods")
    client_ = pdbs(api_client, ns)
    last = [None]

    def condition():
        try:
            pdb = client_.get("foo")
        except ApiException as err:
            return False, describe_error(err)
        status = pdb.status or client.V1PodDisruptionBudgetStatus(
            current_healthy=0, desired_healthy=0, disruptions_allowed=0, expected_pods=0)
        last[0] = (status.current_healthy, status.desired_healthy)
        if (status.current_healthy or 0) != healthy_count:
            return False, None
        if (status.desired_healthy or 0) != desired_healthy:
            return False, None
        return True, None

    err = poll(POLL, FOREVER_TEST_TIMEOUT, condition, immediate=True,
               timeout_error=CONTEXT_DEADLINE)
    if err is not None:
        logf("last seen (currentHealthy, desiredHealthy): %s", last[0])
        fail("Waiting for the pdb in namespace %s to observed %d healthy pods: %s", ns,
             healthy_count, err)


def get_pdb_status_or_die(api_client, ns, name):
    """getPDBStatusOrDie: the status subresource through the dynamic client, decoded into a
    typed PDB (unstructuredToPDB clears Kind and APIVersion)."""
    unstruct = expect_no_error(pdbs(api_client, ns).get_status_unstructured, name,
                               explain="unexpected error")
    pdb = decode(copy.deepcopy(unstruct), MODEL)
    pdb.kind = None
    pdb.api_version = None
    return pdb
