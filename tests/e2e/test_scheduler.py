"""shepherd-scheduler against the real API server, with Node objects created through the
API: spreading, unschedulable pods (condition, upstream message, event) that get bound
once a big enough node appears, no double binding under racing schedulers and manual
bindings, a restart mid-run, and leader election between two replicas."""

import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request

import pytest

from conftest import SERVER_BIN

SCHEDULER_BIN = os.path.join(os.path.dirname(SERVER_BIN), "shepherd-scheduler")


class SchedulerProcess:
    def __init__(self, server, workdir, name, *args):
        self.log = os.path.join(workdir, "scheduler-%s.log" % name)
        self.args = [SCHEDULER_BIN, "--kubeconfig", server.kubeconfig] + list(args)
        self.proc = None

    def start(self):
        self.logf = open(self.log, "ab")
        self.proc = subprocess.Popen(self.args, stdout=self.logf, stderr=subprocess.STDOUT)
        return self

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        return self.proc.returncode

    def log_tail(self):
        with open(self.log, "rb") as f:
            return f.read()[-3000:].decode(errors="replace")


@pytest.fixture
def cluster(server_factory, tmp_path):
    """A fresh API server; schedulers started by the test are stopped at teardown."""
    srv = server_factory()
    scheds = []

    def start(name="a", *args):
        s = SchedulerProcess(srv, str(tmp_path), name, *args).start()
        scheds.append(s)
        return s

    yield srv, start
    for s in scheds:
        s.stop()


def make_node(api, name, cpu="4", memory="8Gi", pods="110", labels=None, ready=True):
    body = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": dict({"kubernetes.io/hostname": name}, **(labels or {}))},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
            "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                            "reason": "KubeletReady", "message": "test node"}],
        },
    }
    status, _, obj = api.post("/api/v1/nodes", body)
    assert status == 201, obj


