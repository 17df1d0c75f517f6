"""A small Python stand-in for the parts of the upstream e2e framework the ported tests use.

Upstream: kubernetes/kubernetes test/e2e/framework (Go, Ginkgo, client-go). Everything here
talks to the server only through the official Python client (python3-kubernetes): typed API
methods, ``ApiClient.call_api`` for requests the typed methods cannot express (a merge patch,
a custom Accept header, a trailing-slash discovery path), and ``kubernetes.watch.Watch``.

What is emulated and how:

* ``conformance(codename)``: marks a test with its upstream codename (verbatim).
* ``Framework``: ``framework.NewDefaultFramework(baseName)``. Before each test it creates the
  per-test namespace ``<baseName>-<random 0..9999>`` with the labels upstream sets; after the
  test it deletes every namespace it created (the framework one and those made with
  ``create_namespace``) with propagationPolicy Background, without waiting for them to go away
  (Shepherd has no namespace controller yet, so a deleted namespace stays Terminating).
  Upstream then waits for the ServiceAccount ``default`` and the ConfigMap ``kube-root-ca.crt``
  in the new namespace; both waits are guarded upstream by ``TestContext.VerifyServiceAccount``
  and are skipped here as with ``--e2e-verify-service-account=false``, because the controllers
  that create those objects do not exist yet.
* ``GoWireApiClient``: the official ``ApiClient`` with one change: timestamps are written the
  way client-go writes them (``metav1.Time`` as RFC 3339 seconds, ``metav1.MicroTime`` with six
  fractional digits), instead of Python's ``isoformat()`` (which drops a zero fraction and
  writes ``+00:00``), so request bodies match what the upstream Go test sends.
* ``semantic_equal``: ``apiequality.Semantic.DeepEqual`` on typed objects: nil and empty
  maps/slices are equal, and TypeMeta is ignored (client-go's typed clients clear it when
  decoding, so upstream never compares it).
* ``Watcher``: a ``watch.Interface`` (result channel) over ``kubernetes.watch.Watch``; a plain
  watch ends when the server closes it (like client-go's StreamWatcher), a ``retry=True``
  watcher re-opens from the last resourceVersion like ``watchtools.NewRetryWatcher``.
"""

import base64
import datetime
import functools
import json
import queue
import random
import re
import socket
import string
import threading
import time
import uuid

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

# --------------------------------------------------------------------------- codename marker


def conformance(codename):
    """Decorator recording the upstream codename of a ported conformance test."""

    def deco(fn):
        fn = pytest.mark.conformance(codename)(fn)
        fn.codename = codename
        return fn

    return deco


def fail(msg, *args):
    """framework.Failf"""
    pytest.fail(msg % args if args else msg, pytrace=False)


def logf(msg, *args):
    """framework.Logf (captured by pytest, shown for failing tests)."""
    ts = datetime.datetime.now().strftime("%H:%M:%S.%f")[:-3]
    print("%s INFO: %s" % (ts, msg % args if args else msg), flush=True)


def by(step):
    """ginkgo.By"""
    ts = datetime.datetime.now().strftime("%H:%M:%S.%f")[:-3]
    print("%s STEP: %s" % (ts, step), flush=True)


# --------------------------------------------------------------------------- client


# metav1.MicroTime fields of the kinds used by the ported tests (snake_case model attribute
# names and camelCase JSON names); every other timestamp is a metav1.Time.
MICRO_TIME_FIELDS = {
    "event_time", "eventTime",
    "last_observed_time", "lastObservedTime",
    "acquire_time", "acquireTime",
    "renew_time", "renewTime",
}


def go_time(dt, micro):
    if dt.tzinfo is not None:
        dt = dt.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    # (strftime's %Y does not zero-pad years below 1000, e.g. time.Time{} is year 1)
    text = "%04d-%02d-%02dT%02d:%02d:%02d" % (dt.year, dt.month, dt.day, dt.hour, dt.minute,
                                              dt.second)
    if micro:
        return text + ".%06dZ" % dt.microsecond
    return text + "Z"


def utc(*args):
    return datetime.datetime(*args, tzinfo=datetime.timezone.utc)


def unix_time(seconds):
    """time.Unix(seconds, 0)"""
    return datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)


