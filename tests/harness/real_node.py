"""Real worker nodes for test clusters: a private containerd (scripts/containerd.sh) and a
kubelet-lite process per node, on a pod subnet and bridge no other instance uses.

Used by the end-to-end and conformance fixtures. Everything a node makes lives under its
own directory; stop() ends the kubelet by PID, then has containerd.sh remove every
container, sandbox, mount, bridge and lease of the node, also after a failed test.

Environment:
  SHEPHERD_APISERVER   path of shepherd-apiserver; kubelet-lite is taken from the same
                       directory (default build/cmd)
  SHEPHERD_KUBELET     path of kubelet-lite (overrides the above)
  SHEPHERD_IMAGES_DIR  where the offline images are built once and shared by all nodes
                       (default <build dir>/images)
  SHEPHERD_TEST_SUBNETS  LOW-HIGH: the third octets of 10.199.X.0/24 this run's nodes use
                       (default 100-249; 1-99 and 250-254 are left to runs by hand beside
                       the suite, e.g. SHEPHERD_TEST_SUBNETS=250-251 for one test module)
"""

import os
import random
import signal
import socket
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONTAINERD_SH = os.path.join(REPO, "scripts", "containerd.sh")
STOP_GRACE = 15.0


def bin_dir():
    apiserver = os.environ.get("SHEPHERD_APISERVER",
                               os.path.join(REPO, "build", "cmd", "shepherd-apiserver"))
    return os.path.dirname(apiserver)


def kubelet_bin():
    return os.environ.get("SHEPHERD_KUBELET", os.path.join(bin_dir(), "kubelet-lite"))


