"""A small Python stand-in for the parts of the upstream e2e framework the ported tests use.

Upstream: kubernetes/kubernetes test/e2e/framework (Go, Ginkgo, client-go). Everything here
talks to the server only through the official Python client (python3-kubernetes): typed API
methods, ``ApiClient.call_api`` for requests the typed methods cannot express (a merge patch,
a custom Accept header, a trailing-slash discovery path), and ``kubernetes.watch.Watch``.

What is emulated and how:

* ``conformance(codename)``: marks a test with its upstream codename (verbatim).
* ``Framework``: ``framework.NewDefaultFramework(baseName)``. Before each test it creates the
  per-test namespace ``<baseName>-<random 0..9999>`` with the labels upstream sets and, as
  upstream with ``TestContext.VerifyServiceAccount``, waits for the ServiceAccount ``default``
  and the ConfigMap ``kube-root-ca.crt`` in it (made by shepherd-controller-manager); after
  the test it deletes every namespace it created (the framework one and those made with
  ``create_namespace``) with propagationPolicy Background, without waiting for them to go
  away (the namespace controller empties them: pods first, then everything else).
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


# (CA, client certificate, key) for an https server; set by conftest.py once the cluster's
# PKI exists.
CLIENT_TLS = None


def new_api_client(base_url):
    cfg = client.Configuration()
    cfg.host = base_url
    if CLIENT_TLS:
        cfg.ssl_ca_cert, cfg.cert_file, cfg.key_file = CLIENT_TLS
    # The concurrent-watch test keeps ~100 watch connections open at once.
    cfg.connection_pool_maxsize = 256
    return GoWireApiClient(configuration=cfg)


def open_websocket_for_url(api_client, path, protocols):
    """test/e2e/framework/websocket OpenWebSocketForURL: a WebSocket to the API server with the
    client's credentials (websocket-client, the library the official Python client streams
    with), offering `protocols`; Origin http://localhost as upstream's helper sets it."""
    import ssl
    import websocket  # python3-websocket, a dependency of python3-kubernetes

    cfg = api_client.configuration
    url = cfg.host.replace("https://", "wss://", 1).replace("http://", "ws://", 1) + path
    sslopt = None
    if url.startswith("wss://"):
        sslopt = {"cert_reqs": ssl.CERT_REQUIRED, "ca_certs": cfg.ssl_ca_cert,
                  "certfile": cfg.cert_file, "keyfile": cfg.key_file}
    return websocket.create_connection(url, subprotocols=list(protocols), sslopt=sslopt,
                                       origin="http://localhost", timeout=60)


def websocket_receive(ws):
    """websocket.Message.Receive: the next message's bytes, or None at the end of the stream
    (io.EOF: the server closed)."""
    import websocket

    try:
        opcode, data = ws.recv_data()
    except websocket.WebSocketConnectionClosedException:
        return None
    if opcode == websocket.ABNF.OPCODE_CLOSE:
        return None
    return data


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
            return ns
        fail("failed to create namespace %s: %s", name, describe_error(last))

    def before_each(self):
        by("Building a namespace api object, basename %s" % self.base_name)
        self.namespace = self.create_namespace(self.base_name,
                                               {"e2e-framework": self.base_name})
        self.unique_name = self.namespace.metadata.name
        # TestContext.VerifyServiceAccount (on by default upstream).
        by("Waiting for a default service account to be provisioned in namespace")
        wait_for_object_in_namespace(self.core.list_namespaced_service_account, self.unique_name,
                                     "default", "service account")
        by("Waiting for kube-root-ca.crt to be provisioned in namespace")
        wait_for_object_in_namespace(self.core.list_namespaced_config_map, self.unique_name,
                                     "kube-root-ca.crt", "configmap")

    def after_each(self):
        errors = {}
        for ns in self.namespaces_to_delete:
            name = ns.metadata.name
            by('Destroying namespace "%s" for this suite.' % name)
            try:
                self.core.delete_namespace(
                    name, body=client.V1DeleteOptions(propagation_policy="Background"))
            except ApiException as err:
                if not is_not_found(err):
                    errors[name] = describe_error(err)
        if errors:
            fail("Couldn't delete ns: %s", errors)


SERVICE_ACCOUNT_PROVISION_TIMEOUT = 120.0  # framework.ServiceAccountProvisionTimeout


def wait_for_object_in_namespace(list_fn, namespace, name, what):
    """WaitForDefaultServiceAccountInNamespace / WaitForKubeRootCAInNamespace: until the
    object named `name` exists (listed by metadata.name, as upstream's list+watch)."""
    deadline = time.monotonic() + SERVICE_ACCOUNT_PROVISION_TIMEOUT
    while True:
        try:
            if list_fn(namespace, field_selector="metadata.name=" + name).items:
                return
        except ApiException as err:
            logf("listing %s %s: %s", what, name, describe_error(err))
        if time.monotonic() > deadline:
            fail("timed out waiting for %s %s in namespace %s", what, name, namespace)
        time.sleep(0.1)


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

    def _stream(self, opener, args, kwargs):
        """Events until the watch ends; a RetryWatcher restarts it from the last resource
        version after a failed request or an ERROR event other than 410 Gone."""
        while True:
            try:
                yield from self._watch.stream(opener, *args, **kwargs)
                return
            except (_Stopped, _ServerClosed):
                raise
            except Exception as err:
                if not self._retry or self._stopped or \
                        (isinstance(err, ApiException) and err.status == 410):
                    raise
                logf("Watch failed, restarting: %s", describe_error(err))
                if self._watch.resource_version is not None:
                    kwargs = dict(kwargs, resource_version=self._watch.resource_version)

    def _run(self, opener, args, kwargs):
        try:
            for event in self._stream(opener, args, kwargs):
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