GO_ZERO_TIME = utc(1, 1, 1)  # time.Time{}


class GoWireApiClient(client.ApiClient):
    """The official ApiClient, serialising timestamps as client-go does (see module doc)."""

    def sanitize_for_serialization(self, obj, _field=None):
        if obj is None:
            return None
        if isinstance(obj, datetime.datetime):
            return go_time(obj, _field in MICRO_TIME_FIELDS)
        if isinstance(obj, (list, tuple)):
            return [self.sanitize_for_serialization(x, _field) for x in obj]
        if isinstance(obj, dict):
            return {k: self.sanitize_for_serialization(v, k) for k, v in obj.items()}
        if hasattr(obj, "openapi_types") and hasattr(obj, "attribute_map"):
            out = {}
            for attr in obj.openapi_types:
                value = getattr(obj, attr)
                if value is None:
                    continue
                if value == "" and isinstance(obj, client.V1ObjectMeta):
                    continue  # every ObjectMeta string is `json:",omitempty"` in Go
                out[obj.attribute_map[attr]] = self.sanitize_for_serialization(value, attr)
            return out
        return super().sanitize_for_serialization(obj)

    def request(self, method, url, query_params=None, headers=None, post_params=None,
                body=None, _preload_content=True, _request_timeout=None):
        # A default timeout so that a request the server never answers fails the test
        # instead of hanging the run (watch streams read in background threads instead).
        if _request_timeout is None and _preload_content:
            _request_timeout = (10, 60)
        return super().request(method, url, query_params=query_params, headers=headers,
                               post_params=post_params, body=body,
                               _preload_content=_preload_content,
                               _request_timeout=_request_timeout)


def new_api_client(base_url):
    cfg = client.Configuration()
    cfg.host = base_url
    # The concurrent-watch test keeps ~100 watch connections open at once.
    cfg.connection_pool_maxsize = 256
    return GoWireApiClient(configuration=cfg)


_DESERIALIZER = client.ApiClient()


class _Raw:
    def __init__(self, data):
        self.data = data


def to_model(obj, model_name):
    """Decode a JSON-shaped dict into a client model (as a Go struct literal would be)."""
    return _DESERIALIZER.deserialize(_Raw(json.dumps(obj)), model_name)


def raw_call(api_client, method, path, body=None, headers=None, query=None,
             response_type="object"):
    """ApiClient.call_api for requests the typed methods cannot express."""
    header_params = {"Accept": "application/json", "Content-Type": "application/json"}
    header_params.update(headers or {})
    return api_client.call_api(
        path, method, path_params={}, query_params=list((query or {}).items()),
        header_params=header_params, body=body, response_type=response_type,
        auth_settings=["BearerToken"], _return_http_data_only=True, _preload_content=True)


# --------------------------------------------------------------------------- errors


_REASON_FOR_CODE = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
    405: "MethodNotAllowed", 406: "NotAcceptable", 409: "Conflict", 410: "Expired",
    415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests",
    500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout",
}


def status_of(err):
    """The metav1.Status carried by an API error (apierrors.APIStatus)."""
    body = {}
    if isinstance(err, ApiException) and err.body:
        try:
            body = json.loads(err.body)
        except (ValueError, TypeError):
            body = {}
    if not isinstance(body, dict) or body.get("kind") != "Status":
        body = {"code": getattr(err, "status", 0),
                "reason": _REASON_FOR_CODE.get(getattr(err, "status", 0), "")}
    return body


def reason_for(err):
    return status_of(err).get("reason", "")


def is_not_found(err):
    return isinstance(err, ApiException) and (
        reason_for(err) == "NotFound" or (reason_for(err) == "" and err.status == 404))


def is_conflict(err):
    return isinstance(err, ApiException) and (
        reason_for(err) == "Conflict" or (reason_for(err) == "" and err.status == 409))


def is_invalid(err):
    return isinstance(err, ApiException) and (
        reason_for(err) == "Invalid" or (reason_for(err) == "" and err.status == 422))


def is_already_exists(err):
    return isinstance(err, ApiException) and reason_for(err) == "AlreadyExists"


def describe_error(err):
    if isinstance(err, ApiException):
        return "%s %s: %s" % (err.status, err.reason, (err.body or "")[:600])
    return repr(err)


