"""The pieces of test/e2e/framework/pv (kubernetes/kubernetes, pv.go) the PersistentVolumes
"CSI Conformance" ports (test_persistent_volumes.py) use, and the core/v1 PersistentVolume
and PersistentVolumeClaim clients they talk through. Upstream read: test/e2e/framework/pv/
pv.go as stored at kubernetes/kubernetes@93e3728b (the context-taking API of v1.32).

What stands for what:

* ``PersistentVolumeClient`` / ``PersistentVolumeClaimClient``:
  ``c.CoreV1().PersistentVolumes()`` / ``.PersistentVolumeClaims(ns)`` (get, create,
  update, updateStatus, patch, list, delete, deleteCollection; ns "" is all namespaces for
  List), and ``get_unstructured(name, subresource)`` for ``f.DynamicClient.Resource(gvr)
  [.Namespace(ns)].Get(ctx, name, {}, "status")`` (the dynamic client: plain JSON).
* ``PersistentVolumeConfig`` / ``PersistentVolumeClaimConfig``: the structs of the same
  names (keyword arguments named after their fields).
* ``make_persistent_volume``, ``make_persistent_volume_claim``, ``create_pv``,
  ``create_pvc``, ``create_pv_pvc``, ``create_pvs_pvcs``, ``delete_persistent_volume``,
  ``delete_persistent_volume_claim``, ``pv_pvc_map_cleanup``, ``make_pvc_key``:
  MakePersistentVolume, MakePersistentVolumeClaim, createPV/CreatePV, CreatePVC,
  CreatePVPVC, CreatePVsPVCs, DeletePersistentVolume, DeletePersistentVolumeClaim,
  PVPVCMapCleanup, makePvcKey. A PVMap is a dict of PV names, a PVCMap a dict of
  (namespace, name) keys (types.NamespacedName); the values are None (upstream's empty
  structs). Functions that return an ``error`` upstream return None or the error's text.
* ``eventually_state``: ``framework.Gomega().Eventually(ctx, framework.HandleRetry(get))
  .WithTimeout(t).Should(framework.MakeMatcher(match))`` with the e2e framework's default
  polling interval (framework.Poll, 2 s; test_context.go sets it as gomega's default).

Wire fidelity: the installed python3-kubernetes (22.6) models core/v1 as of Kubernetes 1.22:
its V1PersistentVolumeStatus has no lastPhaseTransitionTime, V1PersistentVolumeSpec and
V1PersistentVolumeClaimSpec no volumeAttributesClassName, V1PersistentVolumeClaimStatus no
allocatedResources/allocatedResourceStatuses/currentVolumeAttributesClassName/
modifyVolumeStatus. client-go v1.32 knows them all and its Get-modify-Update(Status) sends
back every field the server returned. So these clients talk JSON (ApiClient.call_api) and
hand back typed models that remember the JSON they were decoded from (e2e_batch.decode /
wire_body, as the batch/v1 and policy/v1 clients do): when such a model is sent again, the
fields the model does not know are put back from that JSON. As client-go's encoder does,
request bodies carry apiVersion and kind.
"""

import json
import time

from kubernetes import client
from kubernetes.client.rest import ApiException

from e2e_batch import decode, should_retry, wire_body
from e2e_framework import describe_error, is_not_found, logf, raw_call

# pv.go constants
VOLUME_SELECTOR_KEY = "e2e-pv-pool"               # VolumeSelectorKey
VOLUME_GID_ANNOTATION_KEY = "pv.beta.kubernetes.io/gid"  # volumeGidAnnotationKey

# framework.TimeoutContext defaults (timeouts.go)
PV_CREATE_TIMEOUT = 3 * 60   # PVCreate
GOMEGA_POLL = 2.0            # framework.Poll, gomega's default polling interval in e2e

# v1 constants
READ_WRITE_ONCE = "ReadWriteOnce"
RECLAIM_RETAIN = "Retain"


# --------------------------------------------------------------------------- clients


