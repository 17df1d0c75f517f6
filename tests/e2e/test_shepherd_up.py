"""`shepherd up`: starts the API server, scheduler, controller manager, containerd and one real node; a
`kubectl run` pod runs and logs; deleting it removes its containers, sandbox and cgroups;
stopping leaves nothing running."""
import pytest
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

# Every test here takes more than a few seconds (scripts/test.sh --quick leaves them out).
pytestmark = pytest.mark.slow

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "harness"))
import real_node  # noqa: E402
import etcd_cluster  # noqa: E402

KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"


def _logs(data):
    detail = ""
    logs = os.path.join(data, "logs")
    for name in sorted(os.listdir(logs)):
        with open(os.path.join(logs, name), errors="replace") as f:
            detail += "\n--- %s ---\n%s" % (name, f.read()[-3000:])
    return detail


def _stop(proc, what, on_hang=None):
    """SIGTERM to `shepherd up`; its output once it exited (fails if it takes over 60 s)."""
    proc.send_signal(signal.SIGTERM)
    try:
        output, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        output, _ = proc.communicate()
        if on_hang:
            on_hang()
        raise AssertionError("%s did not stop within 60 s:\n%s" % (what, output))
    return output


def test_shepherd_up_runs_a_real_pod_and_stops_cleanly():
    shepherd = os.path.join(real_node.bin_dir(), "shepherd")
    # Short path: containerd's socket lives under the data dir.
    with tempfile.TemporaryDirectory(prefix="shup-") as data:
        port = real_node.free_port()
        kubelet_port = real_node.free_port()
        subnet = real_node.free_subnets(1)[0]
        bridge = real_node.free_bridge_name()
        proc = subprocess.Popen([shepherd, "up", "--data-dir", data, "--port", str(port),
                                 "--kubelet-port", str(kubelet_port), "--pod-subnet", subnet,
                                 "--bridge", bridge, "--node-name", "up-node"]
                                + etcd_cluster.storage_args(data),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=dict(os.environ, SHEPHERD_IMAGES_DIR=real_node.images_dir()))
        env = dict(os.environ, HOME=data)
        kubeconfig = os.path.join(data, "kubeconfig")

        def kubectl(*args, check=True, timeout=60):
            out = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig] + list(args),
                                 capture_output=True, text=True, env=env, timeout=timeout)
            if check:
                assert out.returncode == 0, "kubectl %s: %s%s" % (" ".join(args), out.stderr, _logs(data))
            return out

        sock = os.path.join(data, "containerd", "containerd.sock")
        try:
            deadline = time.time() + 90
            while not os.path.exists(kubeconfig) and time.time() < deadline:
                assert proc.poll() is None, proc.stdout.read()
                time.sleep(0.1)
            assert os.path.exists(kubeconfig), "no kubeconfig within 90 s"
            assert os.stat(kubeconfig).st_mode & 0o077 == 0, "kubeconfig must not be readable by others"
            assert "namespace/kube-system" in kubectl("get", "namespaces", "-o", "name").stdout.split()
            # The node registers (kubectl wait fails at once on a node that does not
            # exist yet) and becomes Ready.
            deadline = time.time() + 60
            while kubectl("get", "node", "up-node", check=False).returncode != 0 and time.time() < deadline:
                time.sleep(0.2)
            kubectl("wait", "--for=condition=Ready", "node/up-node", "--timeout=60s")
            # The controller manager gives every namespace its ServiceAccount and CA bundle.
            kubectl("create", "namespace", "up-demo")
            deadline = time.time() + 20
            while time.time() < deadline and kubectl("-n", "up-demo", "get", "serviceaccount/default",
                                                     "configmap/kube-root-ca.crt", check=False).returncode != 0:
                time.sleep(0.2)
            with open(os.path.join(data, "pki", "ca.crt")) as f:
                assert kubectl("-n", "up-demo", "get", "configmap/kube-root-ca.crt",
                               "-o", "jsonpath={.data.ca\\.crt}").stdout == f.read()
            # The acceptance scenario (the shell traps TERM so deletion need not wait for
            # the 30 s grace period; a plain `sh -c` would be killed after it).
            kubectl("run", "hello", "--image=busybox", "--",
                    "sh", "-c", "trap 'exit 0' TERM; echo hello; sleep 3600 & wait")
            kubectl("wait", "--for=condition=Ready", "pod/hello", "--timeout=60s")
            pod_ip = kubectl("get", "pod", "hello", "-o", "jsonpath={.status.podIP}").stdout
            assert pod_ip.startswith(subnet.rsplit(".", 1)[0] + "."), pod_ip
            assert kubectl("get", "pod", "hello", "-o", "jsonpath={.spec.nodeName}").stdout == "up-node"
            deadline = time.time() + 10
            logs = ""
            while logs != "hello\n" and time.time() < deadline:
                logs = kubectl("logs", "hello").stdout
                time.sleep(0.2)
            assert logs == "hello\n", logs
            uid = kubectl("get", "pod", "hello", "-o", "jsonpath={.metadata.uid}").stdout
            ctr = ["ctr", "--address", sock, "-n", "k8s.io"]
            running = subprocess.run(ctr + ["containers", "ls", "-q"], capture_output=True, text=True).stdout.split()
            assert len(running) == 2, running  # the sandbox (pause) and hello
            node = real_node.RealNode(data, "up-node", "", subnet)
            assert node.pod_cgroups(uid), "no pod cgroup while it runs"
            kubectl("delete", "pod", "hello", "--timeout=60s")
            assert kubectl("get", "pod", "hello", check=False).returncode != 0
            left = subprocess.run(ctr + ["containers", "ls", "-q"], capture_output=True, text=True).stdout.split()
            assert left == [], left
            assert node.pod_cgroups(uid) == []
            assert not os.path.exists(os.path.join(data, "kubelet", "pods", uid))
            # The example web application: a Deployment and a Service on the real node.
            kubectl("apply", "-f", os.path.join(REPO, "manifests", "examples", "web-app.yaml"))
            kubectl("rollout", "status", "deployment/hello-web", "--timeout=90s", timeout=100)
            pods = json.loads(kubectl("get", "pods", "-l", "app=hello-web", "-o", "json").stdout)["items"]
            pods = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
            assert len(pods) == 2 and all(p["status"]["phase"] == "Running" for p in pods), pods
            ips = sorted(p["status"]["podIP"] for p in pods)
            deadline = time.time() + 20
            listed = []
            while listed != ips and time.time() < deadline:
                ep = json.loads(kubectl("get", "endpoints", "hello-web", "-o", "json").stdout)
                listed = sorted(a["ip"] for s in ep.get("subsets", []) for a in s.get("addresses", []))
                time.sleep(0.2)
            assert listed == ips, (listed, ips)
            assert ep["subsets"][0]["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
            # The same endpoints as discovery.k8s.io/v1 EndpointSlices, ready on the node.
            deadline = time.time() + 20
            in_slices = []
            while in_slices != ips and time.time() < deadline:
                slices = json.loads(kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=hello-web",
                                            "-o", "json").stdout)["items"]
                in_slices = sorted(e["addresses"][0] for s in slices for e in s.get("endpoints") or []
                                   if e["conditions"]["ready"] and e["nodeName"] == pods[0]["spec"]["nodeName"])
                time.sleep(0.2)
            assert in_slices == ips, (in_slices, slices)
            assert all(s["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}] for s in slices), slices
            for p in pods:  # the web server answers on each pod IP, from the host
                with urllib.request.urlopen("http://%s:8080/" % p["status"]["podIP"], timeout=10) as resp:
                    assert resp.read().decode() == "hello from %s\n" % p["metadata"]["name"]
            kubectl("delete", "-f", os.path.join(REPO, "manifests", "examples", "web-app.yaml"), "--wait=false")
        finally:
            output = _stop(proc, "shepherd up",
                           lambda: subprocess.run([real_node.CONTAINERD_SH, "stop", os.path.join(data, "containerd")]))
        assert proc.returncode == 0, output + _logs(data)
        assert "the cluster is up" in output and "shepherd: stopped" in output, output
        # Orderly shutdown of each component, and nothing left running.
        with open(os.path.join(data, "logs", "apiserver.log")) as f:
            log = f.read()
        assert "shepherd-apiserver stopped" in log, log[-2000:]
        with open(os.path.join(data, "logs", "scheduler.log")) as f:
            assert "has synced" in f.read()
        with open(os.path.join(data, "logs", "controller-manager.log")) as f:
            assert "shepherd-controller-manager stopping" in f.read()
        with open(os.path.join(data, "logs", "kubelet.log")) as f:
            assert "stopping (containers keep running)" in f.read()
        assert not os.path.exists(sock)
        assert not os.path.exists("/sys/class/net/" + bridge), "the pod bridge is left behind"


def _free_port_run(count):
    """A base port with `count` consecutive free loopback ports after it."""
    import socket
    for _ in range(50):
        base = real_node.free_port()
        if base + count > 65535:
            continue
        ok = True
        for p in range(base, base + count):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise RuntimeError("no run of %d free ports" % count)


def test_shepherd_up_etcd_runs_three_members_and_two_api_servers():
    shepherd = os.path.join(real_node.bin_dir(), "shepherd")
    with tempfile.TemporaryDirectory(prefix="shupe-") as data:
        port = _free_port_run(2)
        etcd_port = _free_port_run(6)
        proc = subprocess.Popen([shepherd, "up", "--data-dir", data, "--port", str(port), "--node=false",
                                 "--etcd", "--etcd-port", str(etcd_port)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        kubeconfig = os.path.join(data, "kubeconfig")
        env = dict(os.environ, HOME=data)

        def kubectl(*args, server=None, check=True):
            cmd = [KUBECTL, "--kubeconfig", kubeconfig] + (["--server", server] if server else []) + list(args)
            out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
            if check:
                assert out.returncode == 0, "kubectl %s: %s%s" % (" ".join(args), out.stderr, _logs(data))
            return out

        first = "https://127.0.0.1:%d" % port
        second = "https://127.0.0.1:%d" % (port + 1)
        try:
            deadline = time.time() + 90
            while not os.path.exists(kubeconfig) and time.time() < deadline:
                assert proc.poll() is None, proc.stdout.read()
                time.sleep(0.1)
            assert os.path.exists(kubeconfig), "no kubeconfig within 90 s" + _logs(data)
            # The three members have their data under the data dir.
            for i in range(3):
                assert os.path.isdir(os.path.join(data, "etcd", "m%d" % i, "member")), os.listdir(data)
            # A write through one API server is read through the other at once.
            kubectl("create", "configmap", "shared", "--from-literal=k=v", server=first)
            assert kubectl("get", "configmap", "shared", "-o", "jsonpath={.data.k}", server=second).stdout == "v"
            # default/kubernetes lists both servers.
            deadline = time.time() + 20
            ports = []
            while ports != [port, port + 1] and time.time() < deadline:
                ep = json.loads(kubectl("get", "endpoints", "kubernetes", "-o", "json", server=second).stdout)
                ports = sorted(s["ports"][0]["port"] for s in ep.get("subsets", []))
                time.sleep(0.2)
            assert ports == [port, port + 1], ep
            # The controller manager (on the server list) works: a Deployment gets its ReplicaSet.
            kubectl("create", "deployment", "d", "--image=busybox", "--replicas=1")
            deadline = time.time() + 30
            while time.time() < deadline and not kubectl("get", "rs", "-l", "app=d", "-o", "name",
                                                           check=False).stdout.strip():
                time.sleep(0.2)
            assert kubectl("get", "rs", "-l", "app=d", "-o", "name").stdout.strip(), _logs(data)
        finally:
            output = _stop(proc, "shepherd up --etcd")
        assert proc.returncode == 0, output + _logs(data)
        assert "objects are kept in etcd" in output and "shepherd: stopped" in output, output
        for name in ("apiserver.log", "apiserver-2.log"):
            with open(os.path.join(data, "logs", name)) as f:
                assert "shepherd-apiserver stopped" in f.read()
        # Nothing of the cluster is left running.
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    with open("/proc/%s/cmdline" % p, "rb") as f:
                        assert data.encode() not in f.read(), "process %s still runs" % p
                except OSError:
                    pass