def expect_no_error(fn, *args, explain="", **kwargs):
    """framework.ExpectNoError around one API call; returns its result."""
    try:
        return fn(*args, **kwargs)
    except ApiException as err:
        error = err
    fail("%s: unexpected error: %s", explain or getattr(fn, "__name__", "call"),
         describe_error(error))


def retry_on_conflict(fn):
    """retry.RetryOnConflict(retry.DefaultRetry, fn): 5 steps, 10ms, jitter 0.1."""
    last = None
    for step in range(5):
        try:
            return fn()
        except ApiException as err:
            if not is_conflict(err):
                raise
            last = err
            time.sleep(0.01 * (1 + random.random() * 0.1))
    raise last


# --------------------------------------------------------------------------- comparisons


def _normalise(value):
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = _normalise(v)
            if v is not None:
                out[k] = v
        return out or None
    if isinstance(value, (list, tuple)):
        out = [_normalise(v) for v in value]
        return out or None
    return value


def _plain(obj):
    if hasattr(obj, "to_dict"):
        obj = obj.to_dict()
    return obj


def semantic_equal(expected, actual):
    """apiequality.Semantic.DeepEqual for typed objects (see module doc)."""
    a, b = _plain(expected), _plain(actual)
    if isinstance(a, dict) and isinstance(b, dict):
        a = {k: v for k, v in a.items() if k not in ("api_version", "kind")}
        b = {k: v for k, v in b.items() if k not in ("api_version", "kind")}
    return _normalise(a) == _normalise(b)


def object_diff(expected, actual):
    a, b = _normalise(_plain(expected)), _normalise(_plain(actual))
    lines = []

    def walk(x, y, path):
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y), key=str):
                if k in ("api_version", "kind") and path == "":
                    continue
                walk(x.get(k), y.get(k), "%s.%s" % (path, k))
        elif x != y:
            lines.append("%s: expected %r, got %r" % (path or ".", x, y))

    walk(a, b, "")
    return "\n".join(lines) or "(no difference)"


_RV_WELL_FORMED = re.compile(r"^[1-9][0-9]*$")


def compare_resource_version(a, b):
    """k8s.io/apimachinery/pkg/util/resourceversion.CompareResourceVersion.

    Gomega's Expect on its (int, error) result fails when the error is non-nil.
    """
    for rv in (a, b):
        if not isinstance(rv, str) or not _RV_WELL_FORMED.match(rv):
            fail("resource version is not well formed: %r", rv)
    if len(a) != len(b):
        return -1 if len(a) < len(b) else 1
    return (a > b) - (a < b)


def expect_valid_resource_version(obj):
    """gomega.Expect(obj).To(apimachineryutils.HaveValidResourceVersion())"""
    rv = obj.metadata.resource_version if obj.metadata else None
    if rv is None or not re.match(r"^[+-]?[0-9]+$", rv):
        fail("expected a valid resource version, got %r: the resource version is not a valid "
             "integer", rv)
    val = int(rv)
    if val < 0:
        fail("expected a valid resource version, got %r: the resource version is a negative "
             "number", rv)
    if val.bit_length() > 128:
        fail("expected a valid resource version, got %r: resource version requires %d bits "
             "(more than 128)", rv, val.bit_length())


# --------------------------------------------------------------------------- random names


_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def rand_string(n):
    """k8s.io/apimachinery/pkg/util/rand.String"""
    return "".join(random.choice(_ALPHANUMS) for _ in range(n))


def new_uuid():
    """k8s.io/apimachinery/pkg/util/uuid.NewUUID (a version 1 UUID)."""
    return str(uuid.uuid1())


def random_suffix():
    """framework.RandomSuffix"""
    return str(random.randrange(10000))


def b64(data):
    """How encoding/json writes a []byte."""
    if isinstance(data, str):
        data = data.encode()
    return base64.b64encode(data).decode()


def unb64(text):
    """How encoding/json reads a []byte."""
    return base64.b64decode(text or "")


# --------------------------------------------------------------------------- framework


RUN_ID = new_uuid()

# admissionapi levels set by the upstream describe blocks (f.NamespacePodSecurityLevel).
POD_SECURITY_RESTRICTED = "restricted"