def make_pod(api, ns, name, cpu="100m", memory="64Mi", node_selector=None, scheduler=None):
    spec = {"containers": [{"name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if scheduler:
        spec["schedulerName"] = scheduler
    status, _, obj = api.post("/api/v1/namespaces/%s/pods" % ns,
                              {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
    assert status == 201, obj


def pods(api, ns):
    status, _, obj = api.get("/api/v1/namespaces/%s/pods" % ns)
    assert status == 200
    return obj["items"]


def wait_for(cond, timeout, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


def test_spreads_pods_and_reports_unschedulable_then_binds_on_new_node(cluster):
    srv, start = cluster
    api = srv.api
    for i in range(3):
        make_node(api, "node-%d" % i)
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        metrics_port = sk.getsockname()[1]
    start("a", "--leader-elect=false", "--port=%d" % metrics_port)
    for i in range(30):
        make_pod(api, "default", "spread-%d" % i)
    assert wait_for(lambda: all(p["spec"].get("nodeName") for p in pods(api, "default")), 20), \
        [p["metadata"]["name"] for p in pods(api, "default") if not p["spec"].get("nodeName")]
    per_node = {}
    for p in pods(api, "default"):
        per_node[p["spec"]["nodeName"]] = per_node.get(p["spec"]["nodeName"], 0) + 1
        cond = [c for c in p["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert cond and cond[0]["status"] == "True"
    assert sorted(per_node) == ["node-0", "node-1", "node-2"]
    assert min(per_node.values()) >= 7, per_node  # least-allocated spreads evenly

    # A pod that fits nowhere: condition, upstream's message, a FailedScheduling event.
    make_pod(api, "default", "huge", cpu="6")
    def unschedulable():
        status, _, p = api.get("/api/v1/namespaces/default/pods/huge")
        conds = [c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"]
        return conds[0] if conds and conds[0]["status"] == "False" else None
    cond = wait_for(unschedulable, 10)
    assert cond, "no PodScheduled=False"
    assert cond["reason"] == "Unschedulable"
    assert cond["message"] == "0/3 nodes are available: 3 Insufficient cpu.", cond
    def failed_event():
        _, _, evs = api.get("/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dhuge")
        return [e for e in evs["items"] if e["reason"] == "FailedScheduling"]
    evs = wait_for(failed_event, 10)
    assert evs and evs[0]["type"] == "Warning" and evs[0]["metadata"]["name"].startswith("huge.")
    assert evs[0]["message"] == "0/3 nodes are available: 3 Insufficient cpu."

    # A big enough node appears: bound within 2 s.
    t0 = time.time()
    make_node(api, "big", cpu="16", memory="32Gi")
    bound = wait_for(lambda: api.get("/api/v1/namespaces/default/pods/huge")[2]["spec"].get("nodeName"), 2.0)
    assert bound == "big", "not bound within 2 s of the node appearing"
    elapsed = time.time() - t0
    assert elapsed < 2.0
    _, _, evs = api.get("/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dhuge")
    scheduled = [e for e in evs["items"] if e["reason"] == "Scheduled"]
    assert wait_for(lambda: [e for e in api.get("/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dhuge")[2]["items"]
                             if e["reason"] == "Scheduled"], 5), "no Scheduled event"
    scheduled = [e for e in api.get("/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dhuge")[2]["items"]
                 if e["reason"] == "Scheduled"]
    assert scheduled[0]["message"] == "Successfully assigned default/huge to big"
    # Metrics: attempts by result, the latency histogram, queue depth.
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % metrics_port, timeout=5) as r:
        text = r.read().decode()
    counts = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    assert int(counts['scheduler_schedule_attempts_total{result="scheduled"}']) == 31, text
    assert int(counts['scheduler_schedule_attempts_total{result="unschedulable"}']) >= 1, text
    assert int(counts["scheduler_scheduling_attempt_duration_seconds_count"]) >= 32, text
    assert 'scheduler_pending_pods{queue="active"}' in counts


@pytest.mark.slow
def test_racing_schedulers_and_manual_bindings_never_bind_twice(cluster):
    srv, start = cluster
    api = srv.api
    for i in range(5):
        make_node(api, "race-%d" % i, cpu="64", memory="256Gi", pods="1000")
    # Record every change of every pod from the start.
    changes = {}
    stop = threading.Event()
    _, _, lst = api.get("/api/v1/namespaces/default/pods")
    rv = lst["metadata"]["resourceVersion"]

    def watch():
        req = urllib.request.Request(srv.base_url + "/api/v1/namespaces/default/pods?watch=true&resourceVersion=" + rv)
        with urllib.request.urlopen(req, timeout=120, context=srv.ssl_context) as resp:
            for line in resp:
                ev = json.loads(line)
                o = ev["object"]
                changes.setdefault(o["metadata"]["name"], []).append(o["spec"].get("nodeName", ""))
                if stop.is_set():
                    return
    w = threading.Thread(target=watch, daemon=True)
    w.start()
    # Two schedulers with the same name and no leader election: both race for every pod.
    start("a", "--leader-elect=false")
    start("b", "--leader-elect=false")
    n = 1000
    manual_ok = []

    def creator():
        for i in range(n):
            make_pod(api, "default", "race-%d" % i)
            if i % 10 == 0:  # a human racing the schedulers with a Binding
                status, _, _ = api.post("/api/v1/namespaces/default/pods/race-%d/binding" % i,
                                        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "race-%d" % i},
                                         "target": {"kind": "Node", "name": "race-4"}})
                if status == 201:
                    manual_ok.append(i)
    creator()
    assert wait_for(lambda: sum(1 for p in pods(api, "default") if p["spec"].get("nodeName")) == n, 60)
    time.sleep(1)
    stop.set()
    # One more pod event wakes the watch so it sees stop (same node: changes nothing).
    api.patch("/api/v1/namespaces/default/pods/race-0", {"metadata": {"annotations": {"wake-watch": "1"}}})
    w.join(timeout=30)
    assert not w.is_alive(), "the pod watch never saw the last event"
    for name, seq in changes.items():
        assigned = [x for x in seq if x]
        assert len(set(assigned)) == 1, (name, seq)  # never moved once bound
        first = seq.index(assigned[0])
        assert all(x == assigned[0] for x in seq[first:]), (name, seq)
    for i in manual_ok:
        _, _, p = api.get("/api/v1/namespaces/default/pods/race-%d" % i)
        assert p["spec"]["nodeName"] == "race-4"
    assert len(changes) == n


def test_restarting_the_scheduler_mid_run_loses_no_pod(cluster):
    srv, start = cluster
    api = srv.api
    for i in range(3):
        make_node(api, "r-%d" % i, cpu="64", memory="256Gi", pods="1000")
    s = start("a", "--leader-elect=false")
    n = 400
    for i in range(n):
        make_pod(api, "default", "restart-%d" % i)
        if i == n // 2:
            s.stop(signal.SIGKILL)
            s = start("a2", "--leader-elect=false")
    assert wait_for(lambda: sum(1 for p in pods(api, "default") if p["spec"].get("nodeName")) == n, 60), \
        "unbound: %s" % [p["metadata"]["name"] for p in pods(api, "default") if not p["spec"].get("nodeName")][:10]


def test_leader_election_between_two_replicas(cluster):
    srv, start = cluster
    api = srv.api
    make_node(api, "le-0")
    fast = ["--leader-elect-lease-duration=3", "--leader-elect-renew-deadline=2", "--leader-elect-retry-period=1"]
    a = start("le-a", *fast)
    def holder():
        status, _, lease = api.get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler")
        return lease["spec"].get("holderIdentity") if status == 200 else None
    first = wait_for(holder, 15)
    assert first
    b = start("le-b", *fast)
    make_pod(api, "default", "le-pod-1")
    assert wait_for(lambda: api.get("/api/v1/namespaces/default/pods/le-pod-1")[2]["spec"].get("nodeName"), 10)
    time.sleep(2)
    assert holder() == first  # the second replica only waits
    # The leader goes away (released on SIGTERM): the other replica takes over.
    assert a.stop() == 0, a.log_tail()
    second = wait_for(lambda: holder() not in (None, "", first) and holder(), 10)
    assert second and second != first
    make_pod(api, "default", "le-pod-2")
    assert wait_for(lambda: api.get("/api/v1/namespaces/default/pods/le-pod-2")[2]["spec"].get("nodeName"), 10), b.log_tail()