class _CoreV1Client:
    """A typed client of one core/v1 resource over JSON (see the module doc). Errors raise
    ApiException."""

    PLURAL = None
    KIND = None
    NAMESPACED = True

    def __init__(self, api_client, namespace=None):
        self.api_client = api_client
        self.namespace = namespace

    def _path(self, name=None, subresource=None):
        if self.NAMESPACED and self.namespace:
            path = "/api/v1/namespaces/%s/%s" % (self.namespace, self.PLURAL)
        else:
            path = "/api/v1/%s" % self.PLURAL
        if name is not None:
            path += "/" + name
        if subresource is not None:
            path += "/" + subresource
        return path

    def _call(self, method, path, body=None, headers=None, query=None):
        return raw_call(self.api_client, method, path, body=body, headers=headers,
                        query=query)

    def _model(self):
        return "V1" + self.KIND

    def get(self, name):
        return decode(self._call("GET", self._path(name)), self._model())

    def get_unstructured(self, name, subresource=None):
        """The dynamic client's Get(ctx, name, GetOptions{}, subresources...): the JSON."""
        return self._call("GET", self._path(name, subresource))

    def create(self, obj):
        body = wire_body(self.api_client, obj, "v1", self.KIND)
        return decode(self._call("POST", self._path(), body=body), self._model())

    def update(self, obj):
        body = wire_body(self.api_client, obj, "v1", self.KIND)
        return decode(self._call("PUT", self._path(obj.metadata.name), body=body),
                      self._model())

    def update_status(self, obj):
        body = wire_body(self.api_client, obj, "v1", self.KIND)
        return decode(self._call("PUT", self._path(obj.metadata.name, "status"), body=body),
                      self._model())

    def patch(self, name, patch_type, data, subresource=None):
        """Patch(ctx, name, pt, data, opts, subresources...): ``data`` is the patch text
        (sent parsed and re-encoded: only insignificant whitespace differs)."""
        return decode(self._call("PATCH", self._path(name, subresource), body=json.loads(data),
                                 headers={"Content-Type": patch_type}), self._model())

    def list(self, label_selector=None):
        query = {"labelSelector": label_selector} if label_selector else None
        return decode(self._call("GET", self._path(), query=query), self._model() + "List")

    def delete(self, name):
        # metav1.DeleteOptions{} as client-go sends it (every field omitempty)
        return self._call("DELETE", self._path(name), body={})

    def delete_collection(self, label_selector=None):
        query = {"labelSelector": label_selector} if label_selector else None
        return self._call("DELETE", self._path(), body={}, query=query)


class PersistentVolumeClient(_CoreV1Client):
    """c.CoreV1().PersistentVolumes()"""
    PLURAL = "persistentvolumes"
    KIND = "PersistentVolume"
    NAMESPACED = False


class PersistentVolumeClaimClient(_CoreV1Client):
    """c.CoreV1().PersistentVolumeClaims(ns); ns "" is all namespaces (List only)."""
    PLURAL = "persistentvolumeclaims"
    KIND = "PersistentVolumeClaim"


def persistent_volumes(api_client):
    """c.CoreV1().PersistentVolumes()"""
    return PersistentVolumeClient(api_client)


def persistent_volume_claims(api_client, ns):
    """c.CoreV1().PersistentVolumeClaims(ns)"""
    return PersistentVolumeClaimClient(api_client, ns)


# --------------------------------------------------------------------------- configs


class PersistentVolumeConfig:
    """e2epv.PersistentVolumeConfig"""

    def __init__(self, NamePrefix="", Labels=None, PVSource=None, Prebind=None,
                 ReclaimPolicy="", StorageClassName="", NodeAffinity=None, VolumeMode=None,
                 AccessModes=None, Capacity=""):
        self.NamePrefix = NamePrefix
        self.Labels = Labels
        self.PVSource = PVSource or {}  # v1.PersistentVolumeSource: {"csi": V1CSI...}
        self.Prebind = Prebind
        self.ReclaimPolicy = ReclaimPolicy
        self.StorageClassName = StorageClassName
        self.NodeAffinity = NodeAffinity
        self.VolumeMode = VolumeMode
        self.AccessModes = list(AccessModes or [])
        self.Capacity = Capacity


class PersistentVolumeClaimConfig:
    """e2epv.PersistentVolumeClaimConfig"""

    def __init__(self, Name="", NamePrefix="", ClaimSize="", AccessModes=None,
                 Annotations=None, Selector=None, StorageClassName=None, VolumeMode=None):
        self.Name = Name
        self.NamePrefix = NamePrefix
        self.ClaimSize = ClaimSize
        self.AccessModes = list(AccessModes or [])
        self.Annotations = Annotations
        self.Selector = Selector
        self.StorageClassName = StorageClassName  # *string: None is nil
        self.VolumeMode = VolumeMode


