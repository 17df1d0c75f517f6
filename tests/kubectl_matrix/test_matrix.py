"""kubectl compatibility matrix: every stock kubectl from 1.27 to 1.33 against Shepherd.

Each test is one cell of a (kubectl version x command) matrix, id ``[<version>-<command>]``,
e.g. ``test_cell[1.30-scale]``. Every version works in its own namespace (``km-130`` for
1.30). The prerequisites of a cell (a pod to wait on, a deployment to scale, ...) are made
with raw HTTP, so a cell fails only because of the kubectl command it is about.

One shepherd-apiserver is started for the whole run (fresh temporary data dir, stopped by
PID at the end); each kubectl version gets its own HOME and --cache-dir (discovery is
cached on disk). Shepherd has no controllers and no nodes yet, so nothing reconciles
deployments and `kubectl logs` is not exercised.

Run from the repository root:
    /usr/bin/python3 -m pytest tests/kubectl_matrix -q
`tests/kubectl_matrix/report.py` runs this and writes MATRIX.md.

Environment: SHEPHERD_APISERVER (server binary), KUBECTL_MATRIX_BIN_DIR (directory holding
kubectl.1.27 ... kubectl.1.33), KUBECTL_MATRIX_VERSIONS (comma list, to run a subset).
"""

import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "harness"))
import etcd_cluster  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SERVER_BIN = os.environ.get(
    "SHEPHERD_APISERVER", os.path.join(REPO, "build", "cmd", "shepherd-apiserver"))
KUBECTL_DIR = os.environ.get("KUBECTL_MATRIX_BIN_DIR", "/usr/lib/google-cloud-sdk/bin")

ALL_VERSIONS = ["1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33"]
VERSIONS = [v.strip() for v in os.environ.get("KUBECTL_MATRIX_VERSIONS", "").split(",")
            if v.strip()] or ALL_VERSIONS

STARTUP_TIMEOUT = 30.0
STOP_GRACE = 10.0
# How long a live change may take to reach `get -w` / `wait` (the brief: "< 2 s").
WAIT_LATENCY = 2.0
WATCH_LATENCY = 3.0
# `delete --wait` of an object that is removed at once must not hang.
DELETE_LATENCY = 5.0

# kubectl 1.33 against an older server prints a version-skew warning on stderr.
SKEW_WARNING = re.compile(r"^WARNING: version difference between client.*\n?", re.M)


# =========================================================================== HTTP


# The admin's TLS context for the server's https URL, set once its PKI exists.
ADMIN_CONTEXT = None


def http(base_url, method, path, body=None, content_type="application/json", timeout=30.0):
    """Raw HTTPS as the cluster admin; returns (status, decoded JSON body or raw bytes)."""
    data = None
    headers = {"Accept": "application/json"}
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers["Content-Type"] = content_type
    req = urllib.request.Request(base_url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=ADMIN_CONTEXT) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw


# =========================================================================== server


