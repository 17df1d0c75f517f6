"""`shepherd up`: starts the cluster, writes a working kubeconfig, stops cleanly."""
import os
import signal
import socket
import subprocess
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_shepherd_up_serves_and_stops_cleanly():
    apiserver = os.environ.get("SHEPHERD_APISERVER", os.path.join(REPO, "build", "cmd", "shepherd-apiserver"))
    shepherd = os.path.join(os.path.dirname(apiserver), "shepherd")
    with tempfile.TemporaryDirectory() as data:
        port = _free_port()
        proc = subprocess.Popen([shepherd, "up", "--data-dir", data, "--port", str(port)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            kubeconfig = os.path.join(data, "kubeconfig")
            deadline = time.time() + 60
            while not os.path.exists(kubeconfig) and time.time() < deadline:
                assert proc.poll() is None, proc.stdout.read()
                time.sleep(0.1)
            assert os.path.exists(kubeconfig), "no kubeconfig within 60 s"
            assert os.stat(kubeconfig).st_mode & 0o077 == 0, "kubeconfig must not be readable by others"
            env = dict(os.environ, HOME=data)
            out = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "get", "namespaces", "-o", "name"],
                                 capture_output=True, text=True, env=env, timeout=60)
            assert out.returncode == 0, out.stderr
            assert "namespace/kube-system" in out.stdout.split()
            out = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "create", "configmap", "up-check",
                                  "--from-literal=a=b"], capture_output=True, text=True, env=env, timeout=60)
            assert out.returncode == 0, out.stderr
            # The scheduler runs too: a pod is bound to a (registered) node.
            node = ("apiVersion: v1\nkind: Node\nmetadata:\n  name: up-node\nstatus:\n"
                    "  allocatable: {cpu: '4', memory: 8Gi, pods: '110'}\n"
                    "  conditions:\n  - {type: Ready, status: 'True'}\n")
            out = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "create", "-f", "-"], input=node,
                                 capture_output=True, text=True, env=env, timeout=60)
            assert out.returncode == 0, out.stderr
            out = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "run", "up-pod", "--image=busybox"],
                                 capture_output=True, text=True, env=env, timeout=60)
            assert out.returncode == 0, out.stderr
            bound = ""
            deadline = time.time() + 15
            while not bound and time.time() < deadline:
                bound = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "get", "pod", "up-pod", "-o",
                                        "jsonpath={.spec.nodeName}"], capture_output=True, text=True, env=env,
                                       timeout=60).stdout
                time.sleep(0.2)
            if bound != "up-node":
                logs = os.path.join(data, "logs")
                detail = ""
                for name in sorted(os.listdir(logs)):
                    with open(os.path.join(logs, name), errors="replace") as f:
                        detail += "\n--- %s ---\n%s" % (name, f.read()[-3000:])
                raise AssertionError("pod not bound within 15 s" + detail)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                output, _ = proc.communicate(timeout=40)
            except subprocess.TimeoutExpired:
                proc.kill()
                output, _ = proc.communicate()
                raise AssertionError("shepherd up did not stop within 40 s:\n" + output)
        assert proc.returncode == 0, output
        assert "the cluster is up" in output and "shepherd: stopped" in output, output
        # The API server logged an orderly shutdown.
        with open(os.path.join(data, "logs", "apiserver.log")) as f:
            log = f.read()
        assert "shepherd-apiserver stopped" in log, log[-2000:]
        with open(os.path.join(data, "logs", "scheduler.log")) as f:
            assert "has synced" in f.read()