# framework.TestContext.NonblockingTaints (flag default)
NONBLOCKING_TAINTS = "node-role.kubernetes.io/control-plane"
LARGE_CLUSTER_THRESHOLD = 100  # e2enode largeClusterThreshold


def _has_nonblocking_taint(node, nonblocking_taints):
    """e2enode.hasNonblockingTaint"""
    if node is None:
        return False
    keys = {k for k in nonblocking_taints.split(",") if k}
    return any(t.key in keys for t in _taints(node))


def _is_node_untainted_with_nonblocking(node, nonblocking_taints):
    """e2enode.isNodeUntaintedWithNonblocking: untainted once the nonblocking taints are
    ignored."""
    keys = {k for k in nonblocking_taints.split(",") if k}
    return not any(t.effect in ("NoSchedule", "NoExecute") and t.key not in keys
                   for t in _taints(node))


def _ready_for_tests(node, nonblocking_taints):
    """e2enode.readyForTests"""
    if _has_nonblocking_taint(node, nonblocking_taints):
        return is_node_ready(node) and _is_node_untainted_with_nonblocking(node,
                                                                           nonblocking_taints)
    return is_node_schedulable(node) and is_node_untainted(node)


def check_ready_for_tests(core, nonblocking_taints, allowed_not_ready_nodes,
                          large_cluster_threshold):
    """e2enode.CheckReadyForTests: a condition returning (done, error message or None)."""
    attempt = [0]

    def condition():
        if allowed_not_ready_nodes == -1:
            return True, None
        attempt[0] += 1
        try:
            # ResourceVersion "0", fieldSelector spec.unschedulable=false
            all_nodes = core.list_node(resource_version="0",
                                       field_selector="spec.unschedulable=false")
        except ApiException as err:
            logf("Unexpected error listing nodes: %s", describe_error(err))
            return False, (describe_error(err) if attempt[0] >= 3 else None)
        not_ready = [n for n in all_nodes.items if not _ready_for_tests(n, nonblocking_taints)]
        if not_ready and (len(not_ready) < large_cluster_threshold or attempt[0] % 10 == 0):
            logf("Unschedulable nodes= %d, maximum value for starting tests= %d",
                 len(not_ready), allowed_not_ready_nodes)
            for n in not_ready:
                logf("\t-> Node %s [[[ Ready=%s, Network(available)=%s, Taints=%s, "
                     "NonblockingTaints=%s ]]]", n.metadata.name,
                     is_condition_set_as_expected(n, "Ready", True, silent=True),
                     is_condition_set_as_expected(n, "NetworkUnavailable", False, silent=True),
                     _taints(n), nonblocking_taints)
            if len(not_ready) > allowed_not_ready_nodes:
                ready = len(all_nodes.items) - len(not_ready)
                logf("==== node wait: %d out of %d nodes are ready, max notReady allowed %d.  "
                     "Need %d more before starting.", ready, len(all_nodes.items),
                     allowed_not_ready_nodes, len(not_ready) - allowed_not_ready_nodes)
        return len(not_ready) <= allowed_not_ready_nodes, None

    return condition


def wait_for_all_nodes_schedulable(core, timeout):
    """e2enode.WaitForAllNodesSchedulable: wait.PollUntilContextTimeout(30s, timeout,
    immediate) of CheckReadyForTests. Returns None or the error text."""
    if ALLOWED_NOT_READY_NODES == -1:
        return None
    logf("Waiting up to %ss for all (but %d) nodes to be schedulable", timeout,
         ALLOWED_NOT_READY_NODES)
    condition = check_ready_for_tests(core, NONBLOCKING_TAINTS, ALLOWED_NOT_READY_NODES,
                                      LARGE_CLUSTER_THRESHOLD)
    return poll(30.0, timeout, condition, timeout_error=CONTEXT_DEADLINE)


POLL_TIMED_OUT = "timed out waiting for the condition"  # wait.ErrWaitTimeout
CONTEXT_DEADLINE = "context deadline exceeded"          # PollUntilContextTimeout's error


def poll(interval, timeout, condition, immediate=True, timeout_error=POLL_TIMED_OUT):
    """wait.PollImmediate / wait.Poll (timeout_error POLL_TIMED_OUT) and
    wait.PollUntilContextTimeout (CONTEXT_DEADLINE): condition() returns (done, error text
    or None); an error ends the poll. Returns None or the error text."""
    deadline = time.monotonic() + timeout
    if not immediate:
        time.sleep(interval)
    while True:
        done, err = condition()
        if err is not None:
            return err
        if done:
            return None
        if time.monotonic() + interval > deadline:
            return timeout_error
        time.sleep(interval)


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


# --------------------------------------------------------------------------- network
# test/e2e/framework/network (utils.go)