def images_dir():
    return os.environ.get("SHEPHERD_IMAGES_DIR",
                          os.path.join(os.path.dirname(bin_dir()), "images"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _routed_prefixes():
    out = subprocess.run(["ip", "-4", "route", "show"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _subnet_range():
    """Third octets this run may use: SHEPHERD_TEST_SUBNETS="LOW-HIGH" (inclusive, within
    1-254; the suite itself uses only 100-249) when suites run side by side (scripts/test.sh gives each its own range, so two
    processes never pick the same free subnet at once); else all of 100-249."""
    spec = os.environ.get("SHEPHERD_TEST_SUBNETS", "")
    if not spec:
        return 100, 249
    low, high = (int(x) for x in spec.split("-"))
    if not 1 <= low <= high <= 254:
        raise ValueError("SHEPHERD_TEST_SUBNETS=%r: want LOW-HIGH within 1-254" % spec)
    return low, high


def free_subnets(count):
    """`count` /24 subnets 10.199.X.0/24 (X in this run's range) that nothing routes."""
    used = _routed_prefixes()
    low, high = _subnet_range()
    size = high - low + 1
    start = random.randrange(size)
    found = []
    for i in range(size):
        subnet = "10.199.%d.0/24" % (low + (start + i) % size)
        if subnet not in used:
            found.append(subnet)
            if len(found) == count:
                return found
    raise RuntimeError("no free 10.199.%d-%d.0/24 subnet for test nodes" % (low, high))


def free_bridge_name():
    """A bridge name (at most 15 characters) that no interface has."""
    existing = set(os.listdir("/sys/class/net"))
    while True:
        name = "shb%06x" % random.randrange(1 << 24)
        if name not in existing:
            return name


def write_kubeconfig(path, server_url):
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n"
                "    server: %s\ncontexts:\n- name: test\n  context:\n    cluster: test\n"
                "    user: test\ncurrent-context: test\nusers:\n- name: test\n  user: {}\n"
                % server_url)
    os.chmod(path, 0o600)


def _tail(path, n=4000):
    try:
        with open(path, "rb") as f:
            return f.read()[-n:].decode(errors="replace")
    except OSError:
        return ""


class RealNode:
    """One node: containerd under ``<workdir>/rt`` and kubelet-lite named ``name``."""

    def __init__(self, workdir, name, server_url, subnet, bridge=None, extra_args=(), kubeconfig=None):
        self.workdir = workdir
        # A ready kubeconfig (e.g. the node's certificate identity); else an anonymous one.
        self.kubeconfig_source = kubeconfig
        self.name = name
        self.server_url = server_url
        self.subnet = subnet
        self.bridge = bridge or free_bridge_name()
        self.runtime_dir = os.path.join(workdir, "rt")
        self.root_dir = os.path.join(workdir, "kubelet")
        self.kubeconfig = os.path.join(workdir, "kubeconfig")
        self.log_path = os.path.join(workdir, "kubelet.log")
        self.runtime_log = os.path.join(workdir, "containerd-script.log")
        self.port = None
        self.proc = None
        self.extra_args = list(extra_args)
        self.runtime_started = False

    @property
    def socket(self):
        return os.path.join(self.runtime_dir, "containerd.sock")

    def _script(self, *args, timeout=180):
        env = dict(os.environ, SHEPHERD_IMAGES_DIR=images_dir())
        with open(self.runtime_log, "ab") as log:
            return subprocess.run([CONTAINERD_SH] + list(args), stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, env=env, timeout=timeout).returncode

    def start_runtime(self):
        os.makedirs(self.workdir, exist_ok=True)
        rc = self._script("start", self.runtime_dir, "--subnet", self.subnet, "--bridge", self.bridge)
        self.runtime_started = True
        if rc != 0:
            raise RuntimeError("containerd for node %s did not start (exit %d):\n%s"
                               % (self.name, rc, _tail(self.runtime_log)))

    def start_kubelet(self, args=()):
        if self.kubeconfig_source:
            with open(self.kubeconfig_source) as src, open(self.kubeconfig, "w") as dst:
                dst.write(src.read())
            os.chmod(self.kubeconfig, 0o600)
        else:
            write_kubeconfig(self.kubeconfig, self.server_url)
        if self.port is None:
            self.port = free_port()
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [kubelet_bin(), "--kubeconfig", self.kubeconfig, "--hostname-override", self.name,
                 "--port", str(self.port), "--node-ip", "127.0.0.1",
                 "--container-runtime-endpoint", "unix://" + self.socket,
                 "--root-dir", self.root_dir] + self.extra_args + list(args),
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        finally:
            log.close()

    def wait_registered(self, timeout=60.0):
        """Until kubelet-lite logs that the node is ready (it registered and serves)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("kubelet-lite %s exited with %s:\n%s"
                                   % (self.name, self.proc.returncode, self.log_tail()))
            if b"node %s ready" % self.name.encode() in _tail(self.log_path, 1 << 20).encode():
                return
            time.sleep(0.05)
        raise RuntimeError("kubelet-lite %s not ready within %ss:\n%s"
                           % (self.name, timeout, self.log_tail()))

    def start(self):
        self.start_runtime()
        self.start_kubelet()
        self.wait_registered()
        return self

    def stop_kubelet(self):
        """SIGTERM by PID (SIGKILL after STOP_GRACE); the node's containers keep running."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return proc.returncode

    def kill_kubelet(self):
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def stop(self):
        self.stop_kubelet()
        if self.runtime_started:
            self._script("stop", self.runtime_dir)
            self.runtime_started = False

    def log_tail(self, n=4000):
        return _tail(self.log_path, n)

    def ctr(self, *args):
        """`ctr -n k8s.io ...` against this node's containerd; (returncode, stdout)."""
        out = subprocess.run(["ctr", "--address", self.socket, "-n", "k8s.io"] + list(args),
                             capture_output=True, text=True, timeout=30)
        return out.returncode, out.stdout

    def pod_cgroups(self, uid):
        """Cgroup directories of the pod that still exist (any hierarchy, any QoS tier)."""
        found = []
        base = "/sys/fs/cgroup"
        for hierarchy in sorted(os.listdir(base)):
            for tier in ("", "/burstable", "/besteffort"):
                path = "%s/%s/kubepods%s/pod%s" % (base, hierarchy, tier, uid)
                if os.path.isdir(path):
                    found.append(path)
        for tier in ("", "/burstable", "/besteffort"):
            path = "%s/kubepods%s/pod%s" % (base, tier, uid)
            if os.path.isdir(path):
                found.append(path)
        return found


def start_nodes(base_workdir, names, server_url, extra_args=(), kubeconfigs=None):
    """Starts len(names) real nodes with distinct subnets and bridges (``kubeconfigs``: a
    kubeconfig path per node name); on failure stops those that started and raises."""
    subnets = free_subnets(len(names))
    nodes = []
    try:
        for name, subnet in zip(names, subnets):
            node = RealNode(os.path.join(base_workdir, name), name, server_url, subnet,
                            extra_args=extra_args, kubeconfig=(kubeconfigs or {}).get(name))
            nodes.append(node)
            node.start_runtime()
        for node in nodes:
            node.start_kubelet()
        for node in nodes:
            node.wait_registered()
        return nodes
    except BaseException:
        for node in nodes:
            node.stop()
        raise
