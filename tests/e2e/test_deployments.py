"""Deployments end to end on fake nodes: shepherd-apiserver, shepherd-scheduler,
shepherd-controller-manager and two kubelet-lite processes with --runtime=fake (pods go
Running after a short delay, no containers), driven by stock kubectl.

Run from the repository root:  /usr/bin/python3 -m pytest tests/e2e/test_deployments.py -q
"""

import json
import os
import subprocess
import time

import pytest

from conftest import KUBECTL_BINS, REPO, Component

# Every test here takes more than a few seconds (scripts/test.sh --quick leaves them out).
pytestmark = pytest.mark.slow

BIN = os.path.dirname(os.environ.get("SHEPHERD_APISERVER", os.path.join(REPO, "build", "cmd", "shepherd-apiserver")))
KUBECTL = KUBECTL_BINS["1.33"]



def cm_argv(kubeconfig, work):
    return [os.path.join(BIN, "shepherd-controller-manager"), "--kubeconfig", kubeconfig,
            "--root-ca-file", os.path.join(work, "ca.crt"), "--leader-elect=false",
            "--node-monitor-period=1s", "--node-monitor-grace-period=4s"]


def node_argv(kubeconfig, work, i):
    return [os.path.join(BIN, "kubelet-lite"), "--kubeconfig", kubeconfig, "--runtime=fake",
            "--hostname-override", "fake-%d" % i, "--port", "0", "--root-dir", os.path.join(work, "node%d" % i),
            "--fake-startup-ms", "200", "--node-status-update-frequency", "1"]


@pytest.fixture(scope="module")
def cluster(server_factory, tmp_path_factory):
    # Short node-failure timings, so the eviction test takes seconds (upstream: 40 s, 300 s).
    srv = server_factory(["--default-unreachable-toleration-seconds=3", "--default-not-ready-toleration-seconds=3"])
    work = str(tmp_path_factory.mktemp("deploy"))
    kc = srv.kubeconfig
    procs = {
        "scheduler": Component([os.path.join(BIN, "shepherd-scheduler"), "--kubeconfig", kc],
                          os.path.join(work, "scheduler.log")),
        "cm": Component(cm_argv(kc, work), os.path.join(work, "cm.log")),
    }
    for i in (1, 2):
        procs["node%d" % i] = Component(node_argv(kc, work, i), os.path.join(work, "node%d.log" % i))
    c = {"server": srv, "procs": procs, "work": work}
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            out = kubectl(c, "get", "nodes", "--no-headers", check=False).stdout
            if out.count(" Ready ") == 2:
                break
            time.sleep(0.2)
        yield c
    finally:
        bad = []
        for name, p in procs.items():
            rc = p.stop()
            if rc != 0:
                bad.append("%s exited %s:\n%s" % (name, rc, p.tail()))
        assert not bad, "\n".join(bad)


def kubectl(c, *args, check=True, timeout=120):
    out = subprocess.run([KUBECTL, "--kubeconfig", c["server"].kubeconfig] + list(args), capture_output=True,
                         text=True, timeout=timeout, env=dict(os.environ, HOME=c["work"]))
    if check:
        assert out.returncode == 0, "kubectl %s:\n%s\n%s" % (" ".join(args), out.stdout, out.stderr)
    return out


def get_json(c, *args):
    return json.loads(kubectl(c, "get", "-o", "json", *args).stdout)


def images_of_pods(c, ns, selector):
    pods = get_json(c, "-n", ns, "pods", "-l", selector)["items"]
    return sorted(p["spec"]["containers"][0]["image"] for p in pods if not p["metadata"].get("deletionTimestamp"))