# e2enetwork.RegexIPv4 / RegexIPv6, verbatim (RegexIPv6 split at its top-level alternatives)
REGEX_IPV4 = r"(?:\d+)\.(?:\d+)\.(?:\d+)\.(?:\d+)"
REGEX_IPV6 = (
    r"(?:(?:(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):){6})(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):(?:(?:[0-9a-fA-F]{1,4})))|(?:(?:(?:(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9]))\.){3}(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9])))))))"
    r"|(?:(?:::(?:(?:(?:[0-9a-fA-F]{1,4})):){5})(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):(?:(?:[0-9a-fA-F]{1,4})))|(?:(?:(?:(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9]))\.){3}(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9])))))))"
    r"|(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})))?::(?:(?:(?:[0-9a-fA-F]{1,4})):){4})(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):(?:(?:[0-9a-fA-F]{1,4})))|(?:(?:(?:(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9]))\.){3}(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9])))))))"
    r"|(?:(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):){0,1}(?:(?:[0-9a-fA-F]{1,4})))?::(?:(?:(?:[0-9a-fA-F]{1,4})):){3})(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):(?:(?:[0-9a-fA-F]{1,4})))|(?:(?:(?:(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9]))\.){3}(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9])))))))"
    r"|(?:(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):){0,2}(?:(?:[0-9a-fA-F]{1,4})))?::(?:(?:(?:[0-9a-fA-F]{1,4})):){2})(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):(?:(?:[0-9a-fA-F]{1,4})))|(?:(?:(?:(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9]))\.){3}(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9])))))))"
    r"|(?:(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):){0,3}(?:(?:[0-9a-fA-F]{1,4})))?::(?:(?:[0-9a-fA-F]{1,4})):)(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):(?:(?:[0-9a-fA-F]{1,4})))|(?:(?:(?:(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9]))\.){3}(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9])))))))"
    r"|(?:(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):){0,4}(?:(?:[0-9a-fA-F]{1,4})))?::)(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):(?:(?:[0-9a-fA-F]{1,4})))|(?:(?:(?:(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9]))\.){3}(?:(?:25[0-5]|(?:[1-9]|1[0-9]|2[0-4])?[0-9])))))))"
    r"|(?:(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):){0,5}(?:(?:[0-9a-fA-F]{1,4})))?::)(?:(?:[0-9a-fA-F]{1,4})))"
    r"|(?:(?:(?:(?:(?:(?:[0-9a-fA-F]{1,4})):){0,6}(?:(?:[0-9a-fA-F]{1,4})))?::))))")


# --------------------------------------------------------------------------- pods
# test/e2e/framework/pod (pod_client.go, wait.go, resource.go, utils.go), pod/output
# (output.go), test/utils (PodRunningReady) and pkg/api/v1/pod (IsPodReady).

# framework.TimeoutContext defaults
POD_START_TIMEOUT = 5 * 60             # framework.PodStartTimeout, f.Timeouts.PodStart
POD_DELETE_TIMEOUT = 5 * 60            # f.Timeouts.PodDelete
DEFAULT_POD_DELETION_TIMEOUT = 3 * 60  # e2epod.DefaultPodDeletionTimeout

# The images the nodes have (kubelet-lite/images/build-images.sh; nothing is ever pulled).
# imageutils.BusyBox (registry.k8s.io/e2e-test-images/busybox:1.36.1-1) and
# framework.BusyBoxImage -> the busybox-static image tagged 1.36.
BUSYBOX_IMAGE = "docker.io/library/busybox:1.36"
# imageutils.GetPauseImageName() (registry.k8s.io/pause:3.10): the same reference.
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
# imageutils.Agnhost (registry.k8s.io/e2e-test-images/agnhost): the stand-in with agnhost's
# image config (Entrypoint ["/agnhost"], Cmd ["pause"]) and the subcommands the ported tests
# run, printing what agnhost prints: `pause`, `entrypoint-tester`, `etc-hosts`, `mounttest`
# and `test-webserver` (kubelet-lite/images/build-images.sh).
AGNHOST_IMAGE = "shepherd.test/agnhost-lite:1.0"

DEFAULT_NON_ROOT_USER = 1000  # e2epod.DefaultNonRootUser (GetDefaultNonRootUser on Linux)


def mixin_restricted_pod_security(pod):
    """e2epod.MustMixinRestrictedPodSecurity: the restricted profile's required fields."""
    spec = pod.spec
    if spec.security_context is None:
        spec.security_context = client.V1PodSecurityContext()
    sc = spec.security_context
    if sc.run_as_non_root is None:
        sc.run_as_non_root = True
    if sc.run_as_user is None:
        sc.run_as_user = DEFAULT_NON_ROOT_USER
    if sc.seccomp_profile is None:
        sc.seccomp_profile = client.V1SeccompProfile(type="RuntimeDefault")
    for c in (spec.containers or []) + (spec.init_containers or []):
        if c.security_context is None:
            c.security_context = client.V1SecurityContext()
        csc = c.security_context
        if csc.allow_privilege_escalation is None:
            csc.allow_privilege_escalation = False
        if csc.capabilities is None:
            csc.capabilities = client.V1Capabilities()
        if not csc.capabilities.drop:
            csc.capabilities.drop = ["ALL"]
    return pod


def new_agnhost_container(container_name, mounts, ports, *args):
    """e2epod.NewAgnhostContainer: no args means agnhost's `pause`."""
    return client.V1Container(
        name=container_name, image=AGNHOST_IMAGE, args=list(args) or ["pause"],
        volume_mounts=mounts, ports=ports, security_context=client.V1SecurityContext(),
        image_pull_policy="IfNotPresent")


