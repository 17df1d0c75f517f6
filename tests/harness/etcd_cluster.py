"""The one etcd launcher of the Python suites (the C++ tests and benchmarks have
tests/support/etcd_process): Debian's etcd (3.4) members on free loopback ports (picked
again when one was taken before etcd bound it), each with its data under a directory the
caller owns or, without one, a temporary directory removed when the cluster stops. A
cluster that fails to start is stopped before the error is raised; members are stopped by
PID. Optionally HTTPS with client certificates (EtcdTls).

storage_args(data_dir) gives the API server flags of the storage backend a test run uses:
nothing (the embedded SQLite store), or, when SHEPHERD_ETCD_SERVERS is set, that etcd
with a key prefix of its own per data directory (so servers restarted on the same data
directory find their objects again, and no two test servers share keys).

Command line (scripts/test.sh uses it for the etcd pass):
  etcd_cluster.py serve --dir DIR [--members N] --endpoints-file FILE
runs a cluster until SIGTERM/SIGINT and writes its client URLs, comma-separated, to FILE
once every member is healthy.
"""

import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

ETCD_BIN = "/usr/bin/etcd"
STARTUP_TIMEOUT = 60.0


def storage_args(data_dir):
    servers = os.environ.get("SHEPHERD_ETCD_SERVERS", "")
    if not servers:
        return []
    digest = hashlib.sha1(os.path.realpath(data_dir).encode()).hexdigest()[:16]
    return ["--etcd-servers", servers, "--etcd-prefix", "/shepherd-test/" + digest]


def free_port():
    """A loopback port that was free a moment ago (etcd cannot be told to pick one)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MemberExited(RuntimeError):
    """A member exited while the cluster was starting (e.g. its port was taken)."""


class EtcdTls:
    """HTTPS for clients: etcd serves cert_file/key_file and requires a client certificate
    signed by ca_file; client_cert/client_key are what the harness itself presents."""

    def __init__(self, ca_file, cert_file, key_file, client_cert, client_key):
        self.ca_file, self.cert_file, self.key_file = ca_file, cert_file, key_file
        self.client_cert, self.client_key = client_cert, client_key

    def args(self):
        return ["--cert-file", self.cert_file, "--key-file", self.key_file,
                "--trusted-ca-file", self.ca_file, "--client-cert-auth"]

    def context(self):
        ctx = ssl.create_default_context(cafile=self.ca_file)
        ctx.load_cert_chain(self.client_cert, self.client_key)
        return ctx


class Member:
    """One member: on loopback with free ports, or in a test host's network namespace
    (netns_hosts.NetnsHosts) with its client and peer addresses there."""

    def __init__(self, name, directory, hosts=None, index=0, tls=None):
        self.name = name
        self.dir = directory
        self.proc = None
        self.tls = tls
        self.log_path = os.path.join(directory, name + ".log")
        if hosts is None:
            self.client_host = self.peer_host = "127.0.0.1"
            self.pick_ports()
            self.exec_prefix = []
        else:  # a namespace of its own: the ports are free there
            self.client_host, self.peer_host = hosts.client_ip(index), hosts.peer_ip(index)
            self.client_port, self.peer_port = 2379, 2380
            self.exec_prefix = hosts.exec_prefix(index)

    @property
    def on_loopback(self):
        return not self.exec_prefix

    def pick_ports(self):
        self.client_port = free_port()
        self.peer_port = free_port()
        while self.peer_port == self.client_port:
            self.peer_port = free_port()

    @property
    def client_url(self):
        return "%s://%s:%d" % ("https" if self.tls else "http", self.client_host, self.client_port)

    @property
    def peer_url(self):
        return "http://%s:%d" % (self.peer_host, self.peer_port)

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def _open(self, req, timeout):
        return urllib.request.urlopen(req, timeout=timeout, context=self.tls.context() if self.tls else None)

    def healthy(self, timeout=2.0):
        try:
            with self._open(self.client_url + "/health", timeout) as r:
                return json.loads(r.read()).get("health") == "true"
        except (OSError, ValueError):
            return False

    def status(self, timeout=2.0):
        """etcd's /v3/maintenance/status answer (member id, leader id), or None."""
        req = urllib.request.Request(self.client_url + "/v3/maintenance/status", data=b"{}",
                                     headers={"Content-Type": "application/json"})
        try:
            with self._open(req, timeout) as r:
                return json.loads(r.read())
        except (OSError, ValueError):
            return None

    def is_leader(self):
        st = self.status()
        return bool(st) and st.get("leader") == st.get("header", {}).get("member_id")