def make_persistent_volume(pv_config):
    """MakePersistentVolume: a PV definition; with a Prebind claim the PV has a ClaimRef
    (whose name CreatePVCPV fills in). The config is taken by value, as in Go."""
    access_modes = list(pv_config.AccessModes) or [READ_WRITE_ONCE]
    name_prefix = pv_config.NamePrefix or "pv-"
    reclaim_policy = pv_config.ReclaimPolicy or RECLAIM_RETAIN
    capacity = pv_config.Capacity or "2Gi"
    claim_ref = None
    if pv_config.Prebind is not None:
        claim_ref = client.V1ObjectReference(
            kind="PersistentVolumeClaim", api_version="v1",
            name=pv_config.Prebind.metadata.name,
            namespace=pv_config.Prebind.metadata.namespace,
            uid=pv_config.Prebind.metadata.uid)
    spec = client.V1PersistentVolumeSpec(
        persistent_volume_reclaim_policy=reclaim_policy,
        capacity={"storage": capacity},
        access_modes=access_modes,
        claim_ref=claim_ref,
        storage_class_name=pv_config.StorageClassName or None,  # string, omitempty
        node_affinity=pv_config.NodeAffinity,
        volume_mode=pv_config.VolumeMode)
    # v1.PersistentVolumeSource is embedded (inlined) in the spec
    for attr, value in pv_config.PVSource.items():
        setattr(spec, attr, value)
    return client.V1PersistentVolume(
        metadata=client.V1ObjectMeta(
            generate_name=name_prefix,
            labels=dict(pv_config.Labels) if pv_config.Labels is not None else None,
            annotations={VOLUME_GID_ANNOTATION_KEY: "777"}),
        spec=spec)


def make_persistent_volume_claim(cfg, ns):
    """MakePersistentVolumeClaim (the config is taken by value, as in Go)."""
    access_modes = list(cfg.AccessModes) or [READ_WRITE_ONCE]
    claim_size = cfg.ClaimSize or "2Gi"
    name_prefix = cfg.NamePrefix or "pvc-"
    volume_mode = cfg.VolumeMode
    if volume_mode is not None and volume_mode == "":
        logf("Warning: Making PVC: VolumeMode specified as invalid empty string, treating "
             "as nil")
        volume_mode = None
    return client.V1PersistentVolumeClaim(
        metadata=client.V1ObjectMeta(
            name=cfg.Name or None, generate_name=name_prefix, namespace=ns,
            annotations=cfg.Annotations),
        spec=client.V1PersistentVolumeClaimSpec(
            selector=cfg.Selector,
            access_modes=access_modes,
            resources=client.V1ResourceRequirements(requests={"storage": claim_size}),
            storage_class_name=cfg.StorageClassName,
            volume_mode=volume_mode))


# --------------------------------------------------------------------------- create / delete


def make_pvc_key(ns, name):
    """makePvcKey: a types.NamespacedName"""
    return (ns, name)


def create_pv(api_client, pv):
    """createPV / CreatePV: (pv, error text or None). wait.PollImmediateWithContext(29s,
    timeouts.PVCreate): only GCP's quota error is retried, any other Create error ends the
    poll at once."""
    pvs = persistent_volumes(api_client)
    deadline = time.monotonic() + PV_CREATE_TIMEOUT
    last_create_err = None
    err = None
    while True:
        try:
            result_pv = pvs.create(pv)
            last_create_err = None
            break
        except ApiException as e:
            last_create_err = e
            if "googleapi: Error 403: Quota exceeded for quota group" not in describe_error(e):
                err = describe_error(e)  # the condition's error ends the poll
                break
        if time.monotonic() + 29 > deadline:
            err = "timed out waiting for the condition"
            break
        time.sleep(29)
    # if we have an error from creating the PV, use that instead of a timeout error
    if last_create_err is not None:
        return None, "PV Create API error: %s" % err
    if err is not None:
        return None, "PV Create API error: %s" % err
    return result_pv, None


def create_pvc(api_client, ns, pvc):
    """CreatePVC: (pvc, error text or None)."""
    try:
        return persistent_volume_claims(api_client, ns).create(pvc), None
    except ApiException as err:
        return None, "PVC Create API error: %s" % describe_error(err)


def create_pv_pvc(api_client, pv_config, pvc_config, ns, pre_bind):
    """CreatePVPVC: a PV followed by the PVC; with pre_bind the PVC names the PV in
    spec.volumeName. Returns (pv, pvc, error text or None)."""
    pre_bind_msg = " pre-bound" if pre_bind else ""
    logf("Creating a PV followed by a%s PVC", pre_bind_msg)

    # make the pv and pvc definitions
    pv = make_persistent_volume(pv_config)
    pvc = make_persistent_volume_claim(pvc_config, ns)

    # instantiate the pv
    pv, err = create_pv(api_client, pv)
    if err is not None:
        return None, None, err
    # instantiate the pvc, handle pre-binding by VolumeName if needed
    if pre_bind:
        pvc.spec.volume_name = pv.metadata.name
    pvc, err = create_pvc(api_client, ns, pvc)
    if err is not None:
        return pv, None, err
    return pv, pvc, None