def new_agnhost_pod(ns, pod_name, volumes, mounts, ports, *args):
    """e2epod.NewAgnhostPod: one agnhost container named "agnhost-container", an empty pod
    security context and terminationGracePeriodSeconds 0."""
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=pod_name, namespace=ns),
        spec=client.V1PodSpec(
            containers=[new_agnhost_container("agnhost-container", mounts, ports, *args)],
            volumes=volumes, security_context=client.V1PodSecurityContext(),
            termination_grace_period_seconds=0))


def _pod_conditions(pod):
    return (pod.status.conditions if pod.status is not None else None) or []


def get_pod_condition(pod, condition_type):
    """podutil.GetPodCondition: the condition or None."""
    for c in _pod_conditions(pod):
        if c.type == condition_type:
            return c
    return None


def is_pod_ready(pod):
    """podutil.IsPodReady / podutils.IsPodReady: condition Ready is True."""
    c = get_pod_condition(pod, "Ready")
    return c is not None and c.status == "True"


def pod_phase(pod):
    return pod.status.phase if pod.status is not None else None


def pod_running_ready(pod):
    """testutils.PodRunningReady: (ok, error message or None)."""
    if pod_phase(pod) != "Running":
        return False, ("pod '%s' on '%s' didn't have condition {%s %s}; if a pod has "
                       "Running phase, it should have Ready condition too" % (
                           pod.metadata.name, pod.spec.node_name, "Running",
                           pod_phase(pod)))
    if not is_pod_ready(pod):
        return False, ("pod '%s' on '%s' didn't have condition {Ready True}; conditions: %s"
                       % (pod.metadata.name, pod.spec.node_name,
                          [(c.type, c.status, c.reason) for c in _pod_conditions(pod)]))
    return True, None


def container_statuses(pod, init=False):
    if pod.status is None:
        return []
    return (pod.status.init_container_statuses if init else pod.status.container_statuses) or []


def container_state_name(state):
    """GetContainerState (common/node/container.go)."""
    if state is None:
        return "Unknown"
    if state.waiting is not None:
        return "Waiting"
    if state.running is not None:
        return "Running"
    if state.terminated is not None:
        return "Terminated"
    return "Unknown"


def pod_summary(pod):
    """A short rendering of a pod's status for failure messages (format.Object stand-in)."""
    if pod is None:
        return "<nil>"
    st = pod.status
    out = {"name": pod.metadata.name, "node": pod.spec.node_name,
           "phase": st.phase if st else None, "reason": st.reason if st else None,
           "message": st.message if st else None,
           "conditions": [(c.type, c.status, c.reason) for c in _pod_conditions(pod)]}
    for label, init in (("initContainerStatuses", True), ("containerStatuses", False)):
        out[label] = [{
            "name": s.name, "ready": s.ready, "restartCount": s.restart_count,
            "state": s.state.to_dict() if s.state else None,
            "lastState": s.last_state.to_dict() if s.last_state else None,
        } for s in container_statuses(pod, init)]
    return json.dumps(out, default=str)


def get_existing_container_status(statuses, name):
    """podutil.GetExistingContainerStatus: the status named ``name``, or an empty one."""
    for st in statuses or []:
        if st.name == name:
            return st
    return client.V1ContainerStatus(name="", image="", image_id="", ready=False,
                                    restart_count=0)


def _should_retry(err):
    """framework.ShouldRetry: Retry-After, Timeout, TooManyRequests, ServiceUnavailable."""
    if not isinstance(err, ApiException):
        return False
    if err.headers and err.headers.get("Retry-After"):
        return True
    return err.status in (429, 503, 504) or reason_for(err) in ("Timeout", "ServerTimeout")


class _StopTrying(Exception):
    """gomega.StopTrying"""


def _eventually_get_pod(core, ns, name, timeout, match, retry_not_found=True,
                        interval=POLL):
    """framework.Gomega().Eventually(ctx, framework.RetryNotFound(framework.GetObject(
    pods.Get, name))).WithTimeout(timeout).Should(matcher): polls (first call at once) every
    ``interval``; ``match(pod)`` returns None when satisfied, else a description of the
    mismatch, or raises _StopTrying. Returns None or the error text."""
    deadline = time.monotonic() + timeout
    last = "no attempt"
    while True:
        try:
            pod = core.read_namespaced_pod(name, ns)
        except ApiException as err:
            if not ((retry_not_found and is_not_found(err)) or _should_retry(err)):
                return "getting pod %s/%s: %s" % (ns, name, describe_error(err))
            last = describe_error(err)
        else:
            try:
                mismatch = match(pod)
            except _StopTrying as stop:
                return str(stop)
            if mismatch is None:
                return None
            last = mismatch
        if time.monotonic() + interval > deadline:
            return "Timed out after %.3fs.\n%s" % (timeout, last)
        time.sleep(interval)


def wait_for_pod_condition(core, ns, pod_name, condition_desc, timeout, condition):
    """e2epod.WaitForPodCondition: ``condition(pod)`` returns (done, error message or None);
    an error ends the wait. Returns None or the error text."""
    logf("Waiting up to %ss for pod %r in namespace %r to be %r", timeout, pod_name, ns,
         condition_desc)

    def match(pod):
        logf("Pod %r: Phase=%r, Reason=%r, readiness=%s.", pod_name, pod_phase(pod),
             pod.status.reason if pod.status else None, is_pod_ready(pod))
        done, err = condition(pod)
        if err is not None:
            raise _StopTrying(err)
        if done:
            return None
        return "expected pod to be %s, got instead:\n%s" % (condition_desc, pod_summary(pod))

    return _eventually_get_pod(core, ns, pod_name, timeout, match)


