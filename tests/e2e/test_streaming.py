"""Streaming through the API server, kubelet-lite and containerd's streaming server, with
stock kubectl: exec (both output streams, exit codes, 10 MB of stdin, a TTY), cp both
ways, port-forward carrying HTTP to busybox httpd (to the pod and through a service),
attach, run -it --rm, 50 concurrent execs beside other requests, and the ends of
sessions (client gone, idle timeout).

kubectl 1.27 and 1.29 speak SPDY/3.1 (passed through to the runtime); 1.30 and 1.33 speak
WebSocket v5.channel.k8s.io, translated to SPDY by the API server (port-forward: SPDY in
WebSocket messages from 1.31). Each version runs the same checks.
"""
import hashlib
import json
import os
import re
import subprocess
import threading
import time
import urllib.request

import pytest

from test_kubelet import make_pod, ns, running, sh, started_node, wait_pod  # noqa: F401 (fixtures)

IDLE_TIMEOUT = 12  # the node's --streaming-connection-idle-timeout, seconds

# The four versions run every check; exec and port-forward run on every version
# (the protocol changes at 1.30 for exec and at 1.31 for port-forward).
ALL_VERSIONS = {v: "/usr/lib/google-cloud-sdk/bin/kubectl." + v for v in
                ("1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33")}
VERSIONS = {v: ALL_VERSIONS[v] for v in ("1.27", "1.29", "1.30", "1.33")}


def kubectl_cmd(server, version, *args):
    return [ALL_VERSIONS[version], "--kubeconfig", server.kubeconfig] + list(args)


def kenv(server):
    return dict(os.environ, HOME=os.path.dirname(server.kubeconfig))


def run(server, version, *args, input=None, timeout=120, text=True):
    return subprocess.run(kubectl_cmd(server, version, *args), capture_output=True, input=input,
                          timeout=timeout, text=text, env=kenv(server))


