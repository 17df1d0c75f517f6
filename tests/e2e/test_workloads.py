"""Workloads end to end with stock kubectl on real nodes: Jobs, CronJobs and DaemonSets on
shepherd-apiserver, shepherd-scheduler, shepherd-controller-manager and two kubelet-lite
nodes with containerd (tests/harness/real_node.py), so the pods really run and their
logs print.

Run from the repository root:  /usr/bin/python3 -m pytest tests/e2e/test_workloads.py -q
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

from conftest import KUBECTL_BINS, REPO, Component

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))
import real_node  # noqa: E402

pytestmark = pytest.mark.slow

BIN = os.path.dirname(os.environ.get("SHEPHERD_APISERVER", os.path.join(REPO, "build", "cmd", "shepherd-apiserver")))



@pytest.fixture(scope="module")
def cluster(server_factory, tmp_path_factory):
    srv = server_factory()
    work = str(tmp_path_factory.mktemp("workloads"))
    kc = srv.kubeconfig
    cm_argv = [os.path.join(BIN, "shepherd-controller-manager"), "--kubeconfig", kc, "--root-ca-file",
               os.path.join(work, "ca.crt"), "--leader-elect=false"]
    procs = {
        "scheduler": Component([os.path.join(BIN, "shepherd-scheduler"), "--kubeconfig", kc],
                          os.path.join(work, "scheduler.log")),
        "cm": Component(cm_argv, os.path.join(work, "cm.log")),
    }
    nodes = []
    c = {"server": srv, "procs": procs, "work": work, "nodes": [], "cm_argv": cm_argv}
    try:
        for subnet in real_node.free_subnets(2):
            node_dir = tempfile.mkdtemp(prefix="shw-")
            name = "wl-node-" + uuid.uuid4().hex[:6]
            n = real_node.RealNode(node_dir, name, srv.base_url, subnet, kubeconfig=srv.node_kubeconfig(name))
            nodes.append((n, node_dir))
            n.start()
            c["nodes"].append(name)
        yield c
    finally:
        for n, node_dir in nodes:
            n.stop()
            shutil.rmtree(node_dir, ignore_errors=True)
        bad = []
        for pname, p in procs.items():
            rc = p.stop()
            if rc != 0:
                bad.append("%s exited %s:\n%s" % (pname, rc, p.tail()))
        assert not bad, "\n".join(bad)


def kubectl(c, *args, version="1.33", check=True, timeout=120, input=None):
    out = subprocess.run([KUBECTL_BINS[version], "--kubeconfig", c["server"].kubeconfig] + list(args),
                         capture_output=True, text=True, timeout=timeout, input=input,
                         env=dict(os.environ, HOME=os.path.join(c["work"], "home-" + version)))
    if check:
        assert out.returncode == 0, "kubectl %s:\n%s\n%s" % (" ".join(args), out.stdout, out.stderr)
    return out


def get_json(c, *args):
    return json.loads(kubectl(c, "get", "-o", "json", *args).stdout)


def wait_until(fn, what, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.5)
    pytest.fail("timed out waiting for " + what)


def namespace(c, prefix):
    ns = prefix + "-" + uuid.uuid4().hex[:5]
    kubectl(c, "create", "namespace", ns)
    return ns


@pytest.mark.parametrize("version", ["1.27", "1.33"])
def test_a_job_runs_to_completion_and_its_logs_print(cluster, version):
    c = cluster
    ns = namespace(c, "job" + version.replace(".", ""))
    # `kubectl create job` sends a protobuf body.
    kubectl(c, "-n", ns, "create", "job", "hello", "--image=busybox", "--", "sh", "-c", "echo hello from a job",
            version=version)
    kubectl(c, "-n", ns, "wait", "--for=condition=complete", "job/hello", "--timeout=90s", version=version)
    assert kubectl(c, "-n", ns, "logs", "job/hello", version=version).stdout == "hello from a job\n"
    job = get_json(c, "-n", ns, "job/hello")
    assert job["status"]["succeeded"] == 1
    assert job["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "hello"
    types = [cond["type"] for cond in job["status"]["conditions"] if cond["status"] == "True"]
    assert types == ["SuccessCriteriaMet", "Complete"], job["status"]
    row = kubectl(c, "-n", ns, "get", "job", "hello", "--no-headers", version=version).stdout.split()
    assert row[:3] == ["hello", "Complete", "1/1"], row
    pods = get_json(c, "-n", ns, "pods", "-l", "job-name=hello")["items"]
    assert len(pods) == 1 and not pods[0]["metadata"].get("finalizers"), pods
    # Deleting the Job (kubectl: in the background) takes its pod with it.
    kubectl(c, "-n", ns, "delete", "job", "hello", version=version)
    wait_until(lambda: not get_json(c, "-n", ns, "pods", "-l", "job-name=hello")["items"], "the job's pod to go")


def test_an_indexed_job_runs_each_index_once(cluster):
    c = cluster
    ns = namespace(c, "indexed")
    kubectl(c, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "ix"},
        "spec": {"completions": 3, "parallelism": 2, "completionMode": "Indexed", "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox",
                            "command": ["sh", "-c", "echo index $JOB_COMPLETION_INDEX on $(hostname)"]}]}}}}))
    kubectl(c, "-n", ns, "wait", "--for=condition=complete", "job/ix", "--timeout=120s")
    job = get_json(c, "-n", ns, "job/ix")
    assert job["status"]["completedIndexes"] == "0-2"
    assert job["status"]["succeeded"] == 3
    lines = set()
    for p in get_json(c, "-n", ns, "pods", "-l", "job-name=ix")["items"]:
        lines.add(kubectl(c, "-n", ns, "logs", p["metadata"]["name"]).stdout.strip())
    assert lines == {"index 0 on ix-0", "index 1 on ix-1", "index 2 on ix-2"}


def test_a_failing_job_stops_at_its_backoff_limit(cluster):
    c = cluster
    ns = namespace(c, "backoff")
    kubectl(c, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "fails"},
        "spec": {"backoffLimit": 1, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", "exit 3"]}]}}}}))
    kubectl(c, "-n", ns, "wait", "--for=condition=failed", "job/fails", "--timeout=120s")
    job = get_json(c, "-n", ns, "job/fails")
    assert job["status"]["failed"] == 2, job["status"]
    failed = [cond for cond in job["status"]["conditions"] if cond["type"] == "Failed"][0]
    assert failed["reason"] == "BackoffLimitExceeded"
    assert len(get_json(c, "-n", ns, "pods", "-l", "job-name=fails")["items"]) == 2


def test_a_cronjob_fires_every_minute_and_respects_forbid(cluster):
    c = cluster
    ns = namespace(c, "cron")
    # Each run lasts longer than the period: with Forbid the next minute's run is skipped.
    kubectl(c, "-n", ns, "create", "cronjob", "tick", "--image=busybox", "--schedule=*/1 * * * *", "--",
            "sh", "-c", "echo tick; sleep 100")
    kubectl(c, "-n", ns, "patch", "cronjob", "tick", "-p", '{"spec":{"concurrencyPolicy":"Forbid"}}')

    def jobs():
        return get_json(c, "-n", ns, "jobs")["items"]

    first = wait_until(lambda: jobs(), "the first scheduled job", timeout=75)
    assert len(first) == 1 and first[0]["metadata"]["name"].startswith("tick-")
    assert first[0]["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    cj = get_json(c, "-n", ns, "cronjob/tick")
    assert [a["name"] for a in cj["status"]["active"]] == [first[0]["metadata"]["name"]]
    # The next minute comes and goes with the first job still running: no second job,
    # and an event that says why.
    wait_until(lambda: "JobAlreadyActive" in kubectl(c, "-n", ns, "get", "events").stdout,
               "the Forbid event", timeout=75)
    assert len(jobs()) == 1
    # A job made by hand from the CronJob's template runs at once.
    kubectl(c, "-n", ns, "create", "job", "manual", "--from=cronjob/tick")
    wait_until(lambda: get_json(c, "-n", ns, "job/manual").get("status", {}).get("active") == 1,
               "the manual job to run")
    kubectl(c, "-n", ns, "delete", "cronjob", "tick")


def test_a_finished_job_with_a_ttl_is_deleted(cluster):
    c = cluster
    ns = namespace(c, "ttl")
    kubectl(c, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "brief"},
        "spec": {"ttlSecondsAfterFinished": 2, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}}}))
    wait_until(lambda: kubectl(c, "-n", ns, "get", "job", "brief", check=False).returncode != 0,
               "the finished job to be deleted", timeout=90)
    wait_until(lambda: not get_json(c, "-n", ns, "pods")["items"], "its pod to go")


def daemon_pods(c, ns):
    pods = get_json(c, "-n", ns, "pods", "-l", "app=agent")["items"]
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def test_a_daemonset_runs_on_every_node_and_rolls_an_image_change(cluster):
    c = cluster
    ns = namespace(c, "daemon")
    kubectl(c, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": {
            "metadata": {"labels": {"app": "agent"}},
            "spec": {"terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "3600"]}]}}}}))
    kubectl(c, "-n", ns, "rollout", "status", "ds/agent", "--timeout=120s")
    pods = daemon_pods(c, ns)
    assert sorted(p["spec"]["nodeName"] for p in pods) == sorted(c["nodes"]), pods
    row = kubectl(c, "-n", ns, "get", "ds", "agent", "--no-headers").stdout.split()
    assert row[:6] == ["agent", "2", "2", "2", "2", "2"], row
    # An image change rolls node by node (maxUnavailable 1).
    kubectl(c, "-n", ns, "set", "image", "ds/agent", "c=busybox:1.36")
    kubectl(c, "-n", ns, "rollout", "status", "ds/agent", "--timeout=180s")
    wait_until(lambda: sorted(p["spec"]["containers"][0]["image"] for p in daemon_pods(c, ns)) == ["busybox:1.36"] * 2,
               "both pods on the new image")
    history = kubectl(c, "-n", ns, "rollout", "history", "ds/agent").stdout
    assert "1 " in history and "2 " in history, history
    assert len(get_json(c, "-n", ns, "controllerrevisions")["items"]) == 2
    # And back.
    kubectl(c, "-n", ns, "rollout", "undo", "ds/agent")
    kubectl(c, "-n", ns, "rollout", "status", "ds/agent", "--timeout=180s")
    wait_until(lambda: sorted(p["spec"]["containers"][0]["image"] for p in daemon_pods(c, ns)) == ["busybox"] * 2,
               "both pods back on the first image")
    kubectl(c, "-n", ns, "delete", "ds", "agent")
    wait_until(lambda: not daemon_pods(c, ns), "the daemon pods to go")


def sts_pods(c, ns):
    pods = get_json(c, "-n", ns, "pods", "-l", "app=web")["items"]
    return {p["metadata"]["name"]: p for p in pods if not p["metadata"].get("deletionTimestamp")}


def test_a_statefulset_keeps_its_identities_through_updates_and_scaling(cluster):
    c = cluster
    ns = namespace(c, "sts")
    kubectl(c, "-n", ns, "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
         "spec": {"clusterIP": "None", "selector": {"app": "web"}, "ports": [{"port": 80}]}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
         "spec": {"replicas": 3, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}}, "template": {
             "metadata": {"labels": {"app": "web"}},
             "spec": {"terminationGracePeriodSeconds": 1,
                      "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "3600"]}]}}}}]}))
    kubectl(c, "-n", ns, "rollout", "status", "sts/web", "--timeout=180s")
    pods = sts_pods(c, ns)
    assert sorted(pods) == ["web-0", "web-1", "web-2"]
    for name, p in pods.items():
        assert p["spec"]["hostname"] == name and p["spec"]["subdomain"] == "web"
        assert p["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == name
    # Created in order: each pod started after the one before it was ready.
    created = [pods["web-%d" % i]["metadata"]["creationTimestamp"] for i in range(3)]
    assert created == sorted(created), created
    assert kubectl(c, "-n", ns, "get", "sts", "web", "--no-headers").stdout.split()[1] == "3/3"
    # A new image rolls from web-2 down; then back.
    kubectl(c, "-n", ns, "set", "image", "sts/web", "c=busybox:1.36")
    kubectl(c, "-n", ns, "rollout", "status", "sts/web", "--timeout=180s")
    assert {p["spec"]["containers"][0]["image"] for p in sts_pods(c, ns).values()} == {"busybox:1.36"}
    sts = get_json(c, "-n", ns, "sts/web")
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"]
    kubectl(c, "-n", ns, "rollout", "undo", "sts/web")
    kubectl(c, "-n", ns, "rollout", "status", "sts/web", "--timeout=180s")
    assert {p["spec"]["containers"][0]["image"] for p in sts_pods(c, ns).values()} == {"busybox"}
    # Scaled down from the highest ordinal.
    kubectl(c, "-n", ns, "scale", "sts/web", "--replicas=1")
    wait_until(lambda: sorted(sts_pods(c, ns)) == ["web-0"], "web-1 and web-2 to go")
    kubectl(c, "-n", ns, "delete", "sts", "web")
    wait_until(lambda: not sts_pods(c, ns), "web-0 to go")


def test_a_statefulsets_replicas_keep_their_own_data_when_it_is_deleted_and_recreated(cluster):
    c = cluster
    ns = namespace(c, "data")
    # No storageClassName: the claims get the default class, local-path, whose volumes are
    # directories on the node the scheduler picked for each replica.
    manifest = json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db"},
         "spec": {"clusterIP": "None", "selector": {"app": "db"}, "ports": [{"port": 80}]}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
         "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                  "template": {"metadata": {"labels": {"app": "db"}}, "spec": {
                      "terminationGracePeriodSeconds": 1,
                      "containers": [{"name": "c", "image": "busybox",
                                      "command": ["sh", "-c", "hostname >> /data/id; exec sleep 3600"],
                                      "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
                  "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                      "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "64Mi"}}}}]}}]})
    kubectl(c, "-n", ns, "apply", "-f", "-", input=manifest)
    kubectl(c, "-n", ns, "rollout", "status", "sts/db", "--timeout=180s")
    claims = {p["metadata"]["name"]: p for p in get_json(c, "-n", ns, "pvc")["items"]}
    assert sorted(claims) == ["data-db-0", "data-db-1", "data-db-2"], sorted(claims)
    for name, pvc in claims.items():
        assert pvc["spec"]["storageClassName"] == "local-path", pvc["spec"]
        assert pvc["status"]["phase"] == "Bound", pvc["status"]
        assert pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
        pv = get_json(c, "pv/" + pvc["spec"]["volumeName"])
        assert pv["spec"]["claimRef"]["name"] == name and pv["status"]["phase"] == "Bound", pv
        assert pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == "rancher.io/local-path"
        assert pv["spec"]["local"]["path"].endswith("/%s_%s_%s" % (pv["metadata"]["name"], ns, name)), pv["spec"]
        node = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"][0]
        pod = get_json(c, "-n", ns, "pod/" + name[len("data-"):])
        assert pod["spec"]["nodeName"] == node, (pod["spec"]["nodeName"], node)
    row = kubectl(c, "-n", ns, "get", "pvc", "data-db-0", "--no-headers").stdout.split()
    assert row[:2] == ["data-db-0", "Bound"] and row[3:6] == ["64Mi", "RWO", "local-path"], row
    for i in range(3):
        out = kubectl(c, "-n", ns, "exec", "db-%d" % i, "--", "cat", "/data/id").stdout
        assert out == "db-%d\n" % i, out
    # Deleted and re-created: each replica finds its own claim, on its volume's node.
    kubectl(c, "-n", ns, "delete", "sts", "db", "--wait=true")
    wait_until(lambda: not get_json(c, "-n", ns, "pods", "-l", "app=db")["items"], "the replicas to go")
    kubectl(c, "-n", ns, "apply", "-f", "-", input=manifest)
    kubectl(c, "-n", ns, "rollout", "status", "sts/db", "--timeout=180s")
    again = {p["metadata"]["name"]: p["metadata"]["uid"] for p in get_json(c, "-n", ns, "pvc")["items"]}
    assert again == {n: p["metadata"]["uid"] for n, p in claims.items()}, again
    for i in range(3):
        out = kubectl(c, "-n", ns, "exec", "db-%d" % i, "--", "cat", "/data/id").stdout
        assert out == "db-%d\ndb-%d\n" % (i, i), out
    # Claims deleted: their volumes are released, their directories removed, then they go.
    volumes = [p["spec"]["volumeName"] for p in claims.values()]
    dirs = [get_json(c, "pv/" + v)["spec"]["local"]["path"] for v in volumes]
    assert all(os.path.isdir(d) for d in dirs), dirs
    kubectl(c, "-n", ns, "delete", "sts", "db", "--wait=true")
    wait_until(lambda: not get_json(c, "-n", ns, "pods", "-l", "app=db")["items"], "the replicas to go")
    kubectl(c, "-n", ns, "delete", "pvc", "--all", "--wait=true")
    left = lambda: [v for v in get_json(c, "pv")["items"] if v["metadata"]["name"] in volumes]  # noqa: E731
    wait_until(lambda: not left(), "the released volumes to be deleted", timeout=180)
    assert not [d for d in dirs if os.path.exists(d)], dirs


def test_a_generic_ephemeral_volume_lives_and_goes_with_its_pod(cluster):
    c = cluster
    ns = namespace(c, "eph")
    kubectl(c, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "scratch"}, "spec": {
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "c", "image": "busybox",
                            "command": ["sh", "-c", "echo hello > /scratch/f; exec sleep 3600"],
                            "volumeMounts": [{"name": "work", "mountPath": "/scratch"}]}],
            "volumes": [{"name": "work", "ephemeral": {"volumeClaimTemplate": {"spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "16Mi"}}}}}}]}}))
    kubectl(c, "-n", ns, "wait", "--for=condition=Ready", "pod/scratch", "--timeout=120s")
    assert kubectl(c, "-n", ns, "exec", "scratch", "--", "cat", "/scratch/f").stdout == "hello\n"
    pod = get_json(c, "-n", ns, "pod/scratch")
    claim = get_json(c, "-n", ns, "pvc/scratch-work")
    ref = claim["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["uid"], ref["controller"]) == ("Pod", pod["metadata"]["uid"], True), ref
    assert claim["status"]["phase"] == "Bound" and claim["spec"]["storageClassName"] == "local-path", claim
    volume = claim["spec"]["volumeName"]
    kubectl(c, "-n", ns, "delete", "pod", "scratch", "--wait=true")
    wait_until(lambda: not get_json(c, "-n", ns, "pvc")["items"], "the claim to go with its pod")
    wait_until(lambda: volume not in [v["metadata"]["name"] for v in get_json(c, "pv")["items"]],
               "its volume to be deleted", timeout=180)


def kill_and_restart_controller_manager(c):
    """SIGKILL, as a crash would; then the same program again (the fixture stops it)."""
    c["procs"]["cm"].kill()
    c["procs"]["cm"] = Component(c["cm_argv"], os.path.join(c["work"], "cm.log"))


def test_a_job_counts_each_completion_once_across_a_controller_manager_crash(cluster):
    c = cluster
    ns = namespace(c, "crash")
    kubectl(c, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "steps"},
        "spec": {"completions": 8, "parallelism": 3, "completionMode": "Indexed", "template": {"spec": {
            "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "2"]}]}}}}))
    seen = {}  # index -> uids of pods running it at once, sampled

    def sample():
        running = {}
        for p in get_json(c, "-n", ns, "pods", "-l", "job-name=steps")["items"]:
            if p["status"].get("phase") in ("Pending", "Running") and not p["metadata"].get("deletionTimestamp"):
                idx = p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
                running.setdefault(idx, set()).add(p["metadata"]["uid"])
        for idx, uids in running.items():
            assert len(uids) == 1, "index %s runs twice at once: %s" % (idx, uids)
            seen.setdefault(idx, set()).update(uids)

    wait_until(lambda: (sample(), get_json(c, "-n", ns, "job/steps").get("status", {}).get("succeeded", 0) >= 2)[1],
               "two completions")
    kill_and_restart_controller_manager(c)

    def complete():
        sample()
        job = get_json(c, "-n", ns, "job/steps")
        return any(x["type"] == "Complete" and x["status"] == "True" for x in job["status"].get("conditions", []))
    wait_until(complete, "the job to complete", timeout=240)
    st = get_json(c, "-n", ns, "job/steps")["status"]
    assert st["succeeded"] == 8 and st.get("failed", 0) == 0, st
    assert st["completedIndexes"] == "0-7", st
    succeeded = [p for p in get_json(c, "-n", ns, "pods", "-l", "job-name=steps")["items"]
                 if p["status"].get("phase") == "Succeeded"]
    per_index = {}
    for p in succeeded:
        idx = p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        per_index[idx] = per_index.get(idx, 0) + 1
        assert "batch.kubernetes.io/job-tracking" not in p["metadata"].get("finalizers", []), p["metadata"]
    assert per_index == {str(i): 1 for i in range(8)}, per_index
    # Gone before the next test: bare pods left on a node would stop its drain.
    kubectl(c, "delete", "namespace", ns, "--wait=true", timeout=180)


def test_a_statefulset_rolls_out_across_a_controller_manager_crash(cluster):
    c = cluster
    ns = namespace(c, "crashsts")
    manifest = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
                "spec": {"replicas": 3, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                             "terminationGracePeriodSeconds": 1,
                             "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "3600"]}]}}}}
    kubectl(c, "-n", ns, "apply", "-f", "-", input=json.dumps(manifest))
    kubectl(c, "-n", ns, "rollout", "status", "sts/web", "--timeout=180s")
    kubectl(c, "-n", ns, "set", "image", "sts/web", "c=busybox:1.36")
    # Killed once the rollout has begun (the highest ordinal goes first).
    wait_until(lambda: get_json(c, "-n", ns, "sts/web")["status"].get("updateRevision") !=
               get_json(c, "-n", ns, "sts/web")["status"].get("currentRevision"), "the rollout to begin")
    kill_and_restart_controller_manager(c)
    uids = {}  # ordinal -> the live pod's uid, never two at once

    def rolled():
        pods = get_json(c, "-n", ns, "pods", "-l", "app=web")["items"]
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        names = [p["metadata"]["name"] for p in live]
        assert len(names) == len(set(names)), names
        for p in live:
            uids.setdefault(p["metadata"]["name"], set()).add(p["metadata"]["uid"])
        sts = get_json(c, "-n", ns, "sts/web")["status"]
        return (sts.get("updatedReplicas") == 3 and sts.get("readyReplicas") == 3 and
                sts.get("currentRevision") == sts.get("updateRevision"))
    wait_until(rolled, "the rollout to finish after the restart", timeout=240)
    pods = get_json(c, "-n", ns, "pods", "-l", "app=web")["items"]
    assert sorted(p["metadata"]["name"] for p in pods) == ["web-0", "web-1", "web-2"]
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"busybox:1.36"}
    # Gone before the next test: bare pods left on a node would stop its drain.
    kubectl(c, "delete", "namespace", ns, "--wait=true", timeout=180)


def quota_pod(name, cpu):
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "3600"],
                        "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}})


def test_a_quota_rejects_the_pod_that_exceeds_it(cluster):
    c = cluster
    ns = namespace(c, "quota")
    kubectl(c, "-n", ns, "create", "quota", "q", "--hard=pods=2,requests.cpu=1")
    # Enforced once the controller has observed it (status.hard).
    wait_until(lambda: get_json(c, "-n", ns, "quota/q").get("status", {}).get("used"), "the quota to be counted")
    for name in ("a", "b"):
        kubectl(c, "-n", ns, "apply", "-f", "-", input=quota_pod(name, "500m"))
    out = kubectl(c, "-n", ns, "apply", "-f", "-", input=quota_pod("x", "500m"), check=False)
    assert out.returncode != 0
    assert ('pods "x" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=500m, used: '
            'pods=2,requests.cpu=1, limited: pods=2,requests.cpu=1') in out.stderr, out.stderr
    row = kubectl(c, "-n", ns, "get", "quota", "q", "--no-headers").stdout
    assert "pods: 2/2, requests.cpu: 1/1" in row, row
    # A deleted pod gives its share back (the controller recounts); then the pod fits.
    kubectl(c, "-n", ns, "delete", "pod", "a", "--wait=true")
    wait_until(lambda: get_json(c, "-n", ns, "quota/q")["status"]["used"]["pods"] == "1", "the quota to drop to 1")
    kubectl(c, "-n", ns, "apply", "-f", "-", input=quota_pod("x", "500m"))
    # Gone before the next test: bare pods left on a node would stop its drain.
    kubectl(c, "delete", "namespace", ns, "--wait=true", timeout=180)


def test_a_limit_range_fills_in_defaults_and_refuses_what_exceeds_it(cluster):
    c = cluster
    ns = namespace(c, "limits")
    kubectl(c, "-n", ns, "apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr"},
        "spec": {"limits": [{"type": "Container", "max": {"memory": "256Mi"},
                             "defaultRequest": {"cpu": "100m"}}]}}))
    lr = get_json(c, "-n", ns, "limits/lr")["spec"]["limits"][0]
    assert lr["default"] == {"memory": "256Mi"} and lr["defaultRequest"] == {"cpu": "100m", "memory": "256Mi"}, lr
    kubectl(c, "-n", ns, "run", "plain", "--image=busybox", "--restart=Never", "--", "sleep", "3600")
    pod = get_json(c, "-n", ns, "pod/plain")
    assert pod["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "256Mi"}}, pod["spec"]
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == \
        "LimitRanger plugin set: cpu, memory request for container plain; memory limit for container plain"
    big = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"}, "spec": {"containers": [
        {"name": "c", "image": "busybox", "resources": {"limits": {"memory": "1Gi"}}}]}})
    out = kubectl(c, "-n", ns, "apply", "-f", "-", input=big, check=False)
    assert out.returncode != 0
    assert 'pods "big" is forbidden: maximum memory usage per Container is 256Mi, but limit is 1Gi' in out.stderr, \
        out.stderr
    # Gone before the next test: bare pods left on a node would stop its drain.
    kubectl(c, "delete", "namespace", ns, "--wait=true", timeout=180)


def test_kubectl_drain_stops_at_a_disruption_budget_and_proceeds_when_it_allows(cluster):
    c = cluster
    ns = namespace(c, "drain")
    node = c["nodes"][0]
    kubectl(c, "-n", ns, "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "guarded"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "guarded"}}, "template": {
             "metadata": {"labels": {"app": "guarded"}},
             "spec": {"nodeSelector": {"kubernetes.io/hostname": node}, "terminationGracePeriodSeconds": 1,
                      "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "3600"]}]}}}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "guard"},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}}]}))
    kubectl(c, "-n", ns, "rollout", "status", "deploy/guarded", "--timeout=120s")
    first = get_json(c, "-n", ns, "pods", "-l", "app=guarded")["items"][0]["metadata"]["name"]
    wait_until(lambda: get_json(c, "-n", ns, "pdb/guard").get("status", {}).get("currentHealthy") == 1,
               "the budget to count the pod")
    pdb = get_json(c, "-n", ns, "pdb/guard")
    assert pdb["status"]["disruptionsAllowed"] == 0 and pdb["status"]["desiredHealthy"] == 1, pdb["status"]
    cond = [x for x in pdb["status"]["conditions"] if x["type"] == "DisruptionAllowed"][0]
    assert (cond["status"], cond["reason"]) == ("False", "InsufficientPods"), cond
    row = kubectl(c, "-n", ns, "get", "pdb", "guard", "--no-headers").stdout.split()
    assert row[:4] == ["guard", "1", "N/A", "0"], row
    try:
        # The budget allows no disruption: drain cordons the node, retries the eviction
        # (429) and gives up at its timeout; the pod stays.
        out = kubectl(c, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=12s",
                      check=False)
        assert out.returncode != 0, out.stdout
        assert "Cannot evict pod as it would violate the pod's disruption budget." in out.stderr, out.stderr
        assert get_json(c, "node/" + node)["spec"].get("unschedulable") is True
        assert get_json(c, "-n", ns, "pod/" + first)["metadata"].get("deletionTimestamp") is None
        # The raw eviction answers 429 with the budget's numbers.
        evict = kubectl(c, "create", "--raw", "/api/v1/namespaces/%s/pods/%s/eviction" % (ns, first), "-f", "-",
                        check=False, input=json.dumps({"apiVersion": "policy/v1", "kind": "Eviction",
                                                       "metadata": {"name": first, "namespace": ns}}))
        assert evict.returncode != 0 and "TooManyRequests" in evict.stderr or "429" in evict.stderr, evict.stderr
        # Once the budget allows one disruption, drain evicts the pod.
        kubectl(c, "-n", ns, "patch", "pdb", "guard", "--type=merge",
                "-p", '{"spec":{"minAvailable":null,"maxUnavailable":1}}')
        wait_until(lambda: get_json(c, "-n", ns, "pdb/guard")["status"].get("disruptionsAllowed") == 1,
                   "the budget to allow a disruption")
        kubectl(c, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=60s")
        wait_until(lambda: first not in [p["metadata"]["name"] for p in
                                         get_json(c, "-n", ns, "pods", "-l", "app=guarded")["items"]],
                   "the evicted pod to go")
        # Its replacement waits for the cordoned node.
        pods = get_json(c, "-n", ns, "pods", "-l", "app=guarded")["items"]
        assert len(pods) == 1 and pods[0]["status"]["phase"] == "Pending", pods
    finally:
        kubectl(c, "uncordon", node)
    kubectl(c, "-n", ns, "rollout", "status", "deploy/guarded", "--timeout=120s")
    # Gone before the next test: bare pods left on a node would stop its drain.
    kubectl(c, "delete", "namespace", ns, "--wait=true", timeout=180)