def wait_timeout_for_pod_running(core, pod_name, ns, timeout):
    """e2epod.WaitTimeoutForPodRunningInNamespace (BeRunningNoRetries)."""

    def match(pod):
        if pod_phase(pod) in ("Failed", "Succeeded"):
            raise _StopTrying("Expected pod to reach phase \"Running\", got final phase %r "
                              "instead:\n%s" % (pod_phase(pod), pod_summary(pod)))
        if pod_phase(pod) != "Running":
            return "Expected Pod to be in \"Running\"\nGot instead:\n%s" % pod_summary(pod)
        return None

    return _eventually_get_pod(core, ns, pod_name, timeout, match)


def wait_for_pod_name_running(core, pod_name, ns):
    """e2epod.WaitForPodNameRunningInNamespace"""
    return wait_timeout_for_pod_running(core, pod_name, ns, POD_START_TIMEOUT)


def wait_for_pod_running(core, pod):
    """e2epod.WaitForPodRunningInNamespace"""
    if pod_phase(pod) == "Running":
        return None
    return wait_timeout_for_pod_running(core, pod.metadata.name, pod.metadata.namespace,
                                        POD_START_TIMEOUT)


def wait_timeout_for_pod_ready(core, pod_name, ns, timeout):
    """e2epod.WaitTimeoutForPodReadyInNamespace"""

    def condition(pod):
        if pod_phase(pod) in ("Failed", "Succeeded"):
            return False, "The phase of Pod %s is %s which is unexpected." % (
                pod.metadata.name, pod_phase(pod))
        if pod_phase(pod) == "Running":
            return is_pod_ready(pod), None
        return False, None

    return wait_for_pod_condition(core, ns, pod_name, "running and ready", timeout, condition)


def wait_for_pod_terminated(core, pod_name, reason, ns):
    """e2epod.WaitForPodTerminatedInNamespace"""

    def condition(pod):
        if pod_phase(pod) == "Failed":
            if pod.status.reason == reason:
                return True, None
            return True, ("Expected pod %r in namespace %r to be terminated with reason %r, "
                          "got reason: %r" % (pod_name, ns, reason, pod.status.reason))
        return False, None

    return wait_for_pod_condition(core, ns, pod_name, "terminated with reason %s" % reason,
                                  POD_START_TIMEOUT, condition)


def wait_for_pod_no_longer_running(core, pod_name, ns, timeout=DEFAULT_POD_DELETION_TIMEOUT):
    """e2epod.WaitForPodNoLongerRunningInNamespace"""
    return wait_for_pod_condition(
        core, ns, pod_name, "completed", timeout,
        lambda pod: (pod_phase(pod) in ("Failed", "Succeeded"), None))


def wait_for_pod_success(core, pod_name, ns, timeout):
    """e2epod.WaitForPodSuccessInNamespaceTimeout"""

    def condition(pod):
        if pod.metadata.deletion_timestamp is None and pod.spec.restart_policy == "Always":
            return True, ("pod %r will never terminate with a succeeded state since its "
                          "restart policy is Always" % pod_name)
        if pod_phase(pod) == "Succeeded":
            by("Saw pod success")
            return True, None
        if pod_phase(pod) == "Failed":
            return True, "pod %r failed with status: %s" % (pod_name, pod_summary(pod))
        return False, None

    return wait_for_pod_condition(core, ns, pod_name, "Succeeded or Failed", timeout,
                                  condition)


def wait_for_pod_not_pending(core, ns, pod_name):
    """e2epod.WaitForPodNotPending"""
    return wait_for_pod_condition(core, ns, pod_name, "not pending", POD_START_TIMEOUT,
                                  lambda pod: (pod_phase(pod) != "Pending", None))