def test_rollout_undo_scale_pause_restart(cluster):
    c = cluster
    kubectl(c, "create", "namespace", "roll")
    kubectl(c, "-n", "roll", "create", "deployment", "web", "--image=busybox:1.36", "--replicas=3")
    kubectl(c, "-n", "roll", "rollout", "status", "deploy/web", "--timeout=60s")
    assert images_of_pods(c, "roll", "app=web") == ["busybox:1.36"] * 3
    # Image A -> B.
    kubectl(c, "-n", "roll", "set", "image", "deploy/web", "busybox=busybox:latest")
    out = kubectl(c, "-n", "roll", "rollout", "status", "deploy/web", "--timeout=60s").stdout
    assert 'deployment "web" successfully rolled out' in out
    wait_until(lambda: images_of_pods(c, "roll", "app=web") == ["busybox:latest"] * 3, "pods on image B")
    rss = get_json(c, "-n", "roll", "rs")["items"]
    assert len(rss) == 2
    revisions = {rs["spec"]["template"]["spec"]["containers"][0]["image"]:
                 rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for rs in rss}
    assert revisions == {"busybox:1.36": "1", "busybox:latest": "2"}, revisions
    for rs in rss:
        assert rs["metadata"]["name"] == "web-" + rs["metadata"]["labels"]["pod-template-hash"]
        assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    d = get_json(c, "-n", "roll", "deploy/web")
    conds = {x["type"]: x for x in d["status"]["conditions"]}
    assert conds["Available"]["status"] == "True"
    assert conds["Progressing"]["reason"] == "NewReplicaSetAvailable"
    assert d["status"]["updatedReplicas"] == 3 and d["status"]["availableReplicas"] == 3
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    # Undo goes back to image A (revision 1 becomes 3).
    kubectl(c, "-n", "roll", "rollout", "undo", "deploy/web")
    kubectl(c, "-n", "roll", "rollout", "status", "deploy/web", "--timeout=60s")
    wait_until(lambda: images_of_pods(c, "roll", "app=web") == ["busybox:1.36"] * 3, "pods back on image A")
    history = kubectl(c, "-n", "roll", "rollout", "history", "deploy/web").stdout
    assert [l.split()[0] for l in history.splitlines()[2:] if l.strip()] == ["2", "3"], history
    # Scale to 0, then 5.
    kubectl(c, "-n", "roll", "scale", "deploy/web", "--replicas=0")
    wait_until(lambda: images_of_pods(c, "roll", "app=web") == [], "no pods")
    kubectl(c, "-n", "roll", "scale", "deploy/web", "--replicas=5")
    kubectl(c, "-n", "roll", "rollout", "status", "deploy/web", "--timeout=60s")
    wait_until(lambda: images_of_pods(c, "roll", "app=web") == ["busybox:1.36"] * 5, "5 pods")
    # Paused: a template change makes no new ReplicaSet until resumed.
    kubectl(c, "-n", "roll", "rollout", "pause", "deploy/web")
    kubectl(c, "-n", "roll", "set", "image", "deploy/web", "busybox=busybox:latest")
    time.sleep(1.5)
    assert len(get_json(c, "-n", "roll", "rs")["items"]) == 2
    prog = {x["type"]: x for x in get_json(c, "-n", "roll", "deploy/web")["status"]["conditions"]}["Progressing"]
    assert (prog["status"], prog["reason"]) == ("Unknown", "DeploymentPaused"), prog
    kubectl(c, "-n", "roll", "rollout", "resume", "deploy/web")
    kubectl(c, "-n", "roll", "rollout", "status", "deploy/web", "--timeout=60s")
    wait_until(lambda: images_of_pods(c, "roll", "app=web") == ["busybox:latest"] * 5, "5 pods on B")
    # Restart: a new ReplicaSet with the restartedAt annotation, same image.
    kubectl(c, "-n", "roll", "rollout", "restart", "deploy/web")
    kubectl(c, "-n", "roll", "rollout", "status", "deploy/web", "--timeout=60s")
    rss = get_json(c, "-n", "roll", "rs")["items"]
    active = [rs for rs in rss if rs["spec"]["replicas"] > 0]
    assert len(active) == 1 and "kubectl.kubernetes.io/restartedAt" in \
        active[0]["spec"]["template"]["metadata"]["annotations"], active
    # Deleting the Deployment removes its ReplicaSets and pods (garbage collector).
    kubectl(c, "-n", "roll", "delete", "deploy/web")
    wait_until(lambda: get_json(c, "-n", "roll", "rs")["items"] == [] and
               images_of_pods(c, "roll", "app=web") == [], "ReplicaSets and pods collected")