class EtcdCluster:
    """`members` etcd members on loopback; start() returns once every one is healthy.
    Without a directory, the data is in a temporary one that stop() removes."""

    def __init__(self, directory=None, members=1, hosts=None, tls=None,
                 progress_notify_interval="1s"):
        self._temporary = directory is None
        if self._temporary:
            directory = tempfile.mkdtemp(prefix="shepherd-etcd-")
        os.makedirs(directory, exist_ok=True)
        self.dir = directory
        self.progress_notify_interval = progress_notify_interval
        self.members = [Member("m%d" % i, directory, hosts, i, tls) for i in range(members)]
        self._started_once = set()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def endpoints(self):
        return ",".join(m.client_url for m in self.members)

    def _initial_cluster(self):
        return ",".join("%s=%s" % (m.name, m.peer_url) for m in self.members)

    def start_member(self, m):
        assert not m.running(), m.name + " is running"
        state = "existing" if m.name in self._started_once else "new"
        self._started_once.add(m.name)
        args = m.exec_prefix + [ETCD_BIN, "--name", m.name, "--data-dir", os.path.join(self.dir, m.name + ".data"),
                "--listen-client-urls", m.client_url, "--advertise-client-urls", m.client_url,
                "--listen-peer-urls", m.peer_url, "--initial-advertise-peer-urls", m.peer_url,
                "--initial-cluster", self._initial_cluster(), "--initial-cluster-state", state,
                "--initial-cluster-token", "shepherd-test", "--enable-grpc-gateway=true",
                "--experimental-watch-progress-notify-interval=" + self.progress_notify_interval,
                "--log-level=warn", "--quota-backend-bytes=4294967296"] + (m.tls.args() if m.tls else [])
        with open(m.log_path, "ab") as log:
            m.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def start(self, attempts=3):
        """Starts every member and waits until each is healthy. A loopback member whose
        port was taken before etcd bound it exits: the cluster starts again on new ports.
        On failure every member is stopped (and a temporary directory removed)."""
        try:
            for attempt in range(attempts):
                for m in self.members:
                    self.start_member(m)
                try:
                    self.wait_healthy(self.members)
                    return self
                except MemberExited:
                    if attempt == attempts - 1 or not all(m.on_loopback for m in self.members):
                        raise
                    self._stop_members()
                    self._started_once.clear()
                    for m in self.members:
                        shutil.rmtree(os.path.join(self.dir, m.name + ".data"), ignore_errors=True)
                        m.pick_ports()
        except BaseException:
            self.stop()
            raise

    def wait_healthy(self, members, timeout=STARTUP_TIMEOUT):
        deadline = time.monotonic() + timeout
        for m in members:
            while not m.healthy():
                if not m.running():
                    raise MemberExited("etcd member %s exited:\n%s" % (m.name, self.log_tail(m)))
                if time.monotonic() > deadline:
                    raise RuntimeError("etcd member %s not healthy after %ss:\n%s"
                                       % (m.name, timeout, self.log_tail(m)))
                time.sleep(0.1)

    def leader(self, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for m in self.members:
                if m.running() and m.is_leader():
                    return m
            time.sleep(0.1)
        raise RuntimeError("no etcd leader after %ss" % timeout)

    def kill_member(self, m, sig=signal.SIGKILL):
        if m.running():
            m.proc.send_signal(sig)
            m.proc.wait(timeout=30)

    def _stop_members(self):
        """SIGTERM (by PID) to every running member, SIGKILL after 15 s; reaps them."""
        for m in self.members:
            if m.running():
                m.proc.terminate()
        for m in self.members:
            if m.proc is None:
                continue
            try:
                m.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                m.proc.kill()
                m.proc.wait()

    def stop(self):
        self._stop_members()
        if self._temporary:
            shutil.rmtree(self.dir, ignore_errors=True)

    def log_tail(self, m, limit=3000):
        try:
            with open(m.log_path, errors="replace") as f:
                return f.read()[-limit:]
        except OSError:
            return "(no log)"


def _serve(argv):
    ap = argparse.ArgumentParser(prog="etcd_cluster.py serve")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--members", type=int, default=1)
    ap.add_argument("--endpoints-file", required=True)
    args = ap.parse_args(argv)
    cluster = EtcdCluster(args.dir, args.members)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    try:
        cluster.start()
        tmp = args.endpoints_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(cluster.endpoints + "\n")
        os.rename(tmp, args.endpoints_file)
        while not stop:
            if not all(m.running() for m in cluster.members):
                print("etcd_cluster: a member exited", file=sys.stderr)
                return 1
            time.sleep(0.5)
        return 0
    finally:
        cluster.stop()


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "serve":
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(_serve(sys.argv[2:]))