class Framework:
    """framework.NewDefaultFramework(baseName) for one test."""

    def __init__(self, api_client, base_name, pod_security_level=POD_SECURITY_RESTRICTED):
        self.api_client = api_client
        self.base_name = base_name
        self.pod_security_level = pod_security_level
        self.core = client.CoreV1Api(api_client)
        self.namespaces_to_delete = []
        self.namespace = None

    # f.CreateNamespace -> framework.CreateTestingNS
    def create_namespace(self, base_name, labels=None):
        labels = dict(labels or {})
        labels["pod-security.kubernetes.io/enforce"] = self.pod_security_level
        labels["pod-security.kubernetes.io/warn"] = self.pod_security_level
        labels["pod-security.kubernetes.io/audit"] = self.pod_security_level
        labels["e2e-run"] = RUN_ID
        name = "%s-%s" % (base_name, random_suffix())
        deadline = time.monotonic() + 30  # SingleCallTimeout
        last = None
        while time.monotonic() < deadline:
            body = client.V1Namespace(metadata=client.V1ObjectMeta(name=name, labels=labels),
                                      status=client.V1NamespaceStatus())
            try:
                ns = self.core.create_namespace(body)
            except ApiException as err:
                last = err
                if is_already_exists(err):
                    name = "%s-%s" % (base_name, random_suffix())  # regenerate on conflict
                else:
                    logf("Unexpected error while creating namespace: %s", describe_error(err))
                time.sleep(2)  # framework.Poll
                continue
            self.namespaces_to_delete.append(ns)
            # Upstream waits here for ServiceAccount "default" and ConfigMap
            # "kube-root-ca.crt" (TestContext.VerifyServiceAccount); skipped, see module doc.
            return ns
        fail("failed to create namespace %s: %s", name, describe_error(last))

    def before_each(self):
        by("Building a namespace api object, basename %s" % self.base_name)
        self.namespace = self.create_namespace(self.base_name,
                                               {"e2e-framework": self.base_name})
        self.unique_name = self.namespace.metadata.name
        logf("Skipping waiting for service account")

    def after_each(self):
        errors = {}
        for ns in self.namespaces_to_delete:
            name = ns.metadata.name
            by('Destroying namespace "%s" for this suite.' % name)
            # Stand-in for the namespace controller (not built yet): the namespace's pods
            # are deleted so the nodes stop their containers.
            try:
                self.core.delete_collection_namespaced_pod(name)
            except ApiException as err:
                if not is_not_found(err):
                    errors[name] = describe_error(err)
            try:
                self.core.delete_namespace(
                    name, body=client.V1DeleteOptions(propagation_policy="Background"))
            except ApiException as err:
                if not is_not_found(err):
                    errors[name] = describe_error(err)
        if errors:
            fail("Couldn't delete ns: %s", errors)


# --------------------------------------------------------------------------- watches


class WatchClosed(Exception):
    pass


class _ServerClosed(Exception):
    pass


class _Stopped(Exception):
    pass


_CLOSED = object()