def wait_until(fn, what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if fn():
            return
        time.sleep(0.2)
    raise AssertionError(what + " not reached within %ss" % timeout)


def test_status_counts_go_back_to_zero(cluster):
    # Counts that drop to zero leave the status (upstream writes it whole); a merge patch
    # that just omitted them used to keep the old numbers for ever.
    c = cluster
    kubectl(c, "create", "namespace", "zero")
    kubectl(c, "-n", "zero", "create", "deployment", "one", "--image=busybox:1.36", "--replicas=1")
    kubectl(c, "-n", "zero", "rollout", "status", "deploy/one", "--timeout=60s")
    st = get_json(c, "-n", "zero", "deploy/one")["status"]
    assert (st.get("replicas"), st.get("readyReplicas"), st.get("availableReplicas")) == (1, 1, 1), st
    kubectl(c, "-n", "zero", "scale", "deploy/one", "--replicas=0")
    counts = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")

    def zero():
        d = get_json(c, "-n", "zero", "deploy/one")
        st = d.get("status", {})
        return (st.get("observedGeneration") == d["metadata"]["generation"]
                and all(st.get(k, 0) == 0 for k in counts))
    wait_until(zero, "status counts at zero")
    d = get_json(c, "-n", "zero", "deploy/one")
    assert not [k for k in counts if k in d["status"]], d["status"]
    # Settled: no status write loop once the counts are right.
    rv = d["metadata"]["resourceVersion"]
    time.sleep(2)
    assert get_json(c, "-n", "zero", "deploy/one")["metadata"]["resourceVersion"] == rv


def test_recreate_stops_old_pods_first(cluster):
    c = cluster
    kubectl(c, "create", "namespace", "recreate")
    kubectl(c, "-n", "recreate", "create", "deployment", "db", "--image=busybox:1.36", "--replicas=2")
    kubectl(c, "-n", "recreate", "patch", "deploy/db", "--type=merge",
            "-p", '{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}')
    kubectl(c, "-n", "recreate", "rollout", "status", "deploy/db", "--timeout=60s")
    kubectl(c, "-n", "recreate", "set", "image", "deploy/db", "busybox=busybox:latest")
    # Never old and new pods at once.
    deadline = time.time() + 60
    while time.time() < deadline:
        images = set(images_of_pods(c, "recreate", "app=db"))
        assert images != {"busybox:1.36", "busybox:latest"}, "old and new pods ran together"
        if images == {"busybox:latest"} and len(images_of_pods(c, "recreate", "app=db")) == 2:
            break
        time.sleep(0.05)
    kubectl(c, "-n", "recreate", "rollout", "status", "deploy/db", "--timeout=60s")


def test_controller_manager_killed_mid_rollout_converges_within_surge(cluster):
    c = cluster
    kubectl(c, "create", "namespace", "crash")
    kubectl(c, "-n", "crash", "create", "deployment", "app", "--image=busybox:1.36", "--replicas=6")
    kubectl(c, "-n", "crash", "rollout", "status", "deploy/app", "--timeout=60s")
    # maxSurge 1, maxUnavailable 0: at most 7 pods may ever exist.
    kubectl(c, "-n", "crash", "patch", "deploy/app", "--type=merge", "-p",
            '{"spec":{"strategy":{"rollingUpdate":{"maxSurge":1,"maxUnavailable":0}}}}')
    kubectl(c, "-n", "crash", "set", "image", "deploy/app", "busybox=busybox:latest")
    most = 0
    time.sleep(0.4)
    c["procs"]["cm"].kill()  # mid-rollout, no clean shutdown
    for _ in range(10):
        most = max(most, len(images_of_pods(c, "crash", "app=app")))
    c["procs"]["cm"] = Component(cm_argv(c["server"].kubeconfig, c["work"]), os.path.join(c["work"], "cm.log"))
    deadline = time.time() + 90
    while time.time() < deadline:
        pods = images_of_pods(c, "crash", "app=app")
        most = max(most, len(pods))
        if pods == ["busybox:latest"] * 6:
            break
        time.sleep(0.05)
    kubectl(c, "-n", "crash", "rollout", "status", "deploy/app", "--timeout=60s")
    assert most <= 7, "saw %d pods with maxSurge 1" % most
    assert images_of_pods(c, "crash", "app=app") == ["busybox:latest"] * 6


def test_lost_node_is_tainted_its_pods_evicted_and_replaced(cluster):
    c = cluster
    # The earlier tests' pods weigh on where the scheduler puts these (least allocated):
    # start from empty nodes, so the 4 pods spread over both.
    kubectl(c, "delete", "namespace", "roll", "recreate", "crash", "--ignore-not-found", "--timeout=90s")
    kubectl(c, "create", "namespace", "evict")
    kubectl(c, "-n", "evict", "create", "deployment", "svc", "--image=busybox:1.36", "--replicas=4")
    kubectl(c, "-n", "evict", "rollout", "status", "deploy/svc", "--timeout=60s")
    pods = get_json(c, "-n", "evict", "pods")["items"]
    # Every pod got the default NoExecute tolerations (DefaultTolerationSeconds admission).
    tol = {(t["key"], t.get("tolerationSeconds")) for t in pods[0]["spec"]["tolerations"]}
    assert {("node.kubernetes.io/not-ready", 3), ("node.kubernetes.io/unreachable", 3)} <= tol, tol
    on2 = [p["metadata"]["name"] for p in pods if p["spec"]["nodeName"] == "fake-2"]
    assert on2, "the scheduler spread no pod to fake-2: %s" % [p["spec"]["nodeName"] for p in pods]
    c["procs"]["node2"].kill()  # the node is lost: no more heartbeats
    node = None
    deadline = time.time() + 30
    while time.time() < deadline:
        node = get_json(c, "node/fake-2")
        ready = {x["type"]: x for x in node["status"]["conditions"]}["Ready"]
        taints = {(t["key"], t["effect"]) for t in node["spec"].get("taints", [])}
        if ready["status"] == "Unknown" and ("node.kubernetes.io/unreachable", "NoExecute") in taints:
            break
        time.sleep(0.2)
    else:
        raise AssertionError("fake-2 not marked unreachable: %s" % json.dumps(node))
    assert ready["reason"] == "NodeStatusUnknown"
    assert ("node.kubernetes.io/unreachable", "NoSchedule") in taints
    # Its pods are marked not ready, then evicted after their 3 s toleration; the
    # ReplicaSet replaces them on the healthy node.
    def settled():
        live = [p for p in get_json(c, "-n", "evict", "pods")["items"] if not p["metadata"].get("deletionTimestamp")]
        return len(live) == 4 and all(p["spec"].get("nodeName") == "fake-1" and
                                      p.get("status", {}).get("phase") == "Running" for p in live)
    wait_until(settled, "4 running pods on fake-1", timeout=60)
    for name in on2:
        p = get_json(c, "-n", "evict", "pod/" + name)
        assert p["metadata"].get("deletionTimestamp"), name
        ready = {x["type"]: x for x in p["status"]["conditions"]}["Ready"]
        assert ready["status"] == "False", p["status"]
    evs = get_json(c, "-n", "evict", "events")["items"]
    assert any(e["reason"] == "TaintManagerEviction" and e["involvedObject"]["name"] in on2 for e in evs)
    # The node comes back: Ready again and the taints are gone.
    c["procs"]["node2"] = Component(node_argv(c["server"].kubeconfig, c["work"], 2), os.path.join(c["work"], "node2.log"))
    def recovered():
        n = get_json(c, "node/fake-2")
        ready = {x["type"]: x for x in n["status"]["conditions"]}["Ready"]["status"]
        return ready == "True" and not [t for t in n["spec"].get("taints", []) if "node.kubernetes.io" in t["key"]]
    wait_until(recovered, "fake-2 Ready and untainted", timeout=30)


def test_endpoints_follow_the_selected_pods(cluster):
    c = cluster
    kubectl(c, "create", "namespace", "ep")
    manifest = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ep}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: busybox:1.36
        ports: [{name: http, containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ep, labels: {tier: front}}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: http}
  - {name: metrics, port: 9100, targetPort: 9100}
