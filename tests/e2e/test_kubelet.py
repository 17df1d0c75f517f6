"""kubelet-lite against a real containerd: node registration and heartbeats, pod status,
logs through the API server, restarts and back-off, images that are not there, probes,
resources and security context, volumes, hooks, deletion, adoption after a restart,
orphan clean-up, and the fake runtime.

Pods are bound by setting spec.nodeName (no scheduler is needed). The node runs under a
short temporary directory with its own pod subnet and bridge (tests/harness/real_node.py).
"""
import contextlib
import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

import pytest

from conftest import KUBECTL_BINS

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))
import real_node  # noqa: E402

KUBECTL = KUBECTL_BINS["1.33"]


@contextlib.contextmanager
def started_node(server, prefix, extra_args=()):
    """A real node (containerd + kubelet-lite) on `server`, removed afterwards."""
    workdir = tempfile.mkdtemp(prefix="shk-")
    name = prefix + uuid.uuid4().hex[:6]
    n = real_node.RealNode(workdir, name, server.base_url, real_node.free_subnets(1)[0],
                           kubeconfig=server.node_kubeconfig(name), extra_args=extra_args)
    try:
        n.start()
        yield n
    finally:
        n.stop()
        subprocess.run(["rm", "-rf", workdir])


@pytest.fixture(scope="module")
def node(server):
    with started_node(server, "e2e-node-") as n:
        yield n


@pytest.fixture(scope="module")
def ns(server):
    name = "kubelet-" + uuid.uuid4().hex[:6]
    status, _, body = server.api.post("/api/v1/namespaces", {"metadata": {"name": name}})
    assert status == 201, body
    yield name
    # No namespace controller yet: delete the pods so the node stops them.
    server.api.delete("/api/v1/namespaces/%s/pods" % name)


def kubectl(server, *args, check=True, timeout=60, input=None):
    out = subprocess.run([KUBECTL, "--kubeconfig", server.kubeconfig] + list(args), capture_output=True,
                         text=True, timeout=timeout, input=input,
                         env=dict(os.environ, HOME=os.path.dirname(server.kubeconfig)))
    if check:
        assert out.returncode == 0, "kubectl %s: %s" % (" ".join(args), out.stderr)
    return out


def make_pod(server, node, ns, name, containers, **spec):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": dict({"nodeName": node.name, "containers": containers,
                          "terminationGracePeriodSeconds": 5}, **spec)}
    status, _, obj = server.api.post("/api/v1/namespaces/%s/pods" % ns, body)
    assert status == 201, obj
    return obj


def get_pod(server, ns, name):
    status, _, obj = server.api.get("/api/v1/namespaces/%s/pods/%s" % (ns, name))
    return obj if status == 200 else None


def wait_pod(server, ns, name, pred, timeout=60, what="condition"):
    deadline = time.monotonic() + timeout
    pod = None
    while time.monotonic() < deadline:
        pod = get_pod(server, ns, name)
        if pod is not None and pred(pod):
            return pod
        time.sleep(0.1)
    raise AssertionError("pod %s/%s: %s not met within %ss; last seen:\n%s"
                         % (ns, name, what, timeout, json.dumps(pod and pod.get("status"), indent=1)))


def running(pod):
    return pod["status"].get("phase") == "Running" and all(
        "running" in c["state"] for c in pod["status"].get("containerStatuses", []))


def cstatus(pod, name="c", init=False):
    for c in pod["status"].get("initContainerStatuses" if init else "containerStatuses", []):
        if c["name"] == name:
            return c
    return None


def condition(pod, ctype):
    for c in pod["status"].get("conditions", []):
        if c["type"] == ctype:
            return c
    return None


def pod_log(server, ns, name, query=""):
    status, _, body = server.api.request("GET", "/api/v1/namespaces/%s/pods/%s/log%s" % (ns, name, query))
    return status, body.decode()


def delete_pod(server, ns, name, wait=True, grace=None):
    path = "/api/v1/namespaces/%s/pods/%s" % (ns, name)
    body = {"gracePeriodSeconds": grace} if grace is not None else None
    server.api.delete(path, body)
    if wait:
        deadline = time.monotonic() + 60
        while get_pod(server, ns, name) is not None:
            assert time.monotonic() < deadline, "pod %s not gone within 60 s" % name
            time.sleep(0.1)


TERM_AWARE = "trap 'exit 0' TERM; %s & wait"


def sh(script):
    return ["sh", "-c", script]


# --------------------------------------------------------------------------- node


