"""Session fixtures for the ported Kubernetes conformance tests.

One shepherd-apiserver is started for the whole session on a fresh temporary data dir
(``--port 0 --port-file``), the tests wait for ``/readyz`` and talk to it over HTTPS
on 127.0.0.1 with the official Python client, as the cluster admin (certificates from
``shepherd pki``; Node,RBAC authorization as by default). The test cluster also has:

* two real worker nodes, ``conformance-worker-0`` and ``-1``: each a private containerd
  (scripts/containerd.sh, its own pod subnet and bridge) and a kubelet-lite process with
  its own kubelet port (tests/harness/real_node.py). Pods run for real; the fixture waits
  until both nodes are Ready.
* one shepherd-scheduler and one shepherd-controller-manager (``--leader-elect=false``),
  each with its own certificate kubeconfig (system:kube-scheduler,
  system:kube-controller-manager; the kubelets are system:node:<name>),
  started once the nodes exist; the fixture waits until each reports that its caches
  have synced. The controller manager empties and removes deleted namespaces and gives
  every namespace its ServiceAccount ``default`` and ConfigMap ``kube-root-ca.crt``.

At the end the kubelets, the controller manager, the scheduler and then the server are
stopped by PID (SIGTERM,
then SIGKILL after 10 s) and each node's containerd.sh stop removes its containers, also
when tests failed.

Environment:
  SHEPHERD_APISERVER         path of the binary (default build/cmd/shepherd-apiserver)
  SHEPHERD_SCHEDULER         path of the binary (default: beside SHEPHERD_APISERVER)
  SHEPHERD_KUBELET           path of kubelet-lite (default: beside SHEPHERD_APISERVER)
  SHEPHERD_CONFORMANCE_KEEP  keep the temporary data dir and server log (default: removed)
  SHEPHERD_CONFORMANCE_TEST_TIMEOUT  seconds before one test is aborted (default 150)
"""

import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import urllib.request

import sys

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

import e2e_framework
from e2e_framework import Framework, new_api_client

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "harness"))
import real_node  # noqa: E402
import etcd_cluster  # noqa: E402

SERVER_BIN = os.environ.get(
    "SHEPHERD_APISERVER", os.path.join(REPO, "build", "cmd", "shepherd-apiserver"))
SCHEDULER_BIN = os.environ.get(
    "SHEPHERD_SCHEDULER", os.path.join(os.path.dirname(SERVER_BIN), "shepherd-scheduler"))
CONTROLLER_MANAGER_BIN = os.path.join(os.path.dirname(SERVER_BIN), "shepherd-controller-manager")
SHEPHERD_BIN = os.path.join(os.path.dirname(SERVER_BIN), "shepherd")
STARTUP_TIMEOUT = 30.0
STOP_GRACE = 10.0

# The worker nodes of the test cluster (see the module doc).
WORKER_NODES = ["conformance-worker-0", "conformance-worker-1"]
NODE_READY_TIMEOUT = 60.0
# What shepherd-scheduler and shepherd-controller-manager log once their informers have
# synced (cmd/scheduler_main.cc, cmd/controller_manager_main.cc).
COMPONENT_SYNCED = b"has synced"
TEST_TIMEOUT = int(os.environ.get("SHEPHERD_CONFORMANCE_TEST_TIMEOUT", "150"))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "conformance(codename): the upstream Kubernetes conformance codename")
    config.addinivalue_line(
        "markers", "test_timeout(seconds): a longer limit than TEST_TIMEOUT, for a test whose "
        "upstream waits alone take longer")


def _log_tail(path, n=4000):
    try:
        with open(path, "rb") as f:
            return f.read()[-n:].decode(errors="replace")
    except OSError:
        return ""


def _stop_process(proc):
    """SIGTERM by PID, SIGKILL after STOP_GRACE; returns the exit status."""
    if proc is None:
        return None
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    return proc.returncode