class Server:
    def __init__(self, workdir):
        self.workdir = workdir
        self.proc = None
        self.port = None
        self.log_path = os.path.join(workdir, "server.log")
        self.kubeconfig = os.path.join(workdir, "kubeconfig")

    @property
    def base_url(self):
        return "https://127.0.0.1:%d" % self.port

    def start(self):
        """HTTPS with the PKI the server generates in DATA/pki; kubectl and the raw calls
        act as the admin (client certificate in system:masters), under Node,RBAC."""
        global ADMIN_CONTEXT
        port_file = os.path.join(self.workdir, "port")
        pki = os.path.join(self.workdir, "data", "pki")
        args = [SERVER_BIN, "--data-dir", os.path.join(self.workdir, "data"), "--port", "0",
                "--port-file", port_file] + etcd_cluster.storage_args(os.path.join(self.workdir, "data"))
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("shepherd-apiserver exited with %s during startup:\n%s"
                                   % (self.proc.returncode, self.log_tail()))
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("shepherd-apiserver not ready after %ss:\n%s"
                                   % (STARTUP_TIMEOUT, self.log_tail()))
            if self.port is None:
                try:
                    with open(port_file) as f:
                        text = f.read().strip()
                    if text.isdigit():
                        self.port = int(text)
                except OSError:
                    pass
            if self.port is not None:
                try:
                    if ADMIN_CONTEXT is None:
                        ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
                        ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
                        ADMIN_CONTEXT = ctx
                    if http(self.base_url, "GET", "/readyz", timeout=2)[0] == 200:
                        break
                except OSError:
                    pass
            time.sleep(0.05)
        subprocess.run([os.path.join(os.path.dirname(SERVER_BIN), "shepherd"), "pki", "--dir", pki,
                        "--server", self.base_url], check=True, timeout=30)
        shutil.copyfile(os.path.join(pki, "admin.kubeconfig"), self.kubeconfig)
        return self

    def log_tail(self, n=4000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        return self.proc.returncode


# =========================================================================== kubectl


class Result:
    def __init__(self, argv, rc, out, err, elapsed):
        self.argv, self.rc, self.out, self.err, self.elapsed = argv, rc, out, err, elapsed

    @property
    def lines(self):
        return [l.rstrip() for l in self.out.splitlines() if l.strip()]

    @property
    def clean_err(self):
        return SKEW_WARNING.sub("", self.err).strip()

    def __str__(self):
        return ("$ %s\n  rc=%s (%.2fs)\n  stdout: %r\n  stderr: %r"
                % (" ".join(self.argv), self.rc, self.elapsed, self.out, self.err))

    __repr__ = __str__


class Background:
    """A kubectl running in the background; stdout/stderr lines collected with timestamps."""

    def __init__(self, argv, env):
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, env=env)
        self.started = time.monotonic()
        self.out_lines = []   # (monotonic time, line)
        self.err_lines = []
        self._cv = threading.Condition()
        self._threads = [threading.Thread(target=self._pump, args=(s, l), daemon=True)
                         for s, l in ((self.proc.stdout, self.out_lines),
                                      (self.proc.stderr, self.err_lines))]
        for t in self._threads:
            t.start()

    def _pump(self, stream, sink):
        for raw in iter(stream.readline, b""):
            with self._cv:
                sink.append((time.monotonic(), raw.decode(errors="replace").rstrip("\n")))
                self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    def wait_line(self, pred, timeout, stream="out", start=0):
        """Wait for a line (from index ``start`` on) matching ``pred``; returns
        (time, line) or None."""
        sink = self.out_lines if stream == "out" else self.err_lines
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                for item in sink[start:]:
                    if pred(item[1]):
                        return item
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None
                                 and not any(t.is_alive() for t in self._threads)):
                    return None
                self._cv.wait(min(left, 0.1))

    def running(self):
        return self.proc.poll() is None

    def wait(self, timeout):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        for t in self._threads:
            t.join(timeout=2)
        return self.proc.returncode

    def stop(self):
        """SIGTERM (then SIGKILL) the kubectl we started, by PID."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for t in self._threads:
            t.join(timeout=2)
        return self.proc.returncode

    @property
    def out(self):
        return "\n".join(l for _, l in self.out_lines)

    @property
    def err(self):
        return "\n".join(l for _, l in self.err_lines)

    def __str__(self):
        return ("$ %s &\n  rc=%s\n  stdout: %r\n  stderr (tail): %r"
                % (" ".join(self.argv), self.proc.returncode, self.out, self.err[-3000:]))

    __repr__ = __str__


class K:
    """One kubectl version bound to its namespace, plus raw HTTP helpers."""

    def __init__(self, env, version):
        self.env = env
        self.server = env.server
        self.version = version
        self.ns = "km-" + version.replace(".", "")
        self.binary = os.path.join(KUBECTL_DIR, "kubectl." + version)
        self.home = os.path.join(env.home, version)
        self.cache_dir = os.path.join(self.home, "cache")
        self.tmp = os.path.join(self.home, "files")
        for d in (self.cache_dir, self.tmp):
            os.makedirs(d, exist_ok=True)
        self.metrics = {}  # measurements of the current cell, recorded in the junit xml
        self.proc_env = dict(os.environ, HOME=self.home)
        self.proc_env.pop("KUBECONFIG", None)

    # ---------------------------------------------------------------- kubectl
    def argv(self, args, ns=True):
        base = [self.binary, "--kubeconfig", self.server.kubeconfig, "--cache-dir", self.cache_dir]
        return base + (["-n", self.ns] if ns else []) + list(args)

    def __call__(self, *args, input=None, ns=True, timeout=60):
        argv = self.argv(args, ns)
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv, input=input.encode() if isinstance(input, str) else input,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout, env=self.proc_env)
        except subprocess.TimeoutExpired as e:
            return Result(argv, "timeout", (e.stdout or b"").decode(errors="replace"),
                          (e.stderr or b"").decode(errors="replace"), time.monotonic() - t0)
        return Result(argv, p.returncode, p.stdout.decode(errors="replace"),
                      p.stderr.decode(errors="replace"), time.monotonic() - t0)

    def ok(self, *args, expect=None, input=None, ns=True, quiet=True, timeout=60):
        """Run; assert exit code 0, no stderr (when ``quiet``) and, if given, the exact
        stdout lines ``expect`` (a string for one line, or a list)."""
        r = self(*args, input=input, ns=ns, timeout=timeout)
        assert r.rc == 0, "expected exit code 0\n%s" % r
        if quiet:
            assert r.clean_err == "", "unexpected stderr\n%s" % r
        if expect is not None:
            want = [expect] if isinstance(expect, str) else list(expect)
            assert r.lines == want, "expected stdout lines %r\n%s" % (want, r)
        return r

    def fails(self, *args, rc=1, err_has=(), input=None, ns=True):
        r = self(*args, input=input, ns=ns)
        assert r.rc == rc, "expected exit code %s\n%s" % (rc, r)
        for frag in ([err_has] if isinstance(err_has, str) else err_has):
            assert frag in r.err, "expected %r in stderr\n%s" % (frag, r)
        return r

    def background(self, *args, ns=True):
        return Background(self.argv(args, ns), self.proc_env)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    # ---------------------------------------------------------------- raw API
    def path(self, group_version, resource, name=None, ns=True):
        prefix = "/api/" + group_version if "/" not in group_version else "/apis/" + group_version
        p = prefix + ("/namespaces/%s" % self.ns if ns else "") + "/" + resource
        return p + ("/" + name if name else "")

    def get(self, gv, resource, name, ns=True):
        """The object, or None on 404."""
        status, obj = http(self.server.base_url, "GET", self.path(gv, resource, name, ns))
        if status == 404:
            return None
        assert status == 200, "GET %s/%s: HTTP %s %s" % (resource, name, status, obj)
        return obj

    def create(self, gv, resource, obj, ns=True):
        status, body = http(self.server.base_url, "POST", self.path(gv, resource, ns=ns), obj)
        assert status == 201, "setup: POST %s: HTTP %s %s" % (resource, status, body)
        return body

    def ensure(self, gv, resource, obj):
        if self.get(gv, resource, obj["metadata"]["name"]) is None:
            self.create(gv, resource, obj)

    def configmap(self, name, data=None, labels=None):
        meta = {"name": name}
        if labels:
            meta["labels"] = labels
        return self.create("v1", "configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                                 "metadata": meta, "data": data or {"a": "1"}})

    def pod(self, name, labels=None):
        meta = {"name": name}
        if labels:
            meta["labels"] = labels
        return self.create("v1", "pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}})

    def deployment(self, name, containers=None, replicas=1):
        return {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": replicas,
                     "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": containers or [
                                      {"name": "nginx", "image": "nginx:1.25"}]}}}}


class Env:
    def __init__(self, server, home):
        self.server = server
        self.home = home
        self._ks = {}

    def k(self, version):
        if version not in self._ks:
            k = K(self, version)
            if not os.access(k.binary, os.X_OK):
                pytest.fail("kubectl %s not found at %s" % (version, k.binary), pytrace=False)
            # The version's namespace, made with raw JSON so that no cell depends on
            # `kubectl create namespace` (protobuf on >= 1.32).
            status, body = http(self.server.base_url, "POST", "/api/v1/namespaces",
                                {"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": k.ns}})
            assert status in (201, 409), "setup: create namespace %s: %s %s" % (k.ns, status, body)
            self._ks[version] = k
        return self._ks[version]


@pytest.fixture(scope="session")
def env():
    if not os.access(SERVER_BIN, os.X_OK):
        pytest.fail("shepherd-apiserver binary not found at %s (set SHEPHERD_APISERVER)"
                    % SERVER_BIN, pytrace=False)
    workdir = tempfile.mkdtemp(prefix="shepherd-kubectl-matrix-")
    server = Server(workdir).start()
    try:
        yield Env(server, os.path.join(workdir, "home"))
    finally:
        rc = server.stop()
        log = server.log_tail()
        if rc == 0:
            shutil.rmtree(workdir, ignore_errors=True)
    assert rc == 0, "shepherd-apiserver exited with %s after SIGTERM; log tail:\n%s" % (rc, log)


# =========================================================================== scenarios

CREATE_F_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
  labels: {app: web}
spec:
  selector: {app: web}
  ports:
  - name: http
    port: 80
    targetPort: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  labels: {app: web}
data:
  LOG_LEVEL: info
  config.yaml: |
    port: 8080
"""