def wait_for_pod_not_found(core, pod_name, ns, timeout):
    """e2epod.WaitForPodNotFoundInNamespace: None once a Get answers NotFound."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pod = core.read_namespaced_pod(pod_name, ns)
        except ApiException as err:
            if is_not_found(err):
                return None
            if not _should_retry(err):
                return "expected pod to not be found: %s" % describe_error(err)
            last = describe_error(err)
        else:
            last = "Expected\n%s\nto be nil" % pod_summary(pod)
        if time.monotonic() + POLL > deadline:
            return "expected pod to not be found: Timed out after %.3fs.\n%s" % (timeout, last)
        time.sleep(POLL)


def wait_for_pods_running_ready(core, apps, ns, min_pods, allowed_not_ready, timeout):
    """e2epod.WaitForPodsRunningReady: all pods of ns running and ready (or succeeded, or
    failed but controlled), at least min_pods of them, and the replicas of every RC and RS
    ready. Returns None or the error text."""
    deadline = time.monotonic() + timeout
    not_ready = -1
    while True:
        not_ready = -1
        try:
            rcs = core.list_namespaced_replication_controller(ns).items
            rss = apps.list_namespaced_replica_set(ns).items
            pods = core.list_namespaced_pod(ns).items
        except ApiException as err:
            if not _should_retry(err):
                return "listing in namespace %s: %s" % (ns, describe_error(err))
            message = describe_error(err)
        else:
            replicas = sum((rc.spec.replicas or 0) for rc in rcs) + \
                sum((rs.spec.replicas or 0) for rs in rss)
            replica_ok = sum((rc.status.ready_replicas or 0) for rc in rcs) + \
                sum((rs.status.ready_replicas or 0) for rs in rss)
            n_ok, not_ready = 0, 0
            failed, other, succeeded = [], [], []
            for pod in pods:
                ok, _ = pod_running_ready(pod)
                if ok:
                    n_ok += 1
                elif pod_phase(pod) == "Succeeded":
                    succeeded.append(pod.metadata.name)
                elif pod_phase(pod) == "Failed":
                    if not any(r.controller for r in (pod.metadata.owner_references or [])):
                        failed.append(pod)
                else:
                    not_ready += 1
                    other.append(pod)
            if replica_ok == replicas and n_ok >= min_pods and not failed and not other:
                return None
            message = ("Expected all pods (need at least %d) in namespace %r to be running "
                       "and ready (except for %d).\n%d / %d pods were running and ready.\n"
                       "Expected %d pod replicas, %d are Running and Ready.\n"
                       % (min_pods, ns, allowed_not_ready, n_ok, len(pods), replicas,
                          replica_ok))
            if succeeded:
                message += "Pods that completed successfully: %s\n" % succeeded
            if failed:
                message += "Pods that failed and were not controlled by some controller:\n" + \
                    "\n".join(pod_summary(p) for p in failed) + "\n"
            if other:
                message += "Pods that were neither completed nor running:\n" + \
                    "\n".join(pod_summary(p) for p in other) + "\n"
        if time.monotonic() + POLL > deadline:
            if 0 <= not_ready <= allowed_not_ready:
                logf("Number of not-ready pods (%d) is below the allowed threshold (%d).",
                     not_ready, allowed_not_ready)
                return None
            return "Timed out after %.3fs.\n%s" % (timeout, message)
        time.sleep(POLL)


def read_pod_log(api_client, ns, pod_name, query):
    """GET pods/{name}/log with the given query parameters; the body as text. Raises
    ApiException on an error status."""
    resp = api_client.call_api(
        "/api/v1/namespaces/{namespace}/pods/{name}/log", "GET",
        path_params={"namespace": ns, "name": pod_name}, query_params=list(query.items()),
        header_params={"Accept": "*/*"}, auth_settings=["BearerToken"],
        _return_http_data_only=True, _preload_content=False, _request_timeout=(10, 60))
    try:
        return resp.data.decode("utf-8", errors="replace")
    finally:
        resp.release_conn()


def get_pod_logs(api_client, ns, pod_name, container_name, previous=False):
    """e2epod.GetPodLogs: (logs, error text or None)."""
    try:
        logs = read_pod_log(api_client, ns, pod_name,
                            {"container": container_name,
                             "previous": "true" if previous else "false"})
    except ApiException as err:
        return "", describe_error(err)
    if "Internal Error" in logs:
        return "", "Fetched log contains \"Internal Error\": %r" % logs
    return logs, None


class PodClient:
    """e2epod.PodClient (e2epod.NewPodClient(f)): the framework namespace's pods.
    mungeSpec changes nothing outside node e2e, and owner tracking is off by default."""

    def __init__(self, f, namespace=None):
        self.f = f
        self.core = f.core
        self.namespace = namespace or f.namespace.metadata.name

    def create(self, pod):
        """Create: fails the test on an error."""
        return expect_no_error(self.core.create_namespaced_pod, self.namespace, pod,
                               explain="Error creating Pod")

    def create_sync(self, pod):
        """CreateSync: create, wait until running and ready, return the newest pod."""
        p = self.create(pod)
        err = wait_timeout_for_pod_ready(self.core, p.metadata.name, self.namespace,
                                         POD_START_TIMEOUT)
        if err is not None:
            fail("unexpected error: %s", err)
        return expect_no_error(self.core.read_namespaced_pod, p.metadata.name, self.namespace)

    def get(self, name):
        return self.core.read_namespaced_pod(name, self.namespace)

    def update(self, name, update_fn):
        """Update: PollUntilContextTimeout(500ms, 30s, immediate=false) of get, mutate,
        update; a conflict retries, any other error fails."""
        deadline = time.monotonic() + 30
        while True:
            time.sleep(0.5)
            try:
                pod = self.core.read_namespaced_pod(name, self.namespace)
            except ApiException as err:
                fail("failed to get pod %r: %s", name, describe_error(err))
            update_fn(pod)
            try:
                self.core.replace_namespaced_pod(name, self.namespace, pod)
                logf("Successfully updated pod %r", name)
                return
            except ApiException as err:
                if not is_conflict(err):
                    fail("failed to update pod %r: %s", name, describe_error(err))
                logf("Conflicting update to pod %r, re-get and re-update: %s", name,
                     describe_error(err))
            if time.monotonic() + 0.5 > deadline:
                fail("unexpected error: timed out updating pod %r", name)

    def delete(self, name, grace_period_seconds=None):
        """Delete (raises ApiException)."""
        body = client.V1DeleteOptions(grace_period_seconds=grace_period_seconds) \
            if grace_period_seconds is not None else client.V1DeleteOptions()
        return self.core.delete_namespaced_pod(name, self.namespace, body=body)

    def delete_sync(self, name, grace_period_seconds, timeout):
        """DeleteSync"""
        try:
            self.delete(name, grace_period_seconds)
        except ApiException as err:
            if not is_not_found(err):
                fail("Failed to delete pod %r: %s", name, describe_error(err))
        err = wait_for_pod_not_found(self.core, name, self.namespace, timeout)
        if err is not None:
            fail("wait for pod %r to disappear: %s", name, err)


def match_container_output(f, pod, container_name, expected_output, matcher):
    """e2epodoutput.MatchContainerOutput: create the pod, wait for success, match each
    expectation against the container's log; deletes the pod (DeleteSync) at the end.
    Returns None or the error text."""
    ns = pod.metadata.namespace or f.namespace.metadata.name
    pod_client = PodClient(f, ns)
    created = pod_client.create(pod)
    try:
        pod_err = wait_for_pod_success(f.core, created.metadata.name, ns, POD_START_TIMEOUT)
        try:
            pod_status = pod_client.get(created.metadata.name)
        except ApiException as err:
            return "failed to get pod status: %s" % describe_error(err)
        if pod_err is not None:
            for c in (pod_status.spec.init_containers or []) + pod_status.spec.containers:
                logs, lerr = get_pod_logs(f.api_client, ns, pod_status.metadata.name, c.name)
                if lerr is not None:
                    logf("Failed to get logs from node %r pod %r container %r: %s",
                         pod_status.spec.node_name, pod_status.metadata.name, c.name, lerr)
                else:
                    logf("Output of node %r pod %r container %r: %s",
                         pod_status.spec.node_name, pod_status.metadata.name, c.name, logs)
            return "expected pod %r success: %s" % (created.metadata.name, pod_err)
        logf("Trying to get logs from node %s pod %s container %s", pod_status.spec.node_name,
             pod_status.metadata.name, container_name)
        logs, lerr = get_pod_logs(f.api_client, ns, pod_status.metadata.name, container_name)
        if lerr is not None:
            logf("Failed to get logs from node %r pod %r container %r. %s",
                 pod_status.spec.node_name, pod_status.metadata.name, container_name, lerr)
            return "failed to get logs from %s for %s: %s" % (pod_status.metadata.name,
                                                              container_name, lerr)
        for expected in expected_output:
            if not matcher(expected, logs):
                return "expected %r in container output: Expected\n%r\nto match %r" % (
                    expected, logs, expected)
        return None
    finally:
        by("delete the pod")
        pod_client.delete_sync(created.metadata.name, None, DEFAULT_POD_DELETION_TIMEOUT)


def contain_substring(expected, actual):
    """gomega.ContainSubstring"""
    return expected in actual


def match_regexp(expected, actual):
    """gomega.MatchRegexp (Go's regexp.MatchString: a search)"""
    return re.search(expected, actual) is not None


def expect_container_output(f, scenario_name, pod, container_index, expected_output,
                            matcher=contain_substring):
    """e2epodoutput.TestContainerOutput (substring) / TestContainerOutputRegexp
    (matcher=match_regexp) / TestContainerOutputMatcher."""
    by("Creating a pod to test %s" % scenario_name)
    if container_index < 0 or container_index >= len(pod.spec.containers):
        fail("Invalid container index: %d", container_index)
    err = match_container_output(f, pod, pod.spec.containers[container_index].name,
                                 expected_output, matcher)
    if err is not None:
        fail("unexpected error: %s", err)


def watch_until(timeout, initial_rv, list_func, *args, conditions, **kwargs):
    """watchtools.Until(ctx with timeout, initialResourceVersion, ListWatch, conditions...):
    a RetryWatcher from initial_rv (re-opened from the last resourceVersion when the server
    ends it) fed to the conditions in turn, each a function of the event returning
    (done, error message or None). Returns (last event, error text or None)."""
    w = Watcher(list_func, *args, retry=True, resource_version=initial_rv, **kwargs)
    conditions = list(conditions)
    last = None
    deadline = time.monotonic() + timeout
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return last, "timed out waiting for the condition"
            try:
                event = w.next(min(remaining, 1.0))
            except WatchClosed as err:
                return last, "watch closed before UntilWithoutRetry timeout (%s)" % err
            if event is None:
                continue
            last = event
            while conditions:
                done, err = conditions[0](event)
                if err is not None:
                    return last, err
                if not done:
                    break
                conditions.pop(0)
            if not conditions:
                return last, None
    finally:
        w.stop()


class IndexerInformerWatcher:
    """watchtools.NewIndexerInformerWatcher over a ListWatch: an informer (list, then watch
    from the list's resourceVersion; re-listed if the watch fails) whose handlers feed a
    result channel: OnAdd -> ADDED, OnUpdate -> MODIFIED, OnDelete -> DELETED. As in the
    informer's processDeltas, an ADDED or MODIFIED watch event is an update when the store
    already holds the object and an add otherwise."""

    def __init__(self, list_func, *args, **kwargs):
        self.list_func = list_func
        self.args = args
        self.kwargs = kwargs
        self.store = {}
        self.synced = threading.Event()
        self.error = None
        self._queue = queue.Queue()
        self._stop = threading.Event()
        self._watcher = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @staticmethod
    def _key(obj):
        return "%s/%s" % (obj.metadata.namespace, obj.metadata.name)

    def _emit(self, kind, obj):
        self._queue.put({"type": kind, "object": obj})

    def _list(self):
        lst = self.list_func(*self.args, **self.kwargs)
        fresh = {self._key(o): o for o in lst.items}
        for key, obj in fresh.items():  # store.Replace: adds/updates, then deletions
            self._emit("MODIFIED" if key in self.store else "ADDED", obj)
        for key in [k for k in self.store if k not in fresh]:
            self._emit("DELETED", self.store[key])
        self.store = fresh
        return lst.metadata.resource_version

    def _run(self):
        while not self._stop.is_set():
            try:
                rv = self._list()
            except ApiException as err:
                self.error = describe_error(err)
                time.sleep(1)
                continue
            self.synced.set()
            self._watcher = Watcher(self.list_func, *self.args, resource_version=rv,
                                    **self.kwargs)
            while not self._stop.is_set():
                try:
                    event = self._watcher.next(0.2)
                except WatchClosed as err:
                    self.error = str(err)
                    break  # the reflector lists and watches again
                if event is None:
                    continue
                obj = event["object"]
                key = self._key(obj)
                if event["type"] in ("ADDED", "MODIFIED"):
                    self._emit("MODIFIED" if key in self.store else "ADDED", obj)
                    self.store[key] = obj
                elif event["type"] == "DELETED":
                    self.store.pop(key, None)
                    self._emit("DELETED", obj)
            self._watcher.stop()

    def result(self, timeout):
        """The next event from the result channel, None after timeout seconds."""
        try:
            return self._queue.get(timeout=max(timeout, 0))
        except queue.Empty:
            return None

    def stop(self):
        self._stop.set()
        if self._watcher is not None:
            self._watcher.stop()


# --------------------------------------------------------------------------- workloads
# test/e2e/framework/pod/resource.go (PodsCreatedByLabel, VerifyPodsRunning),
# test/utils/replicaset.go (UpdateReplicaSetWithRetries) and
# test/e2e/framework/deployment/fixtures.go (NewDeployment).

POLL_SHORT_TIMEOUT = 60  # framework.PollShortTimeout


def selector_from_set(labels):
    """labels.SelectorFromSet(labels).String(): the keys sorted."""
    return ",".join("%s=%s" % (k, labels[k]) for k in sorted(labels))


def pods_created_by_label(core, ns, name, replicas, selector):
    """e2epod.PodsCreatedByLabel: (pod list whose items are the pods without a
    deletionTimestamp, error text or None); lists every 5 s for 2 minutes until exactly
    `replicas` such pods exist. A List error ends it at once."""
    timeout = 2 * 60
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            pods = core.list_namespaced_pod(ns, label_selector=selector)
        except ApiException as err:
            return None, describe_error(err)
        created = [p for p in pods.items if p.metadata.deletion_timestamp is None]
        logf("Pod name %s: Found %d pods out of %d", name, len(created), replicas)
        if len(created) == replicas:
            pods.items = created
            return pods, None
        time.sleep(5)
    return None, "Pod name %s: Gave up waiting %ss for %d pods to come up" % (name, timeout,
                                                                             replicas)


def verify_pods_running(core, ns, name, selector, want_name, replicas):
    """e2epod.VerifyPodsRunning: PodsCreatedByLabel, then WaitForPodRunningInNamespace on
    each pod (upstream waits for them concurrently). Returns None or the error text."""
    pods, err = pods_created_by_label(core, ns, name, replicas, selector)
    if err is not None:
        return err
    by("ensuring each pod is running")
    errors = []
    for pod in pods.items:
        e = wait_for_pod_running(core, pod)
        if e is not None:
            errors.append(e)
    if errors:
        return "failed to wait for pods running: %s" % errors
    return None


def update_replica_set_with_retries(apps, ns, name, apply_update):
    """e2ereplicaset.UpdateReplicaSetWithRetries (testutils, framework.Poll,
    framework.PollShortTimeout): PollImmediate of get, apply_update(rs), update; a Get
    error ends it, an Update error is retried. Returns (rs, error text or None)."""
    update_err = None
    deadline = time.monotonic() + POLL_SHORT_TIMEOUT
    while True:
        try:
            rs = apps.read_namespaced_replica_set(name, ns)
        except ApiException as err:
            return None, describe_error(err)
        apply_update(rs)
        try:
            rs = apps.replace_namespaced_replica_set(name, ns, rs)
            logf("Updating replica set %r", name)
            return rs, None
        except ApiException as err:
            update_err = describe_error(err)
            rs = None
        if time.monotonic() + POLL > deadline:
            return rs, "couldn't apply the provided updated to replicaset %r: %s" % (
                name, update_err)
        time.sleep(POLL)


def new_deployment(deployment_name, replicas, pod_labels, image_name, image, strategy_type):
    """e2edeployment.NewDeployment"""
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=deployment_name, labels=pod_labels),
        spec=client.V1DeploymentSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels=pod_labels),
            strategy=client.V1DeploymentStrategy(type=strategy_type),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=pod_labels),
                spec=client.V1PodSpec(
                    termination_grace_period_seconds=0,
                    containers=[client.V1Container(
                        name=image_name, image=image,
                        security_context=client.V1SecurityContext())]))))


def go_deref(value, what):
    """A Go pointer dereference: a nil pointer panics, which fails the test."""
    if value is None:
        fail("runtime error: invalid memory address or nil pointer dereference (%s)", what)
    return value