class ShepherdServer:
    """The API server over HTTPS with the cluster PKI in ``<workdir>/pki`` (shepherd pki):
    the tests act as the admin (system:masters), every component and node with its own
    certificate, under the default Node,RBAC authorization."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.pki_dir = os.path.join(workdir, "pki")
        self.data_dir = os.path.join(workdir, "data")
        self.port_file = os.path.join(workdir, "port")
        self.log_path = os.path.join(workdir, "server.log")
        self.proc = None
        self.port = None

    @property
    def base_url(self):
        return "https://127.0.0.1:%d" % self.port

    def kubeconfig(self, identity):
        return os.path.join(self.pki_dir, identity + ".kubeconfig")

    def start(self):
        subprocess.run([SHEPHERD_BIN, "pki", "--dir", self.pki_dir, "--nodes", ",".join(WORKER_NODES)],
                       check=True, timeout=60)
        e2e_framework.CLIENT_TLS = (os.path.join(self.pki_dir, "ca.crt"), os.path.join(self.pki_dir, "admin.crt"),
                                    os.path.join(self.pki_dir, "admin.key"))
        ca = ssl.create_default_context(cafile=os.path.join(self.pki_dir, "ca.crt"))
        log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(
                [SERVER_BIN, "--data-dir", self.data_dir, "--port", "0", "--cert-dir", self.pki_dir,
                 "--tls-cert-file", os.path.join(self.pki_dir, "apiserver.crt"),
                 "--tls-private-key-file", os.path.join(self.pki_dir, "apiserver.key"),
                 "--client-ca-file", os.path.join(self.pki_dir, "ca.crt"),
                 "--port-file", self.port_file] + etcd_cluster.storage_args(self.data_dir),
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        finally:
            log.close()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("shepherd-apiserver exited with %s during startup:\n%s"
                                   % (self.proc.returncode, self.log_tail()))
            if time.monotonic() > deadline:
                raise RuntimeError("shepherd-apiserver not ready after %ss:\n%s"
                                   % (STARTUP_TIMEOUT, self.log_tail()))
            if self.port is None:
                try:
                    with open(self.port_file) as f:
                        text = f.read().strip()
                    if text.isdigit():
                        self.port = int(text)
                except OSError:
                    pass
            if self.port is not None:
                try:
                    with urllib.request.urlopen(self.base_url + "/readyz", timeout=2, context=ca) as r:
                        if r.status == 200:
                            # Now the kubeconfigs can name the server.
                            subprocess.run([SHEPHERD_BIN, "pki", "--dir", self.pki_dir, "--server", self.base_url,
                                            "--nodes", ",".join(WORKER_NODES)], check=True, timeout=60)
                            return self
                except OSError:
                    pass
            time.sleep(0.05)

    def log_tail(self, n=4000):
        return _log_tail(self.log_path, n)

    def stop(self):
        """SIGTERM by PID, SIGKILL after STOP_GRACE; returns the exit status."""
        return _stop_process(self.proc)


class ShepherdComponent:
    """One control-plane component (shepherd-scheduler, shepherd-controller-manager) talking
    to the session's server through a kubeconfig; started() returns once it logs that its
    caches have synced."""

    def __init__(self, workdir, kubeconfig, name, binary, args=()):
        self.name = name
        self.binary = binary
        self.args = list(args)
        self.kubeconfig = kubeconfig  # the component's own identity
        self.log_path = os.path.join(workdir, name + ".log")
        self.proc = None

    def start(self):
        log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(
                [self.binary, "--kubeconfig", self.kubeconfig, "--leader-elect=false"] + self.args,
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        finally:
            log.close()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %s during startup:\n%s"
                                   % (self.name, self.proc.returncode, self.log_tail()))
            try:
                with open(self.log_path, "rb") as f:
                    if COMPONENT_SYNCED in f.read():
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("%s did not sync within %ss:\n%s"
                                   % (self.name, STARTUP_TIMEOUT, self.log_tail()))
            time.sleep(0.05)

    def log_tail(self, n=4000):
        return _log_tail(self.log_path, n)

    def stop(self):
        return _stop_process(self.proc)


def wait_nodes_ready(base_url, names):
    """Until every node is registered with Ready=True and allocatable cpu, memory and pods."""
    api = new_api_client(base_url)
    try:
        core = client.CoreV1Api(api)
        deadline = time.monotonic() + NODE_READY_TIMEOUT
        pending = set(names)
        while pending:
            for name in sorted(pending):
                try:
                    node = core.read_node(name)
                except ApiException:
                    continue
                status = node.status
                ready = [c for c in (status.conditions if status else None) or []
                         if c.type == "Ready" and c.status == "True"]
                alloc = (status.allocatable if status else None) or {}
                if ready and all(k in alloc for k in ("cpu", "memory", "pods")):
                    pending.discard(name)
            if pending and time.monotonic() > deadline:
                raise RuntimeError("nodes %s not Ready within %ss" % (sorted(pending), NODE_READY_TIMEOUT))
            if pending:
                time.sleep(0.1)
    finally:
        api.close()


@pytest.fixture(scope="session")
def shepherd():
    if not os.access(SERVER_BIN, os.X_OK):
        pytest.fail("shepherd-apiserver binary not found at %s (set SHEPHERD_APISERVER)"
                    % SERVER_BIN, pytrace=False)
    if not os.access(SCHEDULER_BIN, os.X_OK):
        pytest.fail("shepherd-scheduler binary not found at %s (set SHEPHERD_SCHEDULER)"
                    % SCHEDULER_BIN, pytrace=False)
    if not os.access(CONTROLLER_MANAGER_BIN, os.X_OK):
        pytest.fail("shepherd-controller-manager binary not found at %s" % CONTROLLER_MANAGER_BIN,
                    pytrace=False)
    if not os.access(real_node.kubelet_bin(), os.X_OK):
        pytest.fail("kubelet-lite binary not found at %s (set SHEPHERD_KUBELET)"
                    % real_node.kubelet_bin(), pytrace=False)
    workdir = tempfile.mkdtemp(prefix="shepherd-conf-")
    server = ShepherdServer(workdir)
    scheduler = None
    controller_manager = None
    nodes = []
    try:
        server.start()
        print("\nshepherd-apiserver pid %d on %s (log %s)"
              % (server.proc.pid, server.base_url, server.log_path))
        nodes = real_node.start_nodes(workdir, WORKER_NODES, server.base_url,
                                      kubeconfigs={n: server.kubeconfig("node-" + n) for n in WORKER_NODES})
        wait_nodes_ready(server.base_url, WORKER_NODES)
        server.worker_nodes = list(WORKER_NODES)
        server.nodes = nodes
        scheduler = ShepherdComponent(workdir, server.kubeconfig("scheduler"), "scheduler", SCHEDULER_BIN)
        server.scheduler = scheduler
        scheduler.start()
        controller_manager = ShepherdComponent(
            workdir, server.kubeconfig("controller-manager"), "controller-manager", CONTROLLER_MANAGER_BIN,
            # Upstream's default resync is 5 min, which "should apply changes to a
            # resourcequota status" waits out (it allows 6); a shorter one only ends it sooner.
            ["--root-ca-file", os.path.join(server.pki_dir, "ca.crt"), "--resource-quota-sync-period=30s"])
        server.controller_manager = controller_manager
        controller_manager.start()
        print("shepherd-scheduler pid %d (log %s); shepherd-controller-manager pid %d (log %s); "
              "worker nodes %s"
              % (scheduler.proc.pid, scheduler.log_path, controller_manager.proc.pid,
                 controller_manager.log_path,
                 ", ".join("%s (kubelet pid %d, subnet %s)" % (n.name, n.proc.pid, n.subnet)
                           for n in nodes)))
        yield server
    finally:
        exited = []
        for node in nodes:
            if node.proc is not None and node.proc.poll() is not None:
                exited.append("kubelet-lite %s had exited by itself with status %s:\n%s"
                              % (node.name, node.proc.returncode, node.log_tail()))
            try:
                node.stop()
            except Exception as err:  # keep stopping the rest
                exited.append("stopping node %s failed: %s" % (node.name, err))
        for name, proc_owner in (("shepherd-controller-manager", controller_manager),
                                 ("shepherd-scheduler", scheduler), ("shepherd-apiserver", server)):
            if proc_owner is None or proc_owner.proc is None:
                continue
            was_running = proc_owner.proc.poll() is None
            rc = proc_owner.stop()
            if not was_running:
                exited.append("%s had exited by itself with status %s" % (name, rc))
        if os.environ.get("SHEPHERD_CONFORMANCE_KEEP"):
            print("\nkept %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        for line in exited:
            print("\n" + line)


@pytest.fixture(scope="session")
def api_client(shepherd):
    """An official-client ApiClient configured for the session's server."""
    c = new_api_client(shepherd.base_url)
    yield c
    c.close()


@pytest.fixture
def new_framework(api_client):
    """``new_framework(baseName, podSecurityLevel)``: framework.NewDefaultFramework.

    Creates the per-test namespace at once (upstream's BeforeEach) and deletes every
    namespace the test created at teardown (upstream's AfterEach).
    """
    made = []

    def make(base_name, pod_security_level="restricted"):
        f = Framework(api_client, base_name, pod_security_level)
        made.append(f)
        f.before_each()
        return f

    yield make
    failures = []
    for f in made:
        try:
            f.after_each()
        except BaseException as err:  # pytest.fail's exception is not an Exception
            failures.append(str(err))
    if failures:
        pytest.fail("; ".join(failures), pytrace=False)


class _TestTimeout(BaseException):
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Abort a test that runs longer than TEST_TIMEOUT, or its test_timeout marker's limit
    (SIGALRM in the main thread)."""
    marker = item.get_closest_marker("test_timeout")
    limit = max(TEST_TIMEOUT, int(marker.args[0])) if marker else TEST_TIMEOUT

    def on_alarm(signum, frame):
        raise _TestTimeout("test exceeded %ss" % limit)

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