class Watcher:
    """A watch.Interface: ``next(timeout)`` reads its result channel.

    ``func`` is a typed list method (e.g. ``CoreV1Api.list_namespaced_config_map``); the
    remaining arguments are passed to it as in ``Watch.stream``.
    """

    def __init__(self, func, *args, retry=False, **kwargs):
        self._retry = retry
        self._lock = threading.Lock()
        self._stopped = False
        self._opened = 0
        self._last_open = -1e9
        self._resp = None
        self.error = None
        # Set once the first watch request has returned (or failed), like the informerStarted
        # channel upstream closes in a ListWatch's WatchFunc (`defer ...close(...)`).
        self.started = threading.Event()
        self._queue = queue.Queue(maxsize=100)
        self._watch = watch.Watch()

        @functools.wraps(func)
        def opener(*a, **kw):
            with self._lock:
                if self._stopped:
                    raise _Stopped()
                if self._opened and not self._retry:
                    # client-go's StreamWatcher closes its channel when the server ends the
                    # response; it does not re-open the watch.
                    raise _ServerClosed()
                self._opened += 1
                wait = self._last_open + 1.0 - time.monotonic()
            if wait > 0:
                # RetryWatcher's minRestartDelay (1s) between watch restarts
                time.sleep(wait)
            with self._lock:
                self._last_open = time.monotonic()
                if self._stopped:
                    raise _Stopped()
            try:
                resp = func(*a, **kw)
            finally:
                self.started.set()
            with self._lock:
                self._resp = resp
                stopped = self._stopped
            if stopped:
                self._shutdown(resp)
            return resp

        self._thread = threading.Thread(target=self._run, args=(opener, args, kwargs),
                                        daemon=True)
        self._thread.start()

    def _run(self, opener, args, kwargs):
        try:
            for event in self._watch.stream(opener, *args, **kwargs):
                if event["type"] == "BOOKMARK":
                    continue  # RetryWatcher consumes bookmarks; plain watches don't ask for them
                while True:
                    if self._stopped:
                        return
                    try:
                        self._queue.put(event, timeout=0.2)
                        break
                    except queue.Full:
                        continue
        except (_Stopped, _ServerClosed):
            pass
        except Exception as err:  # a failed request or an ERROR event
            if not self._stopped:
                self.error = err
        finally:
            while True:
                try:
                    self._queue.put(_CLOSED, timeout=0.2)
                    break
                except queue.Full:
                    if self._stopped:
                        break

    @staticmethod
    def _shutdown(resp):
        conn = getattr(resp, "_connection", None)
        sock = getattr(conn, "sock", None)
        if sock is None:
            try:
                sock = resp._fp.fp.raw._sock
            except AttributeError:
                sock = None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def next(self, timeout):
        """The next event, ``None`` after ``timeout`` seconds; raises WatchClosed."""
        try:
            item = self._queue.get(timeout=max(timeout, 0))
        except queue.Empty:
            return None
        if item is _CLOSED:
            self._queue.put(_CLOSED)  # stays closed
            raise WatchClosed(describe_error(self.error) if self.error
                              else "the server ended the watch response")
        return item

    def stop(self):
        with self._lock:
            self._stopped = True
            resp = self._resp
        self._watch.stop()
        if resp is not None:
            self._shutdown(resp)
        # unblock a producer waiting on a full channel
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass


def event_summary(event):
    obj = event.get("object")
    meta = getattr(obj, "metadata", None)
    if meta is not None:
        return "%s %s/%s rv=%s" % (event["type"], meta.namespace, meta.name,
                                   meta.resource_version)
    return "%s %r" % (event["type"], event.get("raw_object"))


# --------------------------------------------------------------------------- nodes
# test/e2e/framework/node (resource.go, wait.go, helper.go) and framework/util.go


POLL = 2.0                 # framework.Poll
SINGLE_CALL_TIMEOUT = 300  # framework.SingleCallTimeout (5 min)
ALLOWED_NOT_READY_NODES = 0  # framework.TestContext.AllowedNotReadyNodes (flag default)

# pkg/controller/nodelifecycle's taint templates (key and effect are what MatchTaint compares)
_UNREACHABLE_TAINT = ("node.kubernetes.io/unreachable", "NoExecute")
_NOT_READY_TAINT = ("node.kubernetes.io/not-ready", "NoExecute")


def _taints(node):
    return (node.spec.taints if node.spec is not None else None) or []


def _conditions(node):
    return (node.status.conditions if node.status is not None else None) or []


def is_condition_set_as_expected(node, condition_type, want_true, silent=False):
    """e2enode.IsConditionSetAsExpected / IsConditionSetAsExpectedSilent"""
    name = node.metadata.name
    for cond in _conditions(node):
        if cond.type != condition_type:
            continue
        if cond.type == "Ready":
            # For NodeReady the NodeController's taints must be gone as well.
            taints = _taints(node)
            has_nc_taints = any((t.key, t.effect) in (_UNREACHABLE_TAINT, _NOT_READY_TAINT)
                                for t in taints)
            if want_true:
                if cond.status == "True" and not has_nc_taints:
                    return True
                if not silent:
                    if not has_nc_taints:
                        logf("Condition %s of node %s is %s instead of %s. Reason: %s, message: %s",
                             condition_type, name, cond.status == "True", want_true, cond.reason,
                             cond.message)
                    else:
                        logf("Condition %s of node %s is %s, but Node is tainted by "
                             "NodeController with %s. Failure", condition_type, name,
                             cond.status == "True", taints)
                return False
            # wantFalse (upstream: "TODO: check if the Node is tainted once we enable NC
            # notReady/unreachable taints by default")
            if cond.status != "True":
                return True
            if not silent:
                logf("Condition %s of node %s is %s instead of %s. Reason: %s, message: %s",
                     condition_type, name, cond.status == "True", want_true, cond.reason,
                     cond.message)
            return False
        if (want_true and cond.status == "True") or (not want_true and cond.status != "True"):
            return True
        if not silent:
            logf("Condition %s of node %s is %s instead of %s. Reason: %s, message: %s",
                 condition_type, name, cond.status == "True", want_true, cond.reason, cond.message)
        return False
    if not silent:
        logf("Couldn't find condition %s on node %s", condition_type, name)
    return False


