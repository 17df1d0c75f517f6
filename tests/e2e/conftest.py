"""Shared fixtures for the Shepherd end-to-end tests.

One shepherd-apiserver is started per test session (``server``) for the kubectl and raw
API tests; durability tests start their own servers (``server_factory``) because they kill
and restart them. Every server is stopped by PID at teardown: SIGTERM, then SIGKILL after
10 s.

Run from the repository root:  /usr/bin/python3 -m pytest tests/e2e -q
"""

import contextlib
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "harness"))
import etcd_cluster  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER_BIN = os.environ.get(
    "SHEPHERD_APISERVER", os.path.join(REPO, "build", "cmd", "shepherd-apiserver")
)
SHEPHERD_BIN = os.path.join(os.path.dirname(SERVER_BIN), "shepherd")
KUBECTL_BINS = {
    "1.27": "/usr/lib/google-cloud-sdk/bin/kubectl.1.27",
    "1.33": "/usr/lib/google-cloud-sdk/bin/kubectl.1.33",
}
KUBECTL_VERSIONS = sorted(KUBECTL_BINS)
MANIFESTS = os.path.join(REPO, "manifests", "examples")

STARTUP_TIMEOUT = 30.0
STOP_GRACE = 10.0


def pytest_configure(config):
    config.addinivalue_line("markers", "storage: behaviour that depends on the store (scripts/test.sh "
                            "runs it again with the API server on etcd)")
    config.addinivalue_line("markers", "slow: takes more than about 5 s (scripts/test.sh --quick "
                            "leaves it out)")


# --------------------------------------------------------------------------- HTTP