def cell_create_f(k):
    path = k.write("create-f.yaml", CREATE_F_MANIFEST)
    k.ok("create", "-f", path, expect=["deployment.apps/web created", "service/web created",
                                       "configmap/web-config created"])
    dep = k.get("apps/v1", "deployments", "web")
    assert dep is not None and dep["spec"]["replicas"] == 2, dep
    c = dep["spec"]["template"]["spec"]["containers"]
    assert [(x["name"], x["image"], x["ports"][0]["containerPort"]) for x in c] == \
        [("nginx", "nginx:1.25", 80)], c
    svc = k.get("v1", "services", "web")
    assert svc is not None and svc["spec"]["type"] == "ClusterIP", svc
    assert re.fullmatch(r"\d+\.\d+\.\d+\.\d+", svc["spec"].get("clusterIP", "")), svc
    port = svc["spec"]["ports"][0]
    assert (port["name"], port["port"], port["targetPort"], port["protocol"]) == \
        ("http", 80, 80, "TCP"), svc
    cm = k.get("v1", "configmaps", "web-config")
    assert cm is not None and cm["data"] == {"LOG_LEVEL": "info", "config.yaml": "port: 8080\n"}
    k.ok("get", "deployments,services,configmaps", "-l", "app=web", "-o", "name",
         expect=["deployment.apps/web", "service/web", "configmap/web-config"])
    # Creating the same manifest again: AlreadyExists for each object, exit code 1.
    r = k.fails("create", "-f", path, err_has=[
        'Error from server (AlreadyExists): error when creating "%s": '
        'deployments.apps "web" already exists' % path,
        'Error from server (AlreadyExists): error when creating "%s": '
        'services "web" already exists' % path,
        'Error from server (AlreadyExists): error when creating "%s": '
        'configmaps "web-config" already exists' % path])
    assert r.out == "", r


APPLY_V1 = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: applied
  labels: {app: applied}
spec:
  replicas: 1
  selector:
    matchLabels: {app: applied}
  template:
    metadata:
      labels: {app: applied}
    spec:
      containers:
      - name: app
        image: nginx:1.25
        env:
        - {name: MODE, value: one}
      - name: sidecar
        image: busybox:1.36
        command: [sleep, infinity]