def in_terminal(server, argv, keys, settle, timeout, rows=37, cols=101):
    """Runs kubectl under `script` (so it has a terminal of rows x cols), types `keys` after
    `settle` seconds; returns (exit code, output)."""
    cmd = "stty rows %d cols %d; " % (rows, cols) + " ".join("'%s'" % a for a in argv)
    proc = subprocess.Popen(["script", "-qec", cmd, "/dev/null"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=kenv(server))
    try:
        time.sleep(settle)
        proc.stdin.write(keys)
        proc.stdin.flush()
        out, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out.decode(errors="replace")


@pytest.fixture(scope="module")
def node(server):
    """A real node with kubelet-lite's default idle timeout (4 h, as upstream's)."""
    with started_node(server, "stream-node-") as n:
        yield n


@pytest.fixture(scope="module")
def idle_node(server):
    """A real node whose kubelet-lite closes sessions idle for IDLE_TIMEOUT seconds. A node
    of its own: a session that waits on containerd's exec Start is idle too, and under the
    50 concurrent execs that wait can pass IDLE_TIMEOUT (docs/notes.md, streaming)."""
    with started_node(server, "stream-idle-", ["--streaming-connection-idle-timeout=%ds" % IDLE_TIMEOUT]) as n:
        yield n


def start_box(server, node, ns, name):
    """A long-running busybox pod serving /www over httpd on port 80."""
    make_pod(server, node, ns, name, [{
        "name": "c", "image": "busybox",
        "command": sh("mkdir -p /www && echo hello-from-httpd > /www/index.html && "
                      "trap 'exit 0' TERM; httpd -f -p 80 -h /www & wait")}])
    wait_pod(server, ns, name, running, what="Running")
    return name


@pytest.fixture(scope="module")
def box(server, node, ns):
    return start_box(server, node, ns, "box")


@pytest.fixture(scope="module")
def idle_box(server, idle_node, ns):
    return start_box(server, idle_node, ns, "idle-box")


@pytest.mark.parametrize("version", sorted(ALL_VERSIONS))
def test_exec_streams_and_exit_code(server, ns, box, version):
    out = run(server, version, "-n", ns, "exec", box, "--", "sh", "-c", "echo out; echo err >&2; exit 3")
    assert out.stdout == "out\n", out.stderr
    assert "err\n" in out.stderr
    assert out.returncode == 3, out.stderr
    ok = run(server, version, "-n", ns, "exec", box, "--", "echo", "fine")
    assert (ok.returncode, ok.stdout) == (0, "fine\n"), ok.stderr


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_exec_stdin_10mb_through_sha256sum(server, ns, box, version):
    data = os.urandom(10 * 1024 * 1024)
    out = run(server, version, "-n", ns, "exec", "-i", box, "--", "sha256sum", input=data, text=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0].decode() == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_exec_tty_under_script(server, ns, box, version):
    # kubectl has a terminal; the shell in the pod gets one too, of the same size (the
    # resize stream / channel 4).
    rc, text = in_terminal(server, kubectl_cmd(server, version, "-n", ns, "exec", "-it", box, "--", "sh"),
                           b"tty; stty size; echo answer-$((6*7)); exit 4\n", 2, 60)
    assert "answer-42" in text, text
    assert re.search(r"/dev/pts/\d+", text), text
    assert "\n37 101" in text.replace("\r", ""), text
    assert rc == 4, text


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_cp_10mb_both_ways(server, ns, box, version, tmp_path):
    src = tmp_path / "in.bin"
    data = os.urandom(10 * 1024 * 1024)
    src.write_bytes(data)
    target = "/tmp/cp-%s.bin" % version
    up = run(server, version, "cp", str(src), "%s/%s:%s" % (ns, box, target), timeout=180)
    assert up.returncode == 0, up.stderr
    remote = run(server, version, "-n", ns, "exec", box, "--", "sha256sum", target)
    assert remote.stdout.split()[0] == hashlib.sha256(data).hexdigest()
    back = tmp_path / "out.bin"
    down = run(server, version, "cp", "%s/%s:%s" % (ns, box, target), str(back), timeout=180)
    assert down.returncode == 0, down.stderr
    assert hashlib.sha256(back.read_bytes()).hexdigest() == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("version", sorted(ALL_VERSIONS))
def test_port_forward_carries_http(server, ns, box, version):
    proc = subprocess.Popen(kubectl_cmd(server, version, "-n", ns, "port-forward", "pod/" + box, ":80"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=kenv(server))
    try:
        line = proc.stdout.readline()
        m = re.search(r"Forwarding from 127\.0\.0\.1:(\d+) -> 80", line)
        assert m, line + proc.stderr.read() if proc.poll() is not None else line
        port = int(m.group(1))
        for _ in range(3):  # each request is a new connection: a new stream pair
            with urllib.request.urlopen("http://127.0.0.1:%d/index.html" % port, timeout=20) as r:
                assert r.read() == b"hello-from-httpd\n"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("version", ["1.27", "1.33"])
def test_port_forward_to_a_service(server, ns, box, version):
    # kubectl resolves svc/NAME itself: a pod from the selector, the service port mapped to
    # its targetPort; the stream then goes to that pod like any port-forward.
    svc = "box-svc-" + version.replace(".", "")
    assert run(server, version, "-n", ns, "label", "--overwrite", "pod/" + box, "app=box").returncode == 0
    status, _, obj = server.api.post("/api/v1/namespaces/%s/services" % ns, {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": svc},
        "spec": {"selector": {"app": "box"}, "ports": [{"port": 8080, "targetPort": 80}]}})
    assert status == 201, obj
    proc = subprocess.Popen(kubectl_cmd(server, version, "-n", ns, "port-forward", "svc/" + svc, ":8080"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=kenv(server))
    try:
        line = proc.stdout.readline()
        m = re.search(r"Forwarding from 127\.0\.0\.1:(\d+) -> 80$", line.strip())
        assert m, line + proc.stderr.read() if proc.poll() is not None else line
        with urllib.request.urlopen("http://127.0.0.1:%s/index.html" % m.group(1), timeout=20) as r:
            assert r.read() == b"hello-from-httpd\n"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_attach_pipes_stdin_and_output(server, node, ns, version):
    name = "attach-" + version.replace(".", "")
    # The container ends after one line, which ends the attach (as upstream's: an attach
    # lasts as long as the container's output).
    make_pod(server, node, ns, name, [{"name": "c", "image": "busybox", "stdin": True, "stdinOnce": True,
                                       "command": ["sh", "-c", "read line; echo got:$line"]}],
             restartPolicy="Never")
    wait_pod(server, ns, name, running, what="Running")
    out = run(server, version, "-n", ns, "attach", "-i", name, input="hello-attach\n", timeout=60)
    assert "got:hello-attach" in out.stdout, (out.stdout, out.stderr)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_run_it_rm_cleans_up(server, node, ns, version):
    name = "run-" + version.replace(".", "")
    overrides = json.dumps({"apiVersion": "v1", "spec": {"nodeName": node.name}})
    _, text = in_terminal(server, kubectl_cmd(server, version, "-n", ns, "run", name, "-it", "--rm", "--restart=Never",
                                              "--image=busybox", "--overrides=" + overrides, "--", "sh"),
                          b"echo inside-$((40+2)); exit\n", 4, 90)
    assert "inside-42" in text, text
    assert 'pod "%s" deleted' % name in text, text
    deadline = time.monotonic() + 60
    while True:
        status, _, _ = server.api.get("/api/v1/namespaces/%s/pods/%s" % (ns, name))
        if status == 404:
            break
        assert time.monotonic() < deadline, "pod %s still there" % name
        time.sleep(0.5)


@pytest.mark.slow
def test_fifty_concurrent_execs_while_serving(server, ns, box):
    results = []

    def one(i):
        version = sorted(VERSIONS)[i % len(VERSIONS)]
        out = run(server, version, "-n", ns, "exec", box, "--", "sh", "-c", "sleep 2; echo n-%d" % i, timeout=180)
        results.append((i, out.returncode, out.stdout, out.stderr))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(50)]
    for t in threads:
        t.start()
    # The API server keeps answering meanwhile.
    latencies = []
    while any(t.is_alive() for t in threads):
        t0 = time.monotonic()
        status, _, _ = server.api.get("/api/v1/namespaces/%s/pods/%s" % (ns, box))
        latencies.append(time.monotonic() - t0)
        assert status == 200
        time.sleep(0.05)
    for t in threads:
        t.join()
    bad = [r for r in results if r[1] != 0 or r[2] != "n-%d\n" % r[0]]
    assert len(results) == 50 and not bad, bad[:3]
    assert latencies and max(latencies) < 5, max(latencies)


def exec_processes(server, ns, pod, pattern):
    out = subprocess.run(kubectl_cmd(server, "1.33", "-n", ns, "exec", pod, "--", "ps", "-o", "pid,args"),
                         capture_output=True, text=True, env=kenv(server), timeout=60)
    return [l for l in out.stdout.splitlines() if pattern in l]


@pytest.mark.parametrize("version", ["1.27", "1.33"])
def test_vanished_client_releases_the_session(server, ns, box, version):
    marker = "vanish-%s" % version.replace(".", "")
    proc = subprocess.Popen(kubectl_cmd(server, version, "-n", ns, "exec", "-i", box, "--", "sh", "-c",
                                        "cat > /dev/null; echo " + marker),
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=kenv(server))
    deadline = time.monotonic() + 90  # containerd's exec Start can stall for tens of seconds
    while not exec_processes(server, ns, box, marker):
        assert time.monotonic() < deadline, "exec never started"
        time.sleep(0.5)
    proc.kill()  # no goodbye: the connection just drops
    proc.wait()
    deadline = time.monotonic() + 30
    while exec_processes(server, ns, box, marker):
        assert time.monotonic() < deadline, "the exec'd shell outlived its client"
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["1.27", "1.33"])
def test_idle_session_is_closed(server, ns, idle_box, version):
    # stdin stays open and silent: only keep-alive pings move (kubectl's own, every 5 s),
    # which do not count; the node closes the session after its idle timeout.
    marker = "idle-%s" % version.replace(".", "")
    t0 = time.monotonic()
    proc = subprocess.Popen(kubectl_cmd(server, version, "-n", ns, "exec", "-i", idle_box, "--", "sh", "-c",
                                        "cat > /dev/null; echo " + marker),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=kenv(server))
    try:
        proc.wait(timeout=IDLE_TIMEOUT + 30)
    finally:
        if proc.poll() is None:
            proc.kill()
    elapsed = time.monotonic() - t0
    assert elapsed >= IDLE_TIMEOUT - 1, "ended after %.1f s, before the idle timeout" % elapsed
    deadline = time.monotonic() + 30
    while exec_processes(server, ns, idle_box, marker):
        assert time.monotonic() < deadline, "the idle session's shell is still running"
        time.sleep(0.5)


def test_bad_stream_requests_get_a_status(server, ns, box):
    spdy = {"Connection": "Upgrade", "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "v4.channel.k8s.io"}
    base = "/api/v1/namespaces/%s/pods/" % ns
    cases = [
        (base + box + "/exec?command=ls&stdout=true&container=nope", spdy, 400,
         "container nope is not valid for pod box"),
        (base + box + "/exec?stdout=true", spdy, 400, "you must specify at least 1 command"),
        (base + box + "/exec?command=ls", spdy, 400, "you must specify at least 1 of stdin, stdout, stderr"),
        (base + box + "/exec?command=ls&stdout=true", {}, 400, "Upgrade request required"),
        (base + "missing/exec?command=ls&stdout=true", spdy, 404, 'pods "missing" not found'),
    ]
    for path, headers, code, message in cases:
        status, _, body = server.api.request("POST", path, headers=headers)
        st = json.loads(body)
        assert (status, st["kind"], st["code"]) == (code, "Status", code), (path, body)
        assert st["message"] == message, (path, body)