@pytest.mark.slow
def test_node_registration_and_heartbeat(server, node):
    status, _, n = server.api.get("/api/v1/nodes/" + node.name)
    assert status == 200
    labels = n["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == node.name
    assert labels["kubernetes.io/os"] == "linux"
    assert labels["kubernetes.io/arch"] in ("amd64", "arm64")
    addrs = {a["type"]: a["address"] for a in n["status"]["addresses"]}
    assert addrs["InternalIP"] == "127.0.0.1" and addrs["Hostname"]
    for res in ("cpu", "memory", "pods", "ephemeral-storage"):
        assert res in n["status"]["capacity"] and res in n["status"]["allocatable"], res
    assert n["status"]["capacity"]["cpu"] == str(os.cpu_count())
    assert n["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")
    assert n["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] == node.port
    conds = {c["type"]: c["status"] for c in n["status"]["conditions"]}
    assert conds == {"Ready": "True", "MemoryPressure": "False", "DiskPressure": "False", "PIDPressure": "False"}
    # The lease is renewed every 10 s.
    status, _, lease = server.api.get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/" + node.name)
    assert status == 200 and lease["spec"]["holderIdentity"] == node.name
    assert lease["metadata"]["ownerReferences"][0]["name"] == node.name
    first = lease["spec"]["renewTime"]
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        _, _, lease = server.api.get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/" + node.name)
        if lease["spec"]["renewTime"] != first:
            break
        time.sleep(0.5)
    assert lease["spec"]["renewTime"] != first, "lease not renewed within 15 s"


# --------------------------------------------------------------------------- pods


def test_pod_status_init_containers_env_and_resources(server, node, ns):
    make_pod(server, node, ns, "full", [{
        "name": "c", "image": "busybox",
        "command": sh(TERM_AWARE % "echo MY=$MY POD=$POD_NAME IP=$POD_IP CPU=$CPU; sleep 3600"),
        "env": [{"name": "BASE", "value": "x"}, {"name": "MY", "value": "$(BASE)-y"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}}],
        "resources": {"requests": {"cpu": "100m", "memory": "32Mi"}, "limits": {"cpu": "200m", "memory": "64Mi"}},
    }], initContainers=[{"name": "init", "image": "busybox", "command": sh("echo init-done")}])
    pod = wait_pod(server, ns, "full", running, what="Running")
    st = pod["status"]
    assert st["hostIP"] == "127.0.0.1" and st["hostIPs"] == [{"ip": "127.0.0.1"}]
    assert st["podIP"].startswith(node.subnet.rsplit(".", 1)[0] + "."), st["podIP"]
    assert st["podIPs"] == [{"ip": st["podIP"]}]
    assert st["qosClass"] == "Burstable" and st["startTime"]
    init = cstatus(pod, "init", init=True)
    assert init["state"]["terminated"]["exitCode"] == 0 and init["state"]["terminated"]["reason"] == "Completed"
    c = cstatus(pod)
    assert c["containerID"].startswith("containerd://") and c["imageID"].startswith("sha256:")
    assert c["restartCount"] == 0 and c["image"] == "busybox"
    pod = wait_pod(server, ns, "full", lambda p: condition(p, "Ready")["status"] == "True", what="Ready")
    for ctype in ("PodScheduled", "Initialized", "ContainersReady", "Ready"):
        assert condition(pod, ctype)["status"] == "True", ctype
    assert cstatus(pod)["ready"] is True and cstatus(pod)["started"] is True
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        code, log = pod_log(server, ns, "full")
        if log:
            break
        time.sleep(0.2)
    assert log == "MY=x-y POD=full IP=%s CPU=200\n" % st["podIP"], log
    # Limits became cgroup settings under the pod's cgroup.
    uid = pod["metadata"]["uid"]
    cid = c["containerID"][len("containerd://"):]
    mem = "/sys/fs/cgroup/memory/kubepods/burstable/pod%s/%s/memory.limit_in_bytes" % (uid, cid)
    if os.path.exists(mem):  # cgroup v1
        assert int(open(mem).read()) == 64 * 1024 * 1024
        quota = "/sys/fs/cgroup/cpu/kubepods/burstable/pod%s/%s/cpu.cfs_quota_us" % (uid, cid)
        assert int(open(quota).read()) == 20000
        shares = "/sys/fs/cgroup/cpu/kubepods/burstable/pod%s/%s/cpu.shares" % (uid, cid)
        assert int(open(shares).read()) == 102
    else:  # cgroup v2
        base = "/sys/fs/cgroup/kubepods/burstable/pod%s/%s" % (uid, cid)
        assert int(open(base + "/memory.max").read()) == 64 * 1024 * 1024
    # Events tell the story, as a kubelet's do.
    _, _, evs = server.api.get("/api/v1/namespaces/%s/events?fieldSelector=involvedObject.name=full" % ns)
    reasons = [e["reason"] for e in evs["items"] if e["source"].get("component") == "kubelet"]
    for r in ("Pulled", "Created", "Started"):
        assert r in reasons, reasons
    delete_pod(server, ns, "full")
    assert node.pod_cgroups(uid) == []
    rc, out = node.ctr("containers", "ls", "-q")
    assert cid not in out.split()


@pytest.mark.slow
def test_logs_options_follow_and_errors(server, node, ns):
    make_pod(server, node, ns, "talk", [
        {"name": "c", "image": "busybox", "command": sh(TERM_AWARE % "for i in 1 2 3 4 5; do echo line-$i; done; "
                                                                     # stdout and stderr are separate pipes:
                                                                     # only time orders them in the log.
                                                                     "sleep 1; echo err >&2; sleep 2; echo late; sleep 3600")},
        {"name": "d", "image": "busybox", "command": sh(TERM_AWARE % "sleep 3600")}])
    wait_pod(server, ns, "talk", running, what="Running")
    deadline = time.monotonic() + 10
    log = ""
    while "late" not in log and time.monotonic() < deadline:
        log = kubectl(server, "-n", ns, "logs", "talk", "-c", "c").stdout
        time.sleep(0.2)
    assert log == "line-1\nline-2\nline-3\nline-4\nline-5\nerr\nlate\n", log
    assert kubectl(server, "-n", ns, "logs", "talk", "-c", "c", "--tail=2").stdout == "err\nlate\n"
    assert kubectl(server, "-n", ns, "logs", "talk", "-c", "c", "--limit-bytes=9").stdout == "line-1\nli"
    stamped = kubectl(server, "-n", ns, "logs", "talk", "-c", "c", "--timestamps", "--tail=1").stdout
    ts, text = stamped.split(" ", 1)
    assert text == "late\n" and ts.startswith(time.strftime("%Y-", time.gmtime())) and ts.endswith("Z"), stamped
    assert kubectl(server, "-n", ns, "logs", "talk", "-c", "c", "--since-time=" + ts).stdout == "late\n"
    # A pod with two containers needs a container name (the API answers 400 and says which).
    code, body = pod_log(server, ns, "talk")
    assert code == 400 and "a container name must be specified for pod talk, choose one of: [c d]" in body, body
    code, body = pod_log(server, ns, "talk", "?container=nope")
    assert code == 400 and "container nope is not valid for pod talk" in body, body
    code, body = pod_log(server, ns, "talk", "?container=c&tailLines=-1")
    assert code == 422 and json.loads(body)["reason"] == "Invalid", body
    code, body = pod_log(server, ns, "talk", "?container=c&sinceSeconds=5&sinceTime=2020-01-01T00:00:00Z")
    assert code == 422, body
    code, body = pod_log(server, ns, "talk", "?container=c&previous=true")
    assert code == 400 and json.loads(body)["message"] == 'previous terminated container "c" in pod "talk" not found', body
    # follow: lines written later arrive on the open stream.
    make_pod(server, node, ns, "ticker", [{"name": "c", "image": "busybox", "command": sh(
        TERM_AWARE % "i=0; while true; do echo tick-$i; i=$((i+1)); sleep 0.2; done")}])
    wait_pod(server, ns, "ticker", running, what="Running")
    proc = subprocess.Popen([KUBECTL, "--kubeconfig", server.kubeconfig, "-n", ns, "logs", "-f", "ticker"],
                            stdout=subprocess.PIPE, text=True)
    try:
        got = [proc.stdout.readline() for _ in range(12)]
    finally:
        proc.kill()
        proc.wait()
    nums = [int(line.strip().split("-")[1]) for line in got]
    assert nums == list(range(nums[0], nums[0] + 12)), got
    delete_pod(server, ns, "ticker", wait=False)
    delete_pod(server, ns, "talk", wait=False)


def watch_waiting_reasons(server, ns, name, seen, stop):
    """Records every waiting reason of container "c" as the pod's watch delivers it."""
    url = "%s/api/v1/namespaces/%s/pods?watch=true&fieldSelector=metadata.name=%s" % (server.base_url, ns, name)
    with urllib.request.urlopen(url, timeout=120, context=server.ssl_context) as resp:
        for line in resp:
            if stop.is_set():
                return
            pod = json.loads(line)["object"]
            waiting = (cstatus(pod) or {}).get("state", {}).get("waiting", {})
            if waiting.get("reason") and (not seen or seen[-1][0] != waiting["reason"]):
                seen.append((waiting["reason"], waiting.get("message", "")))


def test_waiting_container_logs_say_why(server, node, ns):
    seen, stop = [], threading.Event()
    watcher = threading.Thread(target=watch_waiting_reasons, args=(server, ns, "noimage", seen, stop), daemon=True)
    watcher.start()
    time.sleep(0.3)  # the watch is open before the pod exists
    make_pod(server, node, ns, "noimage", [{"name": "c", "image": "example.invalid/none:1"}])
    pod = wait_pod(server, ns, "noimage",
                   lambda p: (cstatus(p) or {}).get("state", {}).get("waiting", {}).get("reason") == "ImagePullBackOff",
                   what="ImagePullBackOff")
    assert pod["status"]["phase"] == "Pending"
    # The first failure is ErrImagePull with the reason; then the back-off, as upstream.
    deadline = time.monotonic() + 10
    while "ImagePullBackOff" not in [r for r, _ in seen] and time.monotonic() < deadline:
        time.sleep(0.1)
    stop.set()
    reasons = [r for r, _ in seen]
    assert "ErrImagePull" in reasons and reasons.index("ErrImagePull") < reasons.index("ImagePullBackOff"), seen
    assert "do not pull images" in seen[reasons.index("ErrImagePull")][1], seen
    assert "Back-off pulling image" in cstatus(pod)["state"]["waiting"]["message"]
    code, body = pod_log(server, ns, "noimage")
    # Upstream's wording per reason (the state alternates as the back-off expires).
    assert code == 400 and ('container \\"c\\" in pod \\"noimage\\" is waiting to start: trying and failing to pull image' in body
                            or "is waiting to start: image can't be pulled" in body), body
    out = kubectl(server, "-n", ns, "logs", "noimage", check=False)
    assert out.returncode != 0 and "Error from server (BadRequest)" in out.stderr, out.stderr
    _, _, evs = server.api.get("/api/v1/namespaces/%s/events?fieldSelector=involvedObject.name=noimage" % ns)
    failed = [e for e in evs["items"] if e["reason"] == "Failed" and "example.invalid/none:1" in e["message"]]
    assert failed and failed[0]["type"] == "Warning", evs["items"]
    delete_pod(server, ns, "noimage")


@pytest.mark.slow
def test_restart_policy_backoff_and_previous_logs(server, node, ns):
    make_pod(server, node, ns, "crash", [{"name": "c", "image": "busybox",
                                          "command": sh("echo run; exit 3")}])
    # First exit restarts at once; the second waits 10 s in CrashLoopBackOff.
    pod = wait_pod(server, ns, "crash", lambda p: (cstatus(p) or {}).get("restartCount", 0) >= 1
                   and "terminated" in cstatus(p).get("lastState", {}), timeout=30, what="one restart")
    last = cstatus(pod)["lastState"]["terminated"]
    assert last["exitCode"] == 3 and last["reason"] == "Error", last
    pod = wait_pod(server, ns, "crash",
                   lambda p: cstatus(p)["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff",
                   timeout=30, what="CrashLoopBackOff")
    assert "back-off 10s restarting failed container=c" in cstatus(pod)["state"]["waiting"]["message"]
    assert pod["status"]["phase"] == "Running"
    code, body = pod_log(server, ns, "crash", "?previous=true")
    assert code == 200 and body == "run\n", (code, body)
    delete_pod(server, ns, "crash", wait=False)
    # OnFailure: a clean exit completes the pod; Never: a failure fails it.
    make_pod(server, node, ns, "once", [{"name": "c", "image": "busybox", "command": sh("exit 0")}],
             restartPolicy="OnFailure")
    pod = wait_pod(server, ns, "once", lambda p: p["status"].get("phase") == "Succeeded", what="Succeeded")
    assert cstatus(pod)["restartCount"] == 0 and cstatus(pod)["state"]["terminated"]["reason"] == "Completed"
    assert condition(pod, "Ready")["reason"] == "PodCompleted"
    make_pod(server, node, ns, "never", [{
        "name": "c", "image": "busybox", "terminationMessagePath": "/tmp/why",
        "command": sh("echo -n because > /tmp/why; exit 7")}], restartPolicy="Never")
    pod = wait_pod(server, ns, "never", lambda p: p["status"].get("phase") == "Failed", what="Failed")
    term = cstatus(pod)["state"]["terminated"]
    assert term["exitCode"] == 7 and term["reason"] == "Error" and term["message"] == "because", term
    delete_pod(server, ns, "once", wait=False)
    delete_pod(server, ns, "never", wait=False)


def test_oom_killed(server, node, ns):
    make_pod(server, node, ns, "oom", [{"name": "c", "image": "busybox", "command": sh("head -c 200m /dev/zero | tail"),
                                        "resources": {"limits": {"memory": "20Mi"}}}], restartPolicy="Never")
    pod = wait_pod(server, ns, "oom", lambda p: p["status"].get("phase") == "Failed", what="Failed")
    term = cstatus(pod)["state"]["terminated"]
    assert term["reason"] == "OOMKilled" and term["exitCode"] == 137, term
    delete_pod(server, ns, "oom", wait=False)


def test_container_that_never_starts_has_no_start_time(server, node, ns):
    # The command is not in the image: the container exits without ever running. Its
    # terminated state has no startedAt (an empty string used to make the API server
    # refuse every later status write, so the pod stayed Pending for ever).
    make_pod(server, node, ns, "nostart", [{"name": "c", "image": "busybox", "command": ["/no/such/program"]}],
             restartPolicy="Never")
    pod = wait_pod(server, ns, "nostart", lambda p: p["status"].get("phase") == "Failed", what="Failed")
    term = cstatus(pod)["state"]["terminated"]
    assert term["exitCode"] != 0 and "startedAt" not in term, term
    delete_pod(server, ns, "nostart", wait=False)


def test_native_sidecar_runs_beside_the_main_container(server, node, ns):
    # An init container with restartPolicy Always is a sidecar (upstream's default since
    # 1.29): it starts, the next init container and then the main container start beside
    # it, it is restarted when it exits whatever the pod's policy, and a Job-like pod
    # succeeds from its main container alone (the sidecar used to keep it at Init:0/2).
    make_pod(server, node, ns, "sidecar",
             [{"name": "c", "image": "busybox", "command": sh(TERM_AWARE % "sleep 3600")}],
             initContainers=[
                 {"name": "log", "image": "busybox", "restartPolicy": "Always",
                  "command": sh(TERM_AWARE % "sleep 3600")},
                 {"name": "setup", "image": "busybox", "command": ["true"]}])
    pod = wait_pod(server, ns, "sidecar", lambda p: running(p) and (condition(p, "Ready") or {}).get("status") == "True",
                   what="Running and Ready")
    side = cstatus(pod, "log", init=True)
    assert "running" in side["state"] and side["started"] and side["ready"], side
    assert cstatus(pod, "setup", init=True)["state"]["terminated"]["exitCode"] == 0
    assert condition(pod, "Initialized")["status"] == "True"
    out = kubectl(server, "get", "pod", "sidecar", "-n", ns, "--no-headers").stdout.split()
    assert out[1:3] == ["2/2", "Running"], out
    delete_pod(server, ns, "sidecar")

    make_pod(server, node, ns, "sidecar-job", [{"name": "c", "image": "busybox", "command": sh("sleep 2")}],
             restartPolicy="Never",
             initContainers=[{"name": "log", "image": "busybox", "restartPolicy": "Always",
                              "command": sh(TERM_AWARE % "sleep 3600")}])
    pod = wait_pod(server, ns, "sidecar-job", lambda p: p["status"].get("phase") == "Succeeded", what="Succeeded")
    assert cstatus(pod)["state"]["terminated"]["exitCode"] == 0
    delete_pod(server, ns, "sidecar-job", wait=False)


@pytest.mark.slow
def test_probes_http_tcp_exec(server, node, ns):
    make_pod(server, node, ns, "web", [{
        "name": "c", "image": "busybox",
        "command": sh(TERM_AWARE % "mkdir -p /www; echo ok > /www/index.html; httpd -f -p 8080 -h /www"),
        "readinessProbe": {"httpGet": {"path": "/index.html", "port": 8080}, "periodSeconds": 1},
        "livenessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1},
        "startupProbe": {"exec": {"command": ["test", "-f", "/www/index.html"]}, "periodSeconds": 1}}])
    pod = wait_pod(server, ns, "web", lambda p: condition(p, "Ready") and condition(p, "Ready")["status"] == "True",
                   what="Ready")
    ip = pod["status"]["podIP"]
    # The host reaches the pod on its bridge.
    import urllib.request
    with urllib.request.urlopen("http://%s:8080/index.html" % ip, timeout=5) as r:
        assert r.read() == b"ok\n"
    # A readiness failure makes the pod unready without restarting it.
    make_pod(server, node, ns, "unready", [{
        "name": "c", "image": "busybox", "command": sh(TERM_AWARE % "sleep 3600"),
        "readinessProbe": {"exec": {"command": ["false"]}, "periodSeconds": 1}}])
    pod = wait_pod(server, ns, "unready", running, what="Running")
    time.sleep(3)
    pod = get_pod(server, ns, "unready")
    assert condition(pod, "Ready")["status"] == "False" and cstatus(pod)["ready"] is False
    assert cstatus(pod)["restartCount"] == 0
    _, _, evs = server.api.get("/api/v1/namespaces/%s/events?fieldSelector=involvedObject.name=unready" % ns)
    assert any(e["reason"] == "Unhealthy" and e["message"].startswith("Readiness probe failed") for e in evs["items"])
    # A failing liveness probe restarts the container.
    make_pod(server, node, ns, "dies", [{
        "name": "c", "image": "busybox", "command": sh(TERM_AWARE % "sleep 3600"),
        "livenessProbe": {"httpGet": {"path": "/", "port": 9999}, "periodSeconds": 1, "failureThreshold": 2}}])
    wait_pod(server, ns, "dies", lambda p: (cstatus(p) or {}).get("restartCount", 0) >= 1, timeout=30,
             what="restart by liveness")
    for name in ("web", "unready", "dies"):
        delete_pod(server, ns, name, wait=False)


def test_security_context_and_volumes(server, node, ns):
    status, _, _ = server.api.post("/api/v1/namespaces/%s/secrets" % ns, {
        "metadata": {"name": "s"}, "data": {"key": "c2VjcmV0LXZhbHVl"}})  # "secret-value"
    assert status == 201
    status, _, _ = server.api.post("/api/v1/namespaces/%s/configmaps" % ns, {
        "metadata": {"name": "cm"}, "data": {"greeting": "hi"}})
    assert status == 201
    script = ("id -u; id -g; cat /s/key; echo; cat /cm/greeting; echo; stat -c %a /s/key; "
              "grep ' /mem ' /proc/mounts | cut -d' ' -f3; cat /labels/labels; echo; "
              "touch /ro-check 2>/dev/null && echo writable || echo read-only; "
              "echo data > /scratch/f && cat /scratch/f; grep -c e2e-alias /etc/hosts")
    make_pod(server, node, ns, "sec", [{
        "name": "c", "image": "busybox", "command": sh(script),
        "securityContext": {"runAsUser": 1000, "runAsGroup": 2000, "readOnlyRootFilesystem": True},
        "volumeMounts": [{"name": "s", "mountPath": "/s"}, {"name": "cm", "mountPath": "/cm"},
                         {"name": "mem", "mountPath": "/mem"}, {"name": "labels", "mountPath": "/labels"},
                         {"name": "scratch", "mountPath": "/scratch"}]}],
        restartPolicy="Never",
        volumes=[{"name": "s", "secret": {"secretName": "s", "defaultMode": 0o440}},
                 {"name": "cm", "configMap": {"name": "cm"}},
                 {"name": "mem", "emptyDir": {"medium": "Memory"}},
                 {"name": "labels", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {
                     "fieldPath": "metadata.labels"}}]}},
                 {"name": "scratch", "emptyDir": {}}],
        hostAliases=[{"ip": "10.1.2.3", "hostnames": ["e2e-alias"]}],
        securityContext={"fsGroup": 2000})
    # the pod has no labels: add one before it starts is racy; the file is then empty
    pod = wait_pod(server, ns, "sec", lambda p: p["status"].get("phase") in ("Succeeded", "Failed"), what="finished")
    assert pod["status"]["phase"] == "Succeeded", cstatus(pod)
    _, log = pod_log(server, ns, "sec")
    assert log.split("\n") == ["1000", "2000", "secret-value", "hi", "440", "tmpfs", "", "read-only", "data", "1",
                               ""], log
    delete_pod(server, ns, "sec", wait=False)