"""

APPLY_V2 = (APPLY_V1.replace("replicas: 1", "replicas: 4")
            .replace("nginx:1.25", "nginx:1.26")
            .replace("value: one", "value: two")
            .replace("labels: {app: applied}\n", "labels: {app: applied, stage: two}\n", 1)
            .replace("      - name: sidecar\n        image: busybox:1.36\n"
                     "        command: [sleep, infinity]\n", ""))


def cell_apply(k):
    assert APPLY_V2 != APPLY_V1 and "sidecar" not in APPLY_V2
    m1 = k.write("apply-v1.yaml", APPLY_V1)
    m2 = k.write("apply-v2.yaml", APPLY_V2)
    k.ok("apply", "-f", m1, expect="deployment.apps/applied created")
    dep = k.get("apps/v1", "deployments", "applied")
    last = json.loads(dep["metadata"]["annotations"]
                      ["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 1 and last["metadata"]["name"] == "applied", last
    assert dep["metadata"]["generation"] == 1, dep["metadata"]

    k.ok("apply", "-f", m1, expect="deployment.apps/applied unchanged")
    assert k.get("apps/v1", "deployments", "applied")["metadata"]["resourceVersion"] == \
        dep["metadata"]["resourceVersion"], "an unchanged apply must not write"

    k.ok("apply", "-f", m2, expect="deployment.apps/applied configured")
    dep = k.get("apps/v1", "deployments", "applied")
    assert dep["spec"]["replicas"] == 4, dep["spec"]
    assert dep["metadata"]["labels"] == {"app": "applied", "stage": "two"}, dep["metadata"]
    c = dep["spec"]["template"]["spec"]["containers"]
    # the container dropped from the manifest is removed; the other one is updated in place
    assert [x["name"] for x in c] == ["app"], c
    assert c[0]["image"] == "nginx:1.26" and c[0]["env"] == [{"name": "MODE", "value": "two"}], c
    assert dep["metadata"]["generation"] == 2, dep["metadata"]
    last = json.loads(dep["metadata"]["annotations"]
                      ["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 4, last

    k.ok("apply", "-f", m2, expect="deployment.apps/applied unchanged")


def cell_get_w(k):
    k.configmap("watched", {"k": "v"})
    w = k.background("get", "configmaps", "-w", "--output-watch-events")
    try:
        hdr = w.wait_line(lambda l: l.split()[:2] == ["EVENT", "NAME"], 10)
        assert hdr is not None, "no table header from the watch\n%s" % w
        assert hdr[1].split() == ["EVENT", "NAME", "DATA", "AGE"], hdr
        first = w.wait_line(lambda l: l.split()[:2] == ["ADDED", "watched"], 10)
        assert first is not None, "initial ADDED watched missing\n%s" % w
        assert first[1].split()[2] == "1", first

        steps = [
            (("create", "configmap", "live", "--from-literal=a=1"), "configmap/live created",
             ["ADDED", "live", "1"]),
            (("label", "configmap", "live", "seen=yes"), "configmap/live labeled",
             ["MODIFIED", "live", "1"]),
            (("patch", "configmap", "live", "--type=merge", "-p", '{"data":{"b":"2"}}'),
             "configmap/live patched", ["MODIFIED", "live", "2"]),
            (("delete", "configmap", "live"), 'configmap "live" deleted',
             ["DELETED", "live", "2"]),
        ]
        for args, printed, event in steps:
            n_before = len(w.out_lines)
            t0 = time.monotonic()  # latency counted from the start of the changing kubectl
            k.ok(*args, expect=printed)
            got = w.wait_line(lambda l, e=event: l.split()[:3] == e, WATCH_LATENCY + 5,
                              start=n_before)
            assert got is not None, ("`%s` not reflected as %r by the watch\n%s"
                                     % (" ".join(args), event, w))
            latency = got[0] - t0
            k.metrics["watch_latency_after_%s_s" % args[0]] = round(latency, 3)
            assert latency < WATCH_LATENCY, "watch event %r after %.2fs\n%s" % (event, latency, w)
            assert re.fullmatch(r"\d+s", got[1].split()[3]), got
        assert w.running(), "the watch ended by itself\n%s" % w
    finally:
        w.stop()
    # exactly one event per change, in order (other configmaps of the namespace aside)
    body = [l for _, l in w.out_lines][1:]
    assert [l.split()[:2] for l in body if l.split()[1:2] in (["watched"], ["live"])] == [["ADDED", "watched"], ["ADDED", "live"],
                                            ["MODIFIED", "live"], ["MODIFIED", "live"],
                                            ["DELETED", "live"]], "\n".join(body)
    assert "error" not in w.err.lower(), w


def _wait_for_watch(bg, what):
    """kubectl at -v=6 logs each request once its response headers arrive: wait until the
    watch request is established so the change below is seen live, not in the first list."""
    got = bg.wait_line(lambda l: "watch=true" in l and "200 OK" in l, 15, stream="err")
    assert got is not None, "kubectl wait never established its watch on %s\n%s" % (what, bg)
    assert bg.running(), "kubectl wait returned before the change\n%s" % bg


def cell_wait_condition(k):
    k.pod("p")
    w = k.background("wait", "--for=condition=Ready", "pod/p", "--timeout=20s", "-v=6")
    try:
        _wait_for_watch(w, "pod/p")
        time.sleep(0.3)
        assert w.running(), "kubectl wait returned before the status patch\n%s" % w
        k.ok("patch", "pod", "p", "--subresource=status", "--type=merge", "-p",
             '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}',
             expect="pod/p patched")
        t0 = time.monotonic()
        rc = w.wait(20 + 5)
        dt = time.monotonic() - t0
    finally:
        w.stop()
    k.metrics["wait_condition_latency_s"] = round(dt, 3)
    assert rc == 0, "kubectl wait failed\n%s" % w
    assert w.out.strip() == "pod/p condition met", w
    assert dt < WAIT_LATENCY, "kubectl wait returned %.2fs after the patch\n%s" % (dt, w)
    pod = k.get("v1", "pods", "p")
    assert {"type": "Ready", "status": "True"}.items() <= pod["status"]["conditions"][0].items()
    # already true: returns at once
    k.ok("wait", "--for=condition=Ready", "pod/p", "--timeout=5s", expect="pod/p condition met")
    # never true: times out with exit code 1
    r = k.fails("wait", "--for=condition=Initialized", "pod/p", "--timeout=1s",
                err_has="timed out waiting for the condition on pods/p")
    assert r.out == "", r


def cell_wait_delete(k):
    k.configmap("x")
    w = k.background("wait", "--for=delete", "configmap/x", "--timeout=20s", "-v=6")
    try:
        _wait_for_watch(w, "configmap/x")
        time.sleep(0.3)
        assert w.running(), "kubectl wait returned before the delete\n%s" % w
        http(k.server.base_url, "DELETE", k.path("v1", "configmaps", "x"))
        t0 = time.monotonic()
        rc = w.wait(20 + 5)
        dt = time.monotonic() - t0
    finally:
        w.stop()
    k.metrics["wait_delete_latency_s"] = round(dt, 3)
    assert rc == 0, "kubectl wait failed\n%s" % w
    assert w.out.strip() == "configmap/x condition met", w
    assert dt < WAIT_LATENCY, "kubectl wait returned %.2fs after the delete\n%s" % (dt, w)
    assert k.get("v1", "configmaps", "x") is None


def cell_label(k):
    k.configmap("lab")

    def labels():
        return k.get("v1", "configmaps", "lab")["metadata"].get("labels") or {}

    k.ok("label", "configmap", "lab", "color=blue", "size=xl", expect="configmap/lab labeled")
    assert labels() == {"color": "blue", "size": "xl"}
    k.fails("label", "configmap", "lab", "color=red",
            err_has="'color' already has a value (blue), and --overwrite is false")
    assert labels()["color"] == "blue"
    k.ok("label", "configmap", "lab", "color=red", "--overwrite", expect="configmap/lab labeled")
    assert labels() == {"color": "red", "size": "xl"}
    k.ok("label", "configmap", "lab", "color-", expect="configmap/lab unlabeled")
    assert labels() == {"size": "xl"}
    # --resource-version makes the merge patch conditional: a stale one is a 409 Conflict
    stale = k.get("v1", "configmaps", "lab")["metadata"]["resourceVersion"]
    k.ok("label", "configmap", "lab", "shape=round", expect="configmap/lab labeled")
    k.fails("label", "configmap", "lab", "shape=square", "--overwrite",
            "--resource-version=" + stale,
            err_has='Error from server (Conflict): Operation cannot be fulfilled on '
                    'configmaps "lab": the object has been modified; please apply your '
                    'changes to the latest version and try again')
    assert labels() == {"size": "xl", "shape": "round"}
    k.ok("label", "configmap", "lab", "shape-", expect="configmap/lab unlabeled")
    # label by selector, several objects
    k.configmap("lab2", labels={"size": "xl"})
    r = k.ok("label", "configmaps", "-l", "size=xl", "tier=gold")
    assert sorted(r.lines) == ["configmap/lab labeled", "configmap/lab2 labeled"], r
    assert k.get("v1", "configmaps", "lab2")["metadata"]["labels"] == \
        {"size": "xl", "tier": "gold"}


def cell_annotate(k):
    k.configmap("ann")
    # kubectl 1.27 prints "annotate", later versions "annotated" (client-side wording)
    done = "configmap/ann " + ("annotate" if k.version == "1.27" else "annotated")

    def annotations():
        return k.get("v1", "configmaps", "ann")["metadata"].get("annotations") or {}

    k.ok("annotate", "configmap", "ann", "note=hello world", "owner=team-a", expect=done)
    assert annotations() == {"note": "hello world", "owner": "team-a"}
    k.fails("annotate", "configmap", "ann", "note=bye",
            err_has="--overwrite is false but found the following declared annotation(s): "
                    "'note' already has a value (hello world)")
    assert annotations()["note"] == "hello world"
    k.ok("annotate", "configmap", "ann", "note=bye", "--overwrite", expect=done)
    assert annotations() == {"note": "bye", "owner": "team-a"}
    k.ok("annotate", "configmap", "ann", "note-", expect=done)
    assert annotations() == {"owner": "team-a"}


def cell_patch_strategic(k):
    k.create("apps/v1", "deployments", k.deployment("pstrat", containers=[
        {"name": "app", "image": "nginx:1.25", "env": [{"name": "A", "value": "1"}]},
        {"name": "side", "image": "busybox:1.36"}]))

    def containers():
        return k.get("apps/v1", "deployments", "pstrat")["spec"]["template"]["spec"]["containers"]

    k.ok("patch", "deployment", "pstrat", "-p",
         '{"metadata":{"labels":{"tier":"fe"}},"spec":{"template":{"spec":{"containers":'
         '[{"name":"app","image":"nginx:1.27","env":[{"name":"B","value":"2"}]}]}}}}',
         expect="deployment.apps/pstrat patched")
    c = containers()
    # merged by name: both containers stay, env merged by name too; as upstream orders a
    # merged list, the patch's new item comes before the live-only one
    assert [x["name"] for x in c] == ["app", "side"], c
    assert c[0]["image"] == "nginx:1.27" and c[1]["image"] == "busybox:1.36", c
    assert c[0]["env"] == [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}], c
    assert k.get("apps/v1", "deployments", "pstrat")["metadata"]["labels"] == \
        {"app": "pstrat", "tier": "fe"}
    # $patch: delete directive
    k.ok("patch", "deployment", "pstrat", "-p",
         '{"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}}',
         expect="deployment.apps/pstrat patched")
    assert [x["name"] for x in containers()] == ["app"]
    # no-op
    k.ok("patch", "deployment", "pstrat", "-p", '{"spec":{"replicas":1}}',
         expect="deployment.apps/pstrat patched (no change)")


def cell_patch_merge(k):
    k.configmap("pmerge", {"a": "1", "b": "2"})
    k.ok("patch", "configmap", "pmerge", "--type=merge", "-p", '{"data":{"a":null,"c":"3"}}',
         expect="configmap/pmerge patched")
    assert k.get("v1", "configmaps", "pmerge")["data"] == {"b": "2", "c": "3"}
    # a JSON merge patch replaces lists wholesale (unlike strategic merge)
    k.create("apps/v1", "deployments", k.deployment("pmerge", containers=[
        {"name": "app", "image": "nginx:1.25"}, {"name": "side", "image": "busybox:1.36"}]))
    k.ok("patch", "deployment", "pmerge", "--type=merge", "-p",
         '{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"redis:7"}]}}}}',
         expect="deployment.apps/pmerge patched")
    c = k.get("apps/v1", "deployments", "pmerge")["spec"]["template"]["spec"]["containers"]
    assert [(x["name"], x["image"]) for x in c] == [("only", "redis:7")], c


def cell_patch_json(k):
    k.configmap("pjson", {"a": "1", "b": "2"})
    k.ok("patch", "configmap", "pjson", "--type=json", "-p",
         '[{"op":"replace","path":"/data/a","value":"one"},'
         '{"op":"remove","path":"/data/b"},'
         '{"op":"add","path":"/metadata/labels","value":{"x":"y"}}]',
         expect="configmap/pjson patched")
    cm = k.get("v1", "configmaps", "pjson")
    assert cm["data"] == {"a": "one"} and cm["metadata"]["labels"] == {"x": "y"}, cm
    # a failing "test" op rejects the whole patch (422 Invalid)
    r = k.fails("patch", "configmap", "pjson", "--type=json", "-p",
                '[{"op":"test","path":"/data/a","value":"nope"},'
                '{"op":"replace","path":"/data/a","value":"two"}]',
                err_has="The request is invalid")
    assert "test" in r.err, r
    assert k.get("v1", "configmaps", "pjson")["data"] == {"a": "one"}


def cell_scale(k):
    k.ensure("apps/v1", "deployments", k.deployment("web", replicas=2))

    def replicas():
        return k.get("apps/v1", "deployments", "web")["spec"]["replicas"]

    gen = k.get("apps/v1", "deployments", "web")["metadata"]["generation"]
    k.ok("scale", "deployment", "web", "--replicas=3", expect="deployment.apps/web scaled")
    assert replicas() == 3
    # a spec change: the deployment's generation moves on
    assert k.get("apps/v1", "deployments", "web")["metadata"]["generation"] == gen + 1
    k.ok("scale", "deployment", "web", "--replicas=0", expect="deployment.apps/web scaled")
    assert replicas() == 0
    # with a precondition kubectl GETs and PUTs the scale subresource instead
    k.ok("scale", "deployment", "web", "--current-replicas=0", "--replicas=1",
         expect="deployment.apps/web scaled")
    assert replicas() == 1
    k.fails("scale", "deployment", "web", "--current-replicas=5", "--replicas=2",
            err_has="Expected replicas to be 5, was 1")
    assert replicas() == 1


def cell_delete_configmap(k):
    k.configmap("dc")
    r = k.ok("delete", "configmap", "dc", expect='configmap "dc" deleted')
    k.metrics["delete_wait_s"] = round(r.elapsed, 3)
    assert r.elapsed < DELETE_LATENCY, "delete --wait took %.2fs\n%s" % (r.elapsed, r)
    assert k.get("v1", "configmaps", "dc") is None
    k.fails("delete", "configmap", "dc",
            err_has='Error from server (NotFound): configmaps "dc" not found')


def cell_delete_pod(k):
    pod = k.pod("dp")
    assert not pod["spec"].get("nodeName"), pod["spec"]
    # a pod never bound to a node is removed at once, so --wait (the default) returns quickly
    r = k.ok("delete", "pod", "dp", "--timeout=20s", expect='pod "dp" deleted')
    k.metrics["delete_wait_s"] = round(r.elapsed, 3)
    assert r.elapsed < DELETE_LATENCY, "delete --wait took %.2fs\n%s" % (r.elapsed, r)
    assert k.get("v1", "pods", "dp") is None


def cell_delete_l(k):
    for name in ("dl-a", "dl-b"):
        k.configmap(name, labels={"app": "x"})
    k.configmap("dl-keep", labels={"app": "y"})
    k.pod("dl-pod", labels={"app": "x"})
    r = k.ok("delete", "configmaps,pods", "-l", "app=x",
             expect=['configmap "dl-a" deleted', 'configmap "dl-b" deleted',
                     'pod "dl-pod" deleted'])
    assert r.elapsed < DELETE_LATENCY, "delete -l took %.2fs\n%s" % (r.elapsed, r)
    for res, name in (("configmaps", "dl-a"), ("configmaps", "dl-b"), ("pods", "dl-pod")):
        assert k.get("v1", res, name) is None, name
    assert k.get("v1", "configmaps", "dl-keep") is not None
    k.ok("delete", "configmaps,pods", "-l", "app=x", expect="No resources found")


# --------------------------------------------------------------------------- imperative create

def _normalized(obj, name):
    """An object as stored, minus what differs between two creations of the same thing."""
    def strip_nulls(v):  # upstream decodes both encodings into one Go struct: null == absent
        if isinstance(v, dict):
            return {key: strip_nulls(x) for key, x in v.items() if x is not None}
        if isinstance(v, list):
            return [strip_nulls(x) for x in v]
        return v

    obj = strip_nulls(obj)
    meta = obj.get("metadata", {})
    # managedFields only mirror the object (the object itself is compared in full)
    for f in ("uid", "resourceVersion", "creationTimestamp", "selfLink", "managedFields"):
        meta.pop(f, None)
    spec = obj.get("spec") or {}
    if obj.get("kind") == "Service" and spec.get("clusterIP") not in (None, "None"):
        spec["clusterIP"] = "<allocated>"
        spec["clusterIPs"] = ["<allocated>"] * len(spec.get("clusterIPs") or [])
    # the object's own name shows up in labels and selectors: compare it as a placeholder
    return json.loads(json.dumps(obj).replace(json.dumps(name), '"<NAME>"'))


def _same_as_json_twin(k, gv, resource, name, create_args, namespaced=True):
    """kubectl >= 1.32 sends these creates as protobuf. Create a twin from the very object
    kubectl builds (`--dry-run=client -o json`) with a plain JSON POST, and check that the
    server stored the same thing both ways (nothing lost or changed in protobuf decoding)."""
    twin = name + "-json"
    r = k.ok(*create_args, "--dry-run=client", "-o", "json", ns=namespaced)
    body = json.loads(r.out)
    assert body["metadata"]["name"] == name, body
    body = json.loads(json.dumps(body).replace(json.dumps(name), json.dumps(twin)))
    qs = "?fieldManager=kubectl-create&fieldValidation=Strict"
    status, created = http(k.server.base_url, "POST",
                           k.path(gv, resource, ns=namespaced) + qs, body)
    assert status == 201, "setup: JSON twin POST: HTTP %s %s" % (status, created)
    got = k.get(gv, resource, name, ns=namespaced)
    want = k.get(gv, resource, twin, ns=namespaced)
    a, b = _normalized(got, name), _normalized(want, twin)
    assert a == b, ("`kubectl %s` stored a different object than the same object sent as "
                    "JSON\n kubectl: %s\n JSON:    %s"
                    % (" ".join(create_args), json.dumps(a, sort_keys=True),
                       json.dumps(b, sort_keys=True)))


def cell_create_deployment(k):
    k.ok("create", "deployment", "cd-web", "--image=nginx:1.25", "--replicas=2", "--port=80",
         expect="deployment.apps/cd-web created")
    dep = k.get("apps/v1", "deployments", "cd-web")
    assert dep is not None
    assert dep["metadata"]["labels"] == {"app": "cd-web"}, dep["metadata"]
    assert dep["spec"]["replicas"] == 2, dep["spec"]
    assert dep["spec"]["selector"] == {"matchLabels": {"app": "cd-web"}}, dep["spec"]
    tpl = dep["spec"]["template"]
    assert tpl["metadata"]["labels"] == {"app": "cd-web"}, tpl
    c = tpl["spec"]["containers"]
    assert [(x["name"], x["image"], x["ports"]) for x in c] == \
        [("nginx", "nginx:1.25", [{"containerPort": 80, "protocol": "TCP"}])], c
    assert dep["spec"]["strategy"]["type"] == "RollingUpdate", dep["spec"]
    _same_as_json_twin(k, "apps/v1", "deployments", "cd-web",
                       ("create", "deployment", "cd-web", "--image=nginx:1.25", "--replicas=2",
                        "--port=80"))


def cell_create_service_clusterip(k):
    k.ok("create", "service", "clusterip", "cs", "--tcp=80:8080", "--tcp=443:8443",
         expect="service/cs created")
    svc = k.get("v1", "services", "cs")
    assert svc is not None
    assert svc["spec"]["type"] == "ClusterIP", svc
    assert svc["spec"]["selector"] == {"app": "cs"}, svc
    assert svc["metadata"]["labels"] == {"app": "cs"}, svc
    assert [(p["name"], p["port"], p["targetPort"], p["protocol"]) for p in svc["spec"]["ports"]] \
        == [("80-8080", 80, 8080, "TCP"), ("443-8443", 443, 8443, "TCP")], svc
    assert re.fullmatch(r"\d+\.\d+\.\d+\.\d+", svc["spec"].get("clusterIP", "")), svc
    _same_as_json_twin(k, "v1", "services", "cs",
                       ("create", "service", "clusterip", "cs", "--tcp=80:8080", "--tcp=443:8443"))
    # headless variant
    k.ok("create", "service", "clusterip", "cs-headless", "--clusterip=None",
         expect="service/cs-headless created")
    assert k.get("v1", "services", "cs-headless")["spec"]["clusterIP"] == "None"


def cell_create_configmap(k):
    k.ok("create", "configmap", "cc", "--from-literal=greeting=hello world",
         "--from-literal=count=3", expect="configmap/cc created")
    cm = k.get("v1", "configmaps", "cc")
    assert cm is not None and cm["data"] == {"greeting": "hello world", "count": "3"}, cm
    _same_as_json_twin(k, "v1", "configmaps", "cc",
                       ("create", "configmap", "cc", "--from-literal=greeting=hello world",
                        "--from-literal=count=3"))
    # the imperative generators wrap the server's error
    k.fails("create", "configmap", "cc", "--from-literal=a=b",
            err_has='error: failed to create configmap: configmaps "cc" already exists')


def cell_create_secret_generic(k):
    k.ok("create", "secret", "generic", "cs", "--from-literal=user=admin",
         "--from-literal=pw=s3cr3t", expect="secret/cs created")
    s = k.get("v1", "secrets", "cs")
    assert s is not None and s["type"] == "Opaque", s
    assert s["data"] == {"user": "YWRtaW4=", "pw": "czNjcjN0"}, s
    _same_as_json_twin(k, "v1", "secrets", "cs",
                       ("create", "secret", "generic", "cs", "--from-literal=user=admin",
                        "--from-literal=pw=s3cr3t"))
    k.ok("create", "secret", "generic", "cs-typed", "--type=example.com/custom",
         "--from-literal=k=v", expect="secret/cs-typed created")
    s = k.get("v1", "secrets", "cs-typed")
    assert s["type"] == "example.com/custom" and s["data"] == {"k": "dg=="}, s


def cell_create_namespace(k):
    name = k.ns + "-created"
    k.ok("create", "namespace", name, ns=False, expect="namespace/%s created" % name)
    obj = k.get("v1", "namespaces", name, ns=False)
    assert obj is not None and obj["status"]["phase"] == "Active", obj
    assert obj["metadata"]["labels"]["kubernetes.io/metadata.name"] == name, obj
    _same_as_json_twin(k, "v1", "namespaces", name, ("create", "namespace", name),
                       namespaced=False)
    k.fails("create", "namespace", name, ns=False,
            err_has='Error from server (AlreadyExists): namespaces "%s" already exists' % name)


# Row order of the matrix.
COMMANDS = [
    ("create-f", cell_create_f),
    ("apply", cell_apply),
    ("get-w", cell_get_w),
    ("wait-condition", cell_wait_condition),
    ("wait-delete", cell_wait_delete),
    ("label", cell_label),
    ("annotate", cell_annotate),
    ("patch-strategic", cell_patch_strategic),
    ("patch-merge", cell_patch_merge),
    ("patch-json", cell_patch_json),
    ("scale", cell_scale),
    ("delete-configmap", cell_delete_configmap),
    ("delete-pod", cell_delete_pod),
    ("delete-l", cell_delete_l),
    ("create-deployment", cell_create_deployment),
    ("create-service-clusterip", cell_create_service_clusterip),
    ("create-configmap", cell_create_configmap),
    ("create-secret-generic", cell_create_secret_generic),
    ("create-namespace", cell_create_namespace),
]
COMMAND_IDS = [c for c, _ in COMMANDS]
_CELL_FN = dict(COMMANDS)
CELLS = [(v, c) for v in VERSIONS for c in COMMAND_IDS]


@pytest.mark.parametrize("version,command", CELLS, ids=["%s-%s" % vc for vc in CELLS])
def test_cell(env, version, command, record_property):
    k = env.k(version)
    k.metrics = {}
    try:
        _CELL_FN[command](k)
    finally:
        for name, value in k.metrics.items():
            record_property(name, value)