def http_request(base_url, method, path, body=None, headers=None, content_type=None,
                 timeout=30.0, context=None):
    """Raw HTTP request. ``body`` may be bytes, str, or a JSON-serialisable object;
    ``context`` is the ssl.SSLContext of an https URL.

    Returns (status, headers, body) where headers is an ``email.message.Message``
    (case-insensitive ``get``/``get_all``) and body is bytes.
    """
    hdrs = dict(headers or {})
    data = None
    if body is not None:
        if isinstance(body, (bytes, bytearray)):
            data = bytes(body)
        elif isinstance(body, str):
            data = body.encode()
        else:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
    if content_type is not None:
        hdrs["Content-Type"] = content_type
    if data is not None:
        hdrs.setdefault("Content-Type", "application/json")
    hdrs.setdefault("Accept", "application/json")
    req = urllib.request.Request(base_url + path, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        try:
            payload = e.read()
        except Exception:  # connection closed early (e.g. 413 before the body is read)
            payload = b""
        return e.code, e.headers, payload


class ApiClient:
    """Small convenience wrapper around ``http_request`` bound to one server."""

    def __init__(self, server):
        self._server = server

    @property
    def base_url(self):
        return self._server.base_url

    def request(self, method, path, body=None, headers=None, content_type=None, timeout=30.0):
        return http_request(self.base_url, method, path, body=body, headers=headers,
                            content_type=content_type, timeout=timeout,
                            context=self._server.ssl_context)

    def json(self, method, path, body=None, **kw):
        """Like ``request`` but decodes a JSON body; returns (status, headers, obj)."""
        status, headers, raw = self.request(method, path, body=body, **kw)
        try:
            obj = json.loads(raw) if raw else None
        except ValueError:
            obj = raw
        return status, headers, obj

    def get(self, path, **kw):
        return self.json("GET", path, **kw)

    def post(self, path, body, **kw):
        return self.json("POST", path, body, **kw)

    def put(self, path, body, **kw):
        return self.json("PUT", path, body, **kw)

    def patch(self, path, body, content_type="application/merge-patch+json", **kw):
        return self.json("PATCH", path, body, content_type=content_type, **kw)

    def delete(self, path, body=None, **kw):
        return self.json("DELETE", path, body, **kw)


# --------------------------------------------------------------------------- server


class ShepherdServer:
    """A shepherd-apiserver process on a data dir; can be stopped, killed and restarted."""

    def __init__(self, workdir, data_dir=None, extra_args=(), tls=True):
        self.workdir = workdir
        self.data_dir = data_dir or os.path.join(workdir, "data")
        self.extra_args = list(extra_args)
        # HTTPS with the PKI the server generates in DATA/pki; requests go as the admin.
        self.tls = tls
        self.pki_dir = os.path.join(self.data_dir, "pki")
        self.ssl_context = None
        self.proc = None
        self.port = None
        self.starts = 0
        self.kubeconfig = os.path.join(workdir, "kubeconfig")
        self.api = ApiClient(self)
        # Extra environment for the next start() (e.g. libfaketime to run it "later").
        self.env = {}

    @property
    def base_url(self):
        return "%s://127.0.0.1:%d" % ("https" if self.tls else "http", self.port)

    def node_kubeconfig(self, node):
        """A kubeconfig for node ``node`` (system:node:<node>), its certificate made on demand."""
        subprocess.run([SHEPHERD_BIN, "pki", "--dir", self.pki_dir, "--server", self.base_url, "--nodes", node],
                       check=True, timeout=30)
        return os.path.join(self.pki_dir, "node-%s.kubeconfig" % node)

    def client_context(self, identity="admin"):
        """An SSLContext trusting the cluster CA, with ``identity``'s client certificate
        (None: no certificate)."""
        ctx = ssl.create_default_context(cafile=os.path.join(self.pki_dir, "ca.crt"))
        if identity:
            ctx.load_cert_chain(os.path.join(self.pki_dir, identity + ".crt"),
                                os.path.join(self.pki_dir, identity + ".key"))
        return ctx

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def start(self):
        assert self.proc is None or self.proc.poll() is not None, "server already running"
        self.starts += 1
        port_file = os.path.join(self.workdir, "port.%d" % self.starts)
        self.log_path = os.path.join(self.workdir, "server.%d.log" % self.starts)
        if os.path.exists(port_file):
            os.unlink(port_file)
        self.port = None
        args = [SERVER_BIN, "--data-dir", self.data_dir, "--port", "0",
                "--port-file", port_file] + \
            ([] if "--etcd-servers" in self.extra_args else etcd_cluster.storage_args(self.data_dir)) + ([] if self.tls else ["--plain-http", "--authorization-mode=AlwaysAllow"]) + self.extra_args
        log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=dict(os.environ, **self.env))
        finally:
            log.close()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        try:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError("shepherd-apiserver exited with %s during startup:\n%s"
                                       % (self.proc.returncode, self.log_tail()))
                if time.monotonic() > deadline:
                    raise RuntimeError("shepherd-apiserver not ready after %ss:\n%s"
                                       % (STARTUP_TIMEOUT, self.log_tail()))
                if self.port is None and not self._read_port(port_file):
                    time.sleep(0.05)
                    continue
                if self.tls and self.ssl_context is None:
                    self.ssl_context = self.client_context()
                try:
                    status, _, _ = http_request(self.base_url, "GET", "/readyz", timeout=2,
                                                context=self.ssl_context)
                    if status == 200:
                        break
                except OSError:
                    pass
                time.sleep(0.05)
        except BaseException:
            self.stop()
            raise
        self._write_kubeconfig()
        return self

    def _read_port(self, port_file):
        try:
            with open(port_file) as f:
                text = f.read().strip()
        except OSError:
            return False
        if not text.isdigit():
            return False
        self.port = int(text)
        return True

    def _write_kubeconfig(self):
        if self.tls:  # the admin's kubeconfig, with the CA and its certificate embedded
            subprocess.run([SHEPHERD_BIN, "pki", "--dir", self.pki_dir, "--server", self.base_url],
                           check=True, timeout=30)
            with open(os.path.join(self.pki_dir, "admin.kubeconfig")) as src, \
                    open(self.kubeconfig, "w") as dst:
                dst.write(src.read())
            return
        cfg = (
            "apiVersion: v1\n"
            "kind: Config\n"
            "clusters:\n"
            "- name: shepherd\n"
            "  cluster:\n"
            "    server: %s\n"
            "contexts:\n"
            "- name: shepherd\n"
            "  context:\n"
            "    cluster: shepherd\n"
            "    user: anonymous\n"
            "current-context: shepherd\n"
            "users:\n"
            "- name: anonymous\n"
            "  user: {}\n" % self.base_url
        )
        with open(self.kubeconfig, "w") as f:
            f.write(cfg)

    def log_tail(self, n=4000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace=STOP_GRACE):
        """SIGTERM, then SIGKILL after ``grace`` seconds. Returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                try:
                    os.kill(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        return self.proc.returncode

    def kill(self):
        """kill -9."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        return self.proc.returncode if self.proc else None

    def restart(self, hard=False):
        """Stop (SIGTERM, or SIGKILL when ``hard``) and start again on the same data dir."""
        if hard:
            self.kill()
        else:
            self.stop()
        self.port = None
        return self.start()