def create_pvs_pvcs(numpvs, numpvcs, api_client, ns, pv_config, pvc_config):
    """CreatePVsPVCs: (PVMap, PVCMap, error text or None); min(numpvs, numpvcs) pairs with
    CreatePVPVC, then the extra PVs or PVCs."""
    pv_map = {}
    pvc_map = {}
    extra_pvcs = 0
    extra_pvs = numpvs - numpvcs
    if extra_pvs < 0:
        extra_pvcs = -extra_pvs
        extra_pvs = 0
    pvs_to_create = numpvs - extra_pvs  # want the min(numpvs, numpvcs)

    # create pvs and pvcs
    for _ in range(pvs_to_create):
        pv, pvc, err = create_pv_pvc(api_client, pv_config, pvc_config, ns, False)
        if err is not None:
            return pv_map, pvc_map, err
        pv_map[pv.metadata.name] = None
        pvc_map[make_pvc_key(ns, pvc.metadata.name)] = None

    # create extra pvs or pvcs as needed
    for _ in range(extra_pvs):
        pv, err = create_pv(api_client, make_persistent_volume(pv_config))
        if err is not None:
            return pv_map, pvc_map, err
        pv_map[pv.metadata.name] = None
    for _ in range(extra_pvcs):
        pvc, err = create_pvc(api_client, ns, make_persistent_volume_claim(pvc_config, ns))
        if err is not None:
            return pv_map, pvc_map, err
        pvc_map[make_pvc_key(ns, pvc.metadata.name)] = None
    return pv_map, pvc_map, None


def delete_persistent_volume(api_client, pv_name):
    """DeletePersistentVolume: None or the error text (NotFound is no error)."""
    if api_client is not None and pv_name:
        logf("Deleting PersistentVolume %r", pv_name)
        try:
            persistent_volumes(api_client).delete(pv_name)
        except ApiException as err:
            if not is_not_found(err):
                return "PV Delete API error: %s" % describe_error(err)
    return None


def delete_persistent_volume_claim(api_client, pvc_name, ns):
    """DeletePersistentVolumeClaim: None or the error text (NotFound is no error)."""
    if api_client is not None and pvc_name:
        logf("Deleting PersistentVolumeClaim %r", pvc_name)
        try:
            persistent_volume_claims(api_client, ns).delete(pvc_name)
        except ApiException as err:
            if not is_not_found(err):
                return "PVC Delete API error: %s" % describe_error(err)
    return None


def pv_pvc_map_cleanup(api_client, ns, pvols, claims):
    """PVPVCMapCleanup: deletes the claims and then the PVs of the maps; an entry is removed
    from its map when its Delete succeeds. Returns the list of error texts."""
    errs = []
    for pvc_key in list(claims or {}):
        err = delete_persistent_volume_claim(api_client, pvc_key[1], ns)
        if err is not None:
            errs.append("failed to delete PVC %r: %s" % (pvc_key[1], err))
        else:
            del claims[pvc_key]
    for pv_key in list(pvols or {}):
        err = delete_persistent_volume(api_client, pv_key)
        if err is not None:
            errs.append("failed to delete PV %r: %s" % (pv_key, err))
        else:
            del pvols[pv_key]
    return errs


# --------------------------------------------------------------------------- gomega


def eventually_state(get, match, timeout, type_name, wrap, polling=GOMEGA_POLL):
    """framework.Gomega().Eventually(ctx, framework.HandleRetry(get)).WithTimeout(timeout)
    .Should(framework.MakeMatcher(match)): ``get()`` returns the value or raises
    ApiException, which get's caller wraps as ``wrap: <err>`` (fmt.Errorf("%s: %w"));
    HandleRetry: an error ShouldRetry allows is a failed attempt, any other stops at once
    ("Unexpected final error while getting <type_name>"); ``match(value)`` returns None
    when satisfied, else the failure message. The first attempt is immediate. Returns None
    or the error text."""
    start = time.monotonic()
    deadline = start + timeout
    last = "no attempt"
    while True:
        try:
            value = get()
        except ApiException as err:
            if not should_retry(err):
                return "Unexpected final error while getting %s: %s: %s" % (
                    type_name, wrap, describe_error(err))
            last = "%s: %s" % (wrap, describe_error(err))
        else:
            failure = match(value)
            if failure is None:
                return None
            last = failure
        if time.monotonic() + polling > deadline:
            return "Timed out after %.3fs.\n%s" % (time.monotonic() - start, last)
        time.sleep(polling)