def is_node_ready(node):
    """e2enode.IsNodeReady: Ready, and NetworkUnavailable unset or false."""
    node_ready = is_condition_set_as_expected(node, "Ready", True)
    network_ready = (all(c.type != "NetworkUnavailable" for c in _conditions(node)) or
                     is_condition_set_as_expected(node, "NetworkUnavailable", False, silent=True))
    return node_ready and network_ready


def is_node_schedulable(node):
    """e2enode.IsNodeSchedulable"""
    if node is None:
        return False
    return not (node.spec is not None and node.spec.unschedulable) and is_node_ready(node)


def is_node_untainted(node):
    """e2enode.isNodeUntainted: a pod without tolerations tolerates every NoSchedule and
    NoExecute taint of the node (i.e. there are none)."""
    return not any(t.effect in ("NoSchedule", "NoExecute") for t in _taints(node))


def all_nodes_ready(core, timeout):
    """e2enode.AllNodesReady: returns an error message or None."""
    logf("Waiting up to %ss for all (but %d) nodes to be ready", timeout,
         ALLOWED_NOT_READY_NODES)
    not_ready = []
    deadline = time.monotonic() + timeout
    while True:  # wait.PollUntilContextTimeout(ctx, framework.Poll, timeout, true, ...)
        not_ready = []
        try:
            nodes = core.list_node()
        except ApiException as err:
            return "checking for ready nodes: %s" % describe_error(err)
        for node in nodes.items:
            if not is_condition_set_as_expected(node, "Ready", True):
                not_ready.append(node)
        if len(not_ready) <= ALLOWED_NOT_READY_NODES:
            break
        if time.monotonic() + POLL > deadline:
            break
        time.sleep(POLL)
    if len(not_ready) > ALLOWED_NOT_READY_NODES:
        return "checking for ready nodes: Not ready nodes: %r" % "".join(
            ", " + n.metadata.name for n in not_ready)
    return None


def get_ready_schedulable_nodes(core):
    """e2enode.GetReadySchedulableNodes: (node list, error message or None)."""
    # waitListSchedulableNodes: PollUntilContextTimeout(poll, singleCallTimeout, immediate)
    # whose condition returns the List error, which ends the poll at once.
    try:
        nodes = core.list_node(field_selector="spec.unschedulable=false")
    except ApiException as err:
        return None, ("listing schedulable nodes error: error: %s. Non-retryable failure or "
                      "timed out while listing nodes for e2e cluster" % describe_error(err))
    nodes.items = [n for n in nodes.items if is_node_schedulable(n) and is_node_untainted(n)]
    if not nodes.items:
        return None, "there are currently no ready, schedulable nodes in the cluster"
    return nodes, None


def check_testing_ns_deleted_except(core, skip):
    """framework.CheckTestingNSDeletedExcept: error message or None."""
    timeout = 60 * 60
    logf("Waiting for terminating namespaces to be deleted...")
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            namespaces = core.list_namespace()
        except ApiException as err:
            logf("Listing namespaces failed: %s", describe_error(err))
            time.sleep(15)
            continue
        terminating = 0
        for ns in namespaces.items:
            if ns.metadata.name.startswith("e2e-tests-") and ns.metadata.name != skip:
                if ns.status is not None and ns.status.phase == "Active":
                    return "Namespace %s is active" % ns.metadata.name
                terminating += 1
        if terminating == 0:
            return None
        time.sleep(15)
    return "Waiting for terminating namespaces to be deleted timed out"