@contextlib.contextmanager
def api_servers_on_etcd(workdir, members=1, count=2):
    """A fresh etcd of `members` members and `count` API servers (plain HTTP) sharing it and
    one key prefix; yields (etcd cluster, [servers]) and stops everything afterwards."""
    cluster = etcd_cluster.EtcdCluster(os.path.join(workdir, "etcd"), members=members).start()
    args = ["--etcd-servers", cluster.endpoints, "--etcd-prefix", "/shared-" + uuid.uuid4().hex[:12]]
    servers = []
    try:
        for i in range(count):
            d = os.path.join(workdir, "server-%d" % i)
            os.makedirs(d)
            srv = ShepherdServer(d, extra_args=args, tls=False)
            servers.append(srv)
            srv.start()
        yield cluster, servers
    finally:
        for srv in servers:
            srv.stop()
        cluster.stop()


@pytest.fixture(scope="session")
def server_factory(tmp_path_factory):
    """Start extra servers, each with its own temp data dir; all stopped at teardown."""
    servers = []

    def make(extra_args=(), tls=True):
        workdir = str(tmp_path_factory.mktemp("shepherd"))
        srv = ShepherdServer(workdir, extra_args=extra_args, tls=tls)
        servers.append(srv)
        return srv.start()

    yield make
    bad = []
    for srv in servers:
        was_running = srv.running()
        rc = srv.stop()
        if was_running and rc != 0:
            bad.append("%s (pid %s) exited with %s after SIGTERM; log tail:\n%s"
                       % (srv.workdir, srv.pid, rc, srv.log_tail()))
    if bad:
        # e.g. a sanitizer report or a crash during graceful shutdown
        pytest.fail("\n\n".join(bad), pytrace=False)


@pytest.fixture(scope="session")
def server(server_factory):
    """The shared shepherd-apiserver for the kubectl and raw API tests."""
    if not os.access(SERVER_BIN, os.X_OK):
        pytest.fail("shepherd-apiserver binary not found at %s (set SHEPHERD_APISERVER)"
                    % SERVER_BIN)
    return server_factory()


@pytest.fixture
def restart_server():
    """Restart a server on the same data dir: ``restart_server(srv, hard=False)``."""
    def restart(srv, hard=False):
        return srv.restart(hard=hard)
    return restart


@pytest.fixture(scope="session")
def api(server):
    return server.api


def http(server_or_url, method, path, body=None, headers=None, content_type=None,
         timeout=30.0):
    """Module-level raw HTTP helper: returns (status, headers, body bytes)."""
    base = server_or_url if isinstance(server_or_url, str) else server_or_url.base_url
    return http_request(base, method, path, body=body, headers=headers,
                        content_type=content_type, timeout=timeout)



class Component:
    """A Shepherd program started for a test (scheduler, controller manager, fake node),
    logging to `log_path`; stop() ends it by PID (SIGTERM, then SIGKILL after 20 s)."""

    def __init__(self, argv, log_path):
        self.log_path = log_path
        with open(log_path, "ab") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def tail(self, n=3000):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-n:]

# --------------------------------------------------------------------------- kubectl


def run_kubectl(server, cache_dir, version, *args, input=None, timeout=60):
    """Run stock kubectl ``version`` against ``server``: returns (rc, stdout, stderr)."""
    binary = KUBECTL_BINS[version]
    cmd = [binary, "--kubeconfig", server.kubeconfig, "--cache-dir", cache_dir] + list(args)
    env = dict(os.environ)
    env["HOME"] = os.path.dirname(cache_dir)  # no ~/.kube from the developer's account
    env.pop("KUBECONFIG", None)
    if isinstance(input, str):
        input = input.encode()
    proc = subprocess.run(cmd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout, env=env)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture(scope="module")
def kubectl(server, tmp_path_factory):
    """``kubectl(version, *args, input=None) -> (rc, stdout, stderr)``.

    Uses a fresh --cache-dir (and HOME) per test module and kubectl version, since kubectl
    caches discovery on disk.
    """
    home = str(tmp_path_factory.mktemp("kubectl-home"))

    def kc(version, *args, input=None, timeout=60):
        cache_dir = os.path.join(home, "cache-" + version)
        os.makedirs(cache_dir, exist_ok=True)
        return run_kubectl(server, cache_dir, version, *args, input=input, timeout=timeout)

    return kc