def test_host_network_and_prestop_hook(server, node, ns):
    hook_dir = tempfile.mkdtemp(prefix="shk-hook-")
    try:
        make_pod(server, node, ns, "hostnet", [{
            "name": "c", "image": "busybox", "command": sh(TERM_AWARE % "sleep 3600"),
            "volumeMounts": [{"name": "h", "mountPath": "/hook"}],
            "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "echo stopped > /hook/done"]}}}}],
            hostNetwork=True, volumes=[{"name": "h", "hostPath": {"path": hook_dir, "type": "Directory"}}])
        pod = wait_pod(server, ns, "hostnet", running, what="Running")
        assert pod["status"]["podIP"] == "127.0.0.1"
        delete_pod(server, ns, "hostnet")
        with open(os.path.join(hook_dir, "done")) as f:
            assert f.read() == "stopped\n"
    finally:
        subprocess.run(["rm", "-rf", hook_dir])


def test_active_deadline(server, node, ns):
    make_pod(server, node, ns, "deadline", [{"name": "c", "image": "busybox", "command": sh(TERM_AWARE % "sleep 3600")}],
             activeDeadlineSeconds=3)
    pod = wait_pod(server, ns, "deadline", lambda p: p["status"].get("phase") == "Failed", timeout=30, what="Failed")
    assert pod["status"]["reason"] == "DeadlineExceeded", pod["status"]
    delete_pod(server, ns, "deadline", wait=False)


@pytest.mark.slow
def test_restart_adopts_running_containers_and_collects_orphans(server, node, ns):
    make_pod(server, node, ns, "keep", [{"name": "c", "image": "busybox", "command": sh(TERM_AWARE % "sleep 3600")}])
    make_pod(server, node, ns, "orphan", [{"name": "c", "image": "busybox", "command": sh(TERM_AWARE % "sleep 3600")}])
    make_pod(server, node, ns, "graceful", [{"name": "c", "image": "busybox", "command": sh(TERM_AWARE % "sleep 3600")}])
    before = {n: wait_pod(server, ns, n, running, what="Running") for n in ("keep", "orphan", "graceful")}
    node.stop_kubelet()
    # While the node is down: one pod is force-deleted (gone from the API at once), one
    # is deleted gracefully (it waits for the node).
    server.api.delete("/api/v1/namespaces/%s/pods/orphan" % ns, {"gracePeriodSeconds": 0})
    assert get_pod(server, ns, "orphan") is None
    server.api.delete("/api/v1/namespaces/%s/pods/graceful" % ns)
    assert get_pod(server, ns, "graceful")["metadata"].get("deletionTimestamp")
    node.start_kubelet()
    node.wait_registered()
    # The graceful deletion completes; the running pod keeps its container.
    deadline = time.monotonic() + 30
    while get_pod(server, ns, "graceful") is not None:
        assert time.monotonic() < deadline, "graceful deletion not completed by the restarted node"
        time.sleep(0.2)
    time.sleep(2)
    keep = get_pod(server, ns, "keep")
    assert cstatus(keep)["containerID"] == cstatus(before["keep"])["containerID"]
    assert cstatus(keep)["restartCount"] == 0 and running(keep)
    assert "adopted sandbox" in node.log_tail(20000)
    # The force-deleted pod's sandbox is an orphan: the first sweep removes its container,
    # then its sandbox, then its pod cgroups (in that order, so wait for all of them).
    orphan_cid = cstatus(before["orphan"])["containerID"][len("containerd://"):]
    orphan_uid = before["orphan"]["metadata"]["uid"]
    deadline = time.monotonic() + 45
    while True:
        left_containers = orphan_cid in node.ctr("containers", "ls", "-q")[1].split()
        left_cgroups = node.pod_cgroups(orphan_uid)
        if not left_containers and not left_cgroups:
            break
        assert time.monotonic() < deadline, ("orphan not collected", left_containers, left_cgroups)
        time.sleep(0.5)
    delete_pod(server, ns, "keep", wait=False)


def test_kubelet_port_serves_logs_only_to_the_api_server(server, node, ns):
    make_pod(server, node, ns, "port", [{"name": "c", "image": "busybox", "command": sh(TERM_AWARE % "echo secret-log; sleep 3600")}])
    wait_pod(server, ns, "port", running, what="Running")
    assert pod_log(server, ns, "port")[1] == "secret-log\n"  # through the API server: allowed
    _, _, nodeobj = server.api.get("/api/v1/nodes/" + node.name)
    ip = [a["address"] for a in nodeobj["status"]["addresses"] if a["type"] == "InternalIP"][0]
    port = nodeobj["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"]
    url = "https://%s:%d/containerLogs/%s/port/c" % (ip, port, ns)

    def fetch(identity):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # the kubelet's certificate is self-signed, as upstream's
        if identity:
            ctx.load_cert_chain(os.path.join(server.pki_dir, identity + ".crt"),
                                os.path.join(server.pki_dir, identity + ".key"))
        try:
            with urllib.request.urlopen(url, context=ctx, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    assert fetch("apiserver-kubelet-client") == (200, "secret-log\n")
    assert fetch(None) == (401, "Unauthorized\n")
    assert fetch("admin") == (403, "Forbidden (user=kubernetes-admin, verb=get, resource=nodes, "
                                   "subresource(s)=[proxy])\n")
    # No plain HTTP on the kubelet port.
    with pytest.raises((urllib.error.URLError, ConnectionError, http.client.HTTPException)):
        urllib.request.urlopen(url.replace("https://", "http://"), timeout=10).read()
    delete_pod(server, ns, "port", wait=False)


def test_fake_node_fleet(server, ns):
    """--fake-nodes=N: N registered nodes in one process, each renewing its own Lease; pods
    bound to any of them go Running with an IP; deleting a pod is confirmed by the node."""
    workdir = tempfile.mkdtemp(prefix="shf-")
    prefix = "fleet-" + uuid.uuid4().hex[:6]
    names = ["%s-%d" % (prefix, i) for i in range(3)]
    log = open(os.path.join(workdir, "kubelet.log"), "wb")
    # Cluster-wide credentials: one process writes three nodes' objects.
    proc = subprocess.Popen([real_node.kubelet_bin(), "--kubeconfig", server.kubeconfig, "--hostname-override",
                             prefix, "--runtime=fake", "--fake-nodes=3", "--fake-startup-ms=200",
                             "--node-status-update-frequency=1", "--root-dir", workdir + "/root", "--cpu", "8",
                             "--memory", "16Gi"], stdout=log, stderr=subprocess.STDOUT)
    lease = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/"
    try:
        deadline = time.monotonic() + 30
        while not all(server.api.get(lease + n)[0] == 200 for n in names):
            assert proc.poll() is None and time.monotonic() < deadline, open(log.name).read()
            time.sleep(0.2)
        for n in names:
            node = server.api.get("/api/v1/nodes/" + n)[2]
            assert node["status"]["capacity"]["cpu"] == "8"
            assert node["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("fake://")
            assert [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"] == ["True"]
        # Every node's lease is renewed (once a second here).
        first = {n: server.api.get(lease + n)[2]["spec"]["renewTime"] for n in names}
        deadline = time.monotonic() + 10
        while any(server.api.get(lease + n)[2]["spec"]["renewTime"] == first[n] for n in names):
            assert time.monotonic() < deadline, "a lease was not renewed: %s" % first
            time.sleep(0.3)
        for i, n in enumerate(names):
            body = {"metadata": {"name": "p%d" % i},
                    "spec": {"nodeName": n, "initContainers": [{"name": "init", "image": "any"}],
                             "containers": [{"name": "c", "image": "img:%d" % i}]}}
            assert server.api.post("/api/v1/namespaces/%s/pods" % ns, body)[0] == 201
        ips = set()
        for i, n in enumerate(names):
            pod = wait_pod(server, ns, "p%d" % i, running, timeout=20, what="Running")
            assert condition(pod, "Ready")["status"] == "True"
            assert pod["status"]["containerStatuses"][0]["image"] == "img:%d" % i
            assert pod["status"]["containerStatuses"][0]["ready"] is True
            assert pod["status"]["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
            ips.add(pod["status"]["podIP"])
        assert len(ips) == 3, ips
        # A pod bound to a node outside the fleet is left alone.
        other = {"metadata": {"name": "elsewhere"},
                 "spec": {"nodeName": prefix + "-99", "containers": [{"name": "c", "image": "any"}]}}
        assert server.api.post("/api/v1/namespaces/%s/pods" % ns, other)[0] == 201
        # Graceful deletes: the fake node confirms, so the pods disappear.
        for i in range(3):
            delete_pod(server, ns, "p%d" % i)
        assert get_pod(server, ns, "elsewhere")["status"].get("phase") == "Pending"
        delete_pod(server, ns, "elsewhere", grace=0)
    except AssertionError as e:
        log.flush()
        raise AssertionError("%s\nkubelet-lite log:\n%s" % (e, open(log.name).read()[:20000])) from None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
        subprocess.run(["rm", "-rf", workdir])
    assert proc.returncode == 0


def test_fake_runtime_node(server, ns):
    workdir = tempfile.mkdtemp(prefix="shf-")
    name = "fake-" + uuid.uuid4().hex[:6]
    kubeconfig = server.node_kubeconfig(name)
    log = open(os.path.join(workdir, "kubelet.log"), "wb")
    proc = subprocess.Popen([real_node.kubelet_bin(), "--kubeconfig", kubeconfig, "--hostname-override", name,
                             "--runtime=fake", "--fake-startup-ms=200", "--port", str(real_node.free_port()),
                             "--root-dir", workdir + "/root", "--cpu", "8", "--memory", "16Gi"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while server.api.get("/api/v1/nodes/" + name)[0] != 200:
            assert proc.poll() is None and time.monotonic() < deadline, open(log.name).read()
            time.sleep(0.1)
        n = server.api.get("/api/v1/nodes/" + name)[2]
        assert n["status"]["capacity"]["cpu"] == "8" and n["status"]["capacity"]["memory"] == "16Gi"
        assert n["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("fake://")
        body = {"metadata": {"name": "f"}, "spec": {"nodeName": name, "containers": [{"name": "c", "image": "any"}]}}
        assert server.api.post("/api/v1/namespaces/%s/pods" % ns, body)[0] == 201
        pod = wait_pod(server, ns, "f", running, timeout=20, what="Running")
        assert pod["status"]["podIP"] and condition(pod, "Ready")["status"] == "True"
        delete_pod(server, ns, "f")
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        log.close()
        subprocess.run(["rm", "-rf", workdir])
