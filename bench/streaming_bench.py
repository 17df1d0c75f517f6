#!/usr/bin/python3
"""Streaming benchmark: stock kubectl -> shepherd-apiserver -> kubelet-lite -> containerd's
streaming server, on a real node (a private containerd, runc, CNI bridge) on this machine.

For kubectl 1.27 (SPDY/3.1, relayed byte for byte) and 1.33 (WebSocket v5.channel.k8s.io,
translated to SPDY by the API server; port-forward SPDY inside WebSocket):
  - exec latency: `kubectl exec box -- true`, one at a time, beside `kubectl get pod box`
    (kubectl's own start-up and one request), so the difference is the streaming session;
  - exec throughput: MB through stdin (`exec -i ... cat >/dev/null`) and stdout
    (`exec ... head -c N /dev/zero`), and through a port-forward (HTTP GET of a file from
    busybox httpd in the pod);
  - CPU seconds the API server, kubelet-lite and containerd spent on the throughput runs.
Then N concurrent `kubectl exec` sessions (half of each version): wall time until all end.

Usage (from the repository root, after scripts/build.sh):
  /usr/bin/python3 bench/streaming_bench.py [--latency-runs 30] [--mb 256] [--concurrent 50]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("SHEPHERD_APISERVER", os.path.join(REPO, "build", "cmd", "shepherd-apiserver"))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
sys.path.insert(0, os.path.join(REPO, "tests", "harness"))

from conftest import ShepherdServer  # noqa: E402
from test_kubelet import make_pod, running, sh, started_node, wait_pod  # noqa: E402
from proc_stats import cpu_seconds, rss_mib  # noqa: E402

KUBECTL = {"1.27 (SPDY)": "/usr/lib/google-cloud-sdk/bin/kubectl.1.27",
           "1.33 (WebSocket)": "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"}
NS = "default"
POD = "box"
FILE_MB = 64  # the file httpd serves for the port-forward run


class Bench:
    def __init__(self, server, node, containerd_pid):
        self.server = server
        self.env = dict(os.environ, HOME=os.path.dirname(server.kubeconfig))
        self.pids = {"apiserver": server.pid, "kubelet-lite": node.proc.pid, "containerd": containerd_pid}

    def argv(self, kubectl, *args):
        return [kubectl, "--kubeconfig", self.server.kubeconfig, "-n", NS] + list(args)

    def run(self, kubectl, *args, stdin=None, stdout=subprocess.PIPE, timeout=300):
        out = subprocess.run(self.argv(kubectl, *args), stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                             timeout=timeout, env=self.env)
        if out.returncode != 0:
            raise RuntimeError("kubectl %s: exit %d: %s" % (" ".join(args), out.returncode, out.stderr.decode()))
        return out

    def timed(self, kubectl, *args, **kw):
        t0 = time.monotonic()
        out = self.run(kubectl, *args, **kw)
        return time.monotonic() - t0, out

    def cpu(self):
        return {k: cpu_seconds(p) for k, p in self.pids.items()}

    def latency(self, kubectl, runs):
        get = [self.timed(kubectl, "get", "pod", POD, "-o", "name")[0] * 1000 for _ in range(runs)]
        ex = [self.timed(kubectl, "exec", POD, "--", "true")[0] * 1000 for _ in range(runs)]
        return get, ex

    def stdin_mb_s(self, kubectl, mb, chunk):
        def feed(pipe):
            try:
                for _ in range(mb):
                    pipe.write(chunk)
            finally:
                pipe.close()
        t0 = time.monotonic()
        proc = subprocess.Popen(self.argv(kubectl, "exec", "-i", POD, "--", "sh", "-c", "wc -c"),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env)
        writer = threading.Thread(target=feed, args=(proc.stdin,))
        writer.start()
        out, err = proc.stdout.read(), proc.stderr.read()
        writer.join()
        proc.wait(timeout=60)
        secs = time.monotonic() - t0
        got = int(out.split()[0]) if out.split() else -1
        if proc.returncode != 0 or got != mb * len(chunk):
            raise RuntimeError("exec -i: exit %s, pod counted %d bytes of %d: %s"
                               % (proc.returncode, got, mb * len(chunk), err.decode()))
        return mb / secs

    def stdout_mb_s(self, kubectl, mb):
        t0 = time.monotonic()
        proc = subprocess.Popen(self.argv(kubectl, "exec", POD, "--", "head", "-c", str(mb << 20), "/dev/zero"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env)
        got = 0
        while True:
            b = proc.stdout.read(1 << 20)
            if not b:
                break
            got += len(b)
        err = proc.stderr.read()
        proc.wait(timeout=60)
        secs = time.monotonic() - t0
        if proc.returncode != 0 or got != mb << 20:
            raise RuntimeError("exec stdout: exit %s, %d bytes of %d: %s" % (proc.returncode, got, mb << 20, err))
        return mb / secs

    def port_forward_mb_s(self, kubectl):
        proc = subprocess.Popen(self.argv(kubectl, "port-forward", "pod/" + POD, ":80"), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env)
        try:
            m = re.search(r"Forwarding from 127\.0\.0\.1:(\d+) -> 80", proc.stdout.readline())
            if not m:
                raise RuntimeError("port-forward did not start")
            t0 = time.monotonic()
            got = 0
            with urllib.request.urlopen("http://127.0.0.1:%s/big.bin" % m.group(1), timeout=120) as r:
                while True:
                    b = r.read(1 << 20)
                    if not b:
                        break
                    got += len(b)
            secs = time.monotonic() - t0
            if got != FILE_MB << 20:
                raise RuntimeError("port-forward: %d bytes of %d" % (got, FILE_MB << 20))
            return FILE_MB / secs
        finally:
            proc.terminate()
            proc.wait(timeout=10)

    def concurrent(self, n):
        versions = list(KUBECTL.values())
        errors = []
        times = [0.0] * n

        def one(i):
            try:
                times[i], out = self.timed(versions[i % 2], "exec", POD, "--", "echo", "s%d" % i)
                if out.stdout.decode().strip() != "s%d" % i:
                    errors.append("session %d printed %r" % (i, out.stdout))
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(str(e))
        t0 = time.monotonic()
        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.monotonic() - t0, times, errors


def ms_summary(v):
    v = sorted(v)
    return "median %.0f ms, p99 %.0f ms, min %.0f ms (n=%d)" % (
        statistics.median(v), v[min(len(v) - 1, int(len(v) * 0.99))], v[0], len(v))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency-runs", type=int, default=30)
    ap.add_argument("--mb", type=int, default=256)
    ap.add_argument("--concurrent", type=int, default=50)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="shsb-")
    server = ShepherdServer(work)
    server.start()
    try:
        with started_node(server, "bench-node-") as node:
            with open(os.path.join(node.runtime_dir, "containerd.pid")) as f:
                containerd_pid = int(f.read().strip())
            make_pod(server, node, NS, POD, [{
                "name": "c", "image": "busybox",
                "command": sh("mkdir -p /www && head -c %d /dev/urandom > /www/big.bin && "
                              "trap 'exit 0' TERM; httpd -f -p 80 -h /www & wait" % (FILE_MB << 20))}])
            wait_pod(server, NS, POD, running, what="Running")
            b = Bench(server, node, containerd_pid)
            # httpd starts once the file is written.
            deadline = time.monotonic() + 60
            while subprocess.run(b.argv(KUBECTL["1.33 (WebSocket)"], "exec", POD, "--", "pidof", "httpd"),
                                 capture_output=True, env=b.env).returncode != 0:
                if time.monotonic() > deadline:
                    raise RuntimeError("httpd did not start in the pod")
                time.sleep(0.2)
            chunk = os.urandom(1 << 20)
            for label, kubectl in KUBECTL.items():
                print("=== kubectl %s" % label, flush=True)
                b.run(kubectl, "exec", POD, "--", "true")  # warm: kubectl's discovery cache
                get, ex = b.latency(kubectl, args.latency_runs)
                print("get pod (kubectl start + 1 request): %s" % ms_summary(get))
                print("exec -- true:                        %s" % ms_summary(ex))
                print("exec session cost (median difference): %.0f ms" % (statistics.median(ex) - statistics.median(get)))
                before = b.cpu()
                up = b.stdin_mb_s(kubectl, args.mb, chunk)
                down = b.stdout_mb_s(kubectl, args.mb)
                print("exec -i stdin: %.0f MB/s; exec stdout: %.0f MB/s (%d MB each)" % (up, down, args.mb), flush=True)
                pf = b.port_forward_mb_s(kubectl)
                after = b.cpu()
                print("port-forward: %.0f MB/s (%d MB)" % (pf, FILE_MB))
                print("CPU s for those %d MB: %s" % (2 * args.mb + FILE_MB, ", ".join(
                    "%s %.2f" % (k, after[k] - before[k]) for k in after)), flush=True)
            print("=== %d concurrent exec sessions (half 1.27, half 1.33)" % args.concurrent, flush=True)
            wall, times, errors = b.concurrent(args.concurrent)
            print("all ended after %.2f s; each: %s; errors: %d" % (wall, ms_summary([t * 1000 for t in times]),
                                                                    len(errors)))
            for e in errors[:5]:
                print("  error: " + e)
            print("RSS after: " + ", ".join("%s %.0f MiB" % (k, rss_mib(p)) for k, p in b.pids.items()))
            print("SUMMARY exec median %.0f ms; stdin %.0f MB/s; stdout %.0f MB/s; port-forward %.0f MB/s (last version)"
                  % (statistics.median(ex), up, down, pf))
            server.api.delete("/api/v1/namespaces/%s/pods/%s" % (NS, POD))
            return 1 if errors else 0
    finally:
        server.stop()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