"""
    subprocess.run([KUBECTL, "--kubeconfig", c["server"].kubeconfig, "apply", "-f", "-"], input=manifest,
                   text=True, check=True, capture_output=True, env=dict(os.environ, HOME=c["work"]))
    kubectl(c, "-n", "ep", "rollout", "status", "deploy/web", "--timeout=60s")

    def endpoints():
        out = kubectl(c, "-n", "ep", "get", "endpoints", "web", "-o", "json", check=False)
        return json.loads(out.stdout) if out.returncode == 0 else None

    def addresses():
        ep = endpoints() or {}
        return sorted(a["ip"] for s in ep.get("subsets", []) for a in s.get("addresses", []))

    pods = get_json(c, "-n", "ep", "pods", "-l", "app=web")["items"]
    ips = sorted(p["status"]["podIP"] for p in pods)
    wait_until(lambda: addresses() == ips, "the 3 pod IPs in the Endpoints")
    ep = endpoints()
    assert ep["metadata"]["labels"] == {"tier": "front"}
    subset = ep["subsets"][0]
    assert sorted((p["name"], p["port"], p["protocol"]) for p in subset["ports"]) == \
        [("http", 8080, "TCP"), ("metrics", 9100, "TCP")]
    by_ip = {a["ip"]: a for a in subset["addresses"]}
    for p in pods:
        a = by_ip[p["status"]["podIP"]]
        assert a["nodeName"] == p["spec"]["nodeName"]
        assert a["targetRef"] == {"kind": "Pod", "namespace": "ep", "name": p["metadata"]["name"],
                                  "uid": p["metadata"]["uid"]}
    assert "web" in kubectl(c, "-n", "ep", "get", "endpoints").stdout
    # Scaling changes the addresses; an edit by hand is put right.
    kubectl(c, "-n", "ep", "scale", "deploy/web", "--replicas=1")
    wait_until(lambda: len(addresses()) == 1, "one address")
    kubectl(c, "-n", "ep", "patch", "endpoints", "web", "--type=merge", "-p", '{"subsets":null}')
    wait_until(lambda: len(addresses()) == 1, "the address restored")
    # Deleting the Service deletes its Endpoints.
    kubectl(c, "-n", "ep", "delete", "service", "web")
    wait_until(lambda: endpoints() is None, "Endpoints deleted with the Service")
