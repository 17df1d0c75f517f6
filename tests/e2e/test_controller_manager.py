"""shepherd-controller-manager against its own shepherd-apiserver: ServiceAccounts, the
root CA ConfigMap, namespace deletion (pods first, finalizers, conditions), leader election.

Run from the repository root:  /usr/bin/python3 -m pytest tests/e2e/test_controller_manager.py -q
"""

import os
import subprocess
import time
import uuid

import pytest

from conftest import REPO, Component, run_kubectl

CM_BIN = os.path.join(os.path.dirname(os.environ.get(
    "SHEPHERD_APISERVER", os.path.join(REPO, "build", "cmd", "shepherd-apiserver"))),
    "shepherd-controller-manager")


class ControllerManager(Component):
    def __init__(self, server, workdir, name="cm"):
        self.ca_file = os.path.join(workdir, "ca.crt")
        super().__init__(
            [CM_BIN, "--kubeconfig", server.kubeconfig, "--root-ca-file", self.ca_file,
             "--leader-elect-lease-duration=4", "--leader-elect-renew-deadline=3",
             "--leader-elect-retry-period=1", "--max-endpoints-per-slice=2",
             "--pod-gc-check-period=1s", "--pod-gc-quarantine=2s"],
            os.path.join(workdir, name + ".log"))

    def log_tail(self):
        return self.tail(4000)


@pytest.fixture(scope="module")
def cluster(server_factory, tmp_path_factory):
    """A dedicated API server (the controllers act on every namespace) and one controller manager."""
    srv = server_factory()
    workdir = str(tmp_path_factory.mktemp("cm"))
    cm = ControllerManager(srv, workdir)
    yield srv, cm
    rc = cm.stop()
    assert rc == 0, "controller manager exited %s:\n%s" % (rc, cm.log_tail())


@pytest.fixture(scope="module")
def kubectl_for(cluster, tmp_path_factory):
    """Stock kubectl 1.33 against the module's API server."""
    home = str(tmp_path_factory.mktemp("kubectl-home"))
    cache = os.path.join(home, "cache")
    os.makedirs(cache, exist_ok=True)
    return lambda *args: run_kubectl(cluster[0], cache, "1.33", *args)


def wait_for(what, fn, timeout=20):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError("%s not reached within %ss (last: %r)" % (what, timeout, last))


def new_namespace(api):
    name = "cm-" + uuid.uuid4().hex[:8]
    st, _, body = api.post("/api/v1/namespaces", {"metadata": {"name": name}})
    assert st == 201, body
    return name


def get(api, path):
    st, _, body = api.get(path)
    return body if st == 200 else None


def test_default_service_account_is_created_and_recreated(cluster):
    srv, _ = cluster
    api = srv.api
    ns = new_namespace(api)
    path = "/api/v1/namespaces/%s/serviceaccounts/default" % ns
    first = wait_for("ServiceAccount default", lambda: get(api, path))
    st, _, _ = api.delete(path)
    assert st == 200
    again = wait_for("a new ServiceAccount default",
                     lambda: (lambda sa: sa if sa and sa["metadata"]["uid"] != first["metadata"]["uid"] else None)(
                         get(api, path)))
    assert again["metadata"]["name"] == "default"
    # Every namespace the server made at start-up has one too.
    for system in ("default", "kube-system", "kube-public", "kube-node-lease"):
        wait_for("ServiceAccount default in " + system,
                 lambda: get(api, "/api/v1/namespaces/%s/serviceaccounts/default" % system))


def test_root_ca_configmap_is_published_repaired_and_recreated(cluster):
    srv, cm = cluster
    api = srv.api
    ns = new_namespace(api)
    path = "/api/v1/namespaces/%s/configmaps/kube-root-ca.crt" % ns
    published = wait_for("kube-root-ca.crt", lambda: get(api, path))
    with open(cm.ca_file) as f:
        pem = f.read()
    assert published["data"] == {"ca.crt": pem}
    assert pem.startswith("-----BEGIN CERTIFICATE-----")
    assert os.stat(cm.ca_file + ".key").st_mode & 0o777 == 0o600
    # The placeholder CA really is a CA.
    out = subprocess.run(["openssl", "x509", "-noout", "-ext", "basicConstraints", "-in", cm.ca_file],
                         capture_output=True, text=True, check=True).stdout
    assert "CA:TRUE" in out, out
    # An edit is reverted.
    st, _, _ = api.patch(path, {"data": {"ca.crt": "junk", "extra": "x"}})
    assert st == 200
    wait_for("the repaired ConfigMap", lambda: (get(api, path) or {}).get("data") == {"ca.crt": pem})
    # A deleted one comes back.
    st, _, _ = api.delete(path)
    assert st == 200
    wait_for("the recreated ConfigMap", lambda: (get(api, path) or {}).get("data") == {"ca.crt": pem})


def conditions(ns_obj):
    return {c["type"]: c for c in ns_obj.get("status", {}).get("conditions", [])}


@pytest.mark.slow
def test_namespace_deletion_waits_for_pods_then_finalizers(cluster):
    srv, _ = cluster
    api = srv.api
    ns = new_namespace(api)
    base = "/api/v1/namespaces/" + ns
    for body, path in [
        ({"metadata": {"name": "plain"}, "data": {"a": "b"}}, "/configmaps"),
        ({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "data": {"a": "b"}}, "/configmaps"),
        ({"metadata": {"name": "s"}, "stringData": {"a": "b"}}, "/secrets"),
        ({"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}}, "/services"),
        # Bound to a node that has no agent: its deletion waits for a kubelet that never comes.
        ({"metadata": {"name": "p"}, "spec": {"nodeName": "ghost", "terminationGracePeriodSeconds": 2,
                                              "containers": [{"name": "c", "image": "busybox"}]}}, "/pods"),
    ]:
        st, _, obj = api.post(base + path, body)
        assert st == 201, obj
    st, _, obj = api.post("/apis/apps/v1/namespaces/%s/deployments" % ns, {
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}},
                              "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})
    assert st == 201, obj
    st, _, _ = api.delete("/api/v1/namespaces/" + ns)
    assert st == 200
    # Pods first: while the pod is still terminating nothing else is deleted.
    obj = wait_for("pods reported remaining",
                   lambda: (lambda n: n if n and "pods has 1 resource instances" in
                            conditions(n).get("NamespaceContentRemaining", {}).get("message", "") else None)(
                       get(api, "/api/v1/namespaces/" + ns)))
    assert obj["status"]["phase"] == "Terminating"
    assert conditions(obj)["NamespaceContentRemaining"]["status"] == "True"
    assert conditions(obj)["NamespaceContentRemaining"]["reason"] == "SomeResourcesRemain"
    assert get(api, base + "/configmaps/plain") is not None
    assert get(api, "/apis/apps/v1/namespaces/%s/deployments/d" % ns) is not None
    # The node would now finish the pod; without one, force it.
    st, _, _ = api.delete(base + "/pods/p?gracePeriodSeconds=0")
    assert st == 200
    # Everything else goes, except the ConfigMap held by a finalizer.
    obj = wait_for("finalizers reported remaining",
                   lambda: (lambda n: n if n and conditions(n).get("NamespaceFinalizersRemaining", {})
                            .get("status") == "True" else None)(get(api, "/api/v1/namespaces/" + ns)), timeout=30)
    c = conditions(obj)
    assert c["NamespaceFinalizersRemaining"]["reason"] == "SomeFinalizersRemain"
    assert "example.com/hold in 1 resource instances" in c["NamespaceFinalizersRemaining"]["message"]
    assert c["NamespaceContentRemaining"]["message"] == \
        "Some resources are remaining: configmaps has 1 resource instances"
    assert c["NamespaceDeletionDiscoveryFailure"]["status"] == "False"
    assert c["NamespaceDeletionContentFailure"]["status"] == "False"
    for gone in ("/configmaps/plain", "/secrets/s", "/services/svc", "/serviceaccounts/default"):
        assert get(api, base + gone) is None, gone
    assert get(api, "/apis/apps/v1/namespaces/%s/deployments/d" % ns) is None
    assert obj["spec"]["finalizers"] == ["kubernetes"]
    # Releasing the finalizer lets the namespace finish.
    st, _, body = api.patch(base + "/configmaps/held", {"metadata": {"finalizers": None}})
    assert st == 200, body
    wait_for("the namespace to be gone", lambda: get(api, "/api/v1/namespaces/" + ns) is None, timeout=30)


def test_pods_on_a_node_that_does_not_exist_are_collected(cluster):
    # Bound to a node that is not there: no kubelet will ever finish them. The pod garbage
    # collector fails and removes them once the node is confirmed gone, so deleting their
    # namespace completes (it used to stay Terminating for ever).
    srv, _ = cluster
    api = srv.api
    ns = new_namespace(api)
    pod = {"metadata": {"name": "ghostly"}, "spec": {"nodeName": "no-such-node",
                                                    "containers": [{"name": "c", "image": "busybox"}]}}
    st, _, body = api.post("/api/v1/namespaces/%s/pods" % ns, pod)
    assert st == 201, body
    st, _, body = api.delete("/api/v1/namespaces/" + ns)
    assert st == 200, body
    wait_for("the namespace gone", lambda: get(api, "/api/v1/namespaces/" + ns) is None, timeout=30)


def test_objects_are_not_recreated_in_a_terminating_namespace(cluster):
    srv, _ = cluster
    api = srv.api
    ns = new_namespace(api)
    wait_for("ServiceAccount default", lambda: get(api, "/api/v1/namespaces/%s/serviceaccounts/default" % ns))
    st, _, _ = api.delete("/api/v1/namespaces/" + ns)
    assert st == 200
    wait_for("the namespace to be gone", lambda: get(api, "/api/v1/namespaces/" + ns) is None, timeout=30)
    # A namespace of the same name starts afresh, with its own ServiceAccount.
    st, _, _ = api.post("/api/v1/namespaces", {"metadata": {"name": ns}})
    assert st == 201
    wait_for("ServiceAccount default again", lambda: get(api, "/api/v1/namespaces/%s/serviceaccounts/default" % ns))


# --------------------------------------------------------------------------- garbage collector


def make_cm(api, ns, name, owners=(), finalizers=()):
    md = {"name": name}
    if owners:
        md["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": o["metadata"]["name"],
                                  "uid": o["metadata"]["uid"], "blockOwnerDeletion": True} for o in owners]
    if finalizers:
        md["finalizers"] = list(finalizers)
    st, _, obj = api.post("/api/v1/namespaces/%s/configmaps" % ns, {"metadata": md, "data": {"k": "v"}})
    assert st == 201, obj
    return obj


def cm_path(ns, name):
    return "/api/v1/namespaces/%s/configmaps/%s" % (ns, name)


def delete(api, path, policy=None):
    body = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if policy:
        body["propagationPolicy"] = policy
    st, _, obj = api.delete(path, body)
    assert st in (200, 202), obj
    return obj


def test_gc_background_deletes_dependents_of_a_deleted_owner(cluster):
    api = cluster[0].api
    ns = new_namespace(api)
    owner = make_cm(api, ns, "owner")
    child = make_cm(api, ns, "child", owners=[owner])
    grandchild = make_cm(api, ns, "grandchild", owners=[child])
    delete(api, cm_path(ns, "owner"))
    for name in ("child", "grandchild"):
        wait_for(name + " collected", lambda: get(api, cm_path(ns, name)) is None)
    assert grandchild["metadata"]["uid"]


def test_gc_orphan_keeps_dependents_and_drops_the_reference(cluster):
    api = cluster[0].api
    ns = new_namespace(api)
    owner = make_cm(api, ns, "owner")
    other = make_cm(api, ns, "other")
    make_cm(api, ns, "child", owners=[owner, other])
    make_cm(api, ns, "only", owners=[owner])
    obj = delete(api, cm_path(ns, "owner"), "Orphan")
    assert "orphan" in obj["metadata"].get("finalizers", []), obj
    wait_for("the owner gone", lambda: get(api, cm_path(ns, "owner")) is None)
    child = get(api, cm_path(ns, "child"))
    assert [r["name"] for r in child["metadata"]["ownerReferences"]] == ["other"]
    only = get(api, cm_path(ns, "only"))
    assert only is not None and not only["metadata"].get("ownerReferences"), only


def test_gc_foreground_waits_for_blocking_dependents(cluster):
    api = cluster[0].api
    ns = new_namespace(api)
    owner = make_cm(api, ns, "owner")
    make_cm(api, ns, "held", owners=[owner], finalizers=["example.com/hold"])
    make_cm(api, ns, "free", owners=[owner])
    obj = delete(api, cm_path(ns, "owner"), "Foreground")
    assert "foregroundDeletion" in obj["metadata"]["finalizers"], obj
    wait_for("the free dependent deleted", lambda: get(api, cm_path(ns, "free")) is None)
    held = wait_for("the held dependent marked for deletion",
                    lambda: (lambda o: o if o and o["metadata"].get("deletionTimestamp") else None)(
                        get(api, cm_path(ns, "held"))))
    time.sleep(1)
    still = get(api, cm_path(ns, "owner"))
    assert still is not None and still["metadata"]["deletionTimestamp"], "the owner went before its dependent"
    st, _, body = api.patch(cm_path(ns, "held"), {"metadata": {"finalizers": None}})
    assert st == 200, body
    wait_for("the owner gone after its dependent", lambda: get(api, cm_path(ns, "owner")) is None)
    assert held["metadata"]["name"] == "held"


def test_gc_dangling_owner_and_mixed_owners(cluster):
    api = cluster[0].api
    ns = new_namespace(api)
    live = make_cm(api, ns, "live")
    ghost = {"metadata": {"name": "ghost", "uid": str(uuid.uuid4())}}
    make_cm(api, ns, "orphaned", owners=[ghost])
    make_cm(api, ns, "mixed", owners=[ghost, live])
    wait_for("the dependent of a missing owner collected", lambda: get(api, cm_path(ns, "orphaned")) is None)
    mixed = wait_for("the dangling reference dropped",
                     lambda: (lambda o: o if o and len(o["metadata"].get("ownerReferences", [])) == 1 else None)(
                         get(api, cm_path(ns, "mixed"))))
    assert mixed["metadata"]["ownerReferences"][0]["uid"] == live["metadata"]["uid"]
    # An owner recreated under the same name is another object: still dangling.
    old = make_cm(api, ns, "phoenix")
    delete(api, cm_path(ns, "phoenix"))
    make_cm(api, ns, "phoenix")
    make_cm(api, ns, "ash", owners=[old])
    wait_for("the dependent of a replaced owner collected", lambda: get(api, cm_path(ns, "ash")) is None)
    assert get(api, cm_path(ns, "phoenix")) is not None


@pytest.mark.parametrize("policy", ["Background", "Foreground"])
def test_gc_ownership_cycles_never_block(cluster, policy):
    api = cluster[0].api
    ns = new_namespace(api)
    a = make_cm(api, ns, "a")
    b = make_cm(api, ns, "b", owners=[a])
    c = make_cm(api, ns, "c", owners=[b])
    # Close the circle: a is owned by c.
    st, _, body = api.patch(cm_path(ns, "a"), {"metadata": {"ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": c["metadata"]["uid"],
         "blockOwnerDeletion": True}]}})
    assert st == 200, body
    delete(api, cm_path(ns, "a"), policy)
    for name in ("a", "b", "c"):
        wait_for(name + " gone", lambda: get(api, cm_path(ns, name)) is None, timeout=30)
    assert b["metadata"]["uid"]


# --------------------------------------------------------------------------- ReplicaSet controller


def rs_body(name, replicas, labels=None, min_ready=0):
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "minReadySeconds": min_ready, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": dict(labels, extra="x")},
                                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}


def rs_path(ns, name=""):
    return "/apis/apps/v1/namespaces/%s/replicasets%s" % (ns, "/" + name if name else "")


def pods_of(api, ns, selector):
    _, _, lst = api.get("/api/v1/namespaces/%s/pods?labelSelector=%s" % (ns, selector))
    return [p for p in lst["items"] if not p["metadata"].get("deletionTimestamp")]


def make_ready(api, ns, pod, node=None, since=None):
    name = pod["metadata"]["name"]
    if node:
        # The node must exist: the pod garbage collector removes pods bound to missing nodes.
        st, _, body = api.post("/api/v1/nodes", {"metadata": {"name": node}})
        assert st in (201, 409), body
        st, _, body = api.post("/api/v1/namespaces/%s/pods/%s/binding" % (ns, name),
                               {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                                "target": {"kind": "Node", "name": node}})
        assert st == 201, body
    ts = since or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    st, _, body = api.patch("/api/v1/namespaces/%s/pods/%s/status" % (ns, name), {"status": {
        "phase": "Running", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ts}]}})
    assert st == 200, body


def rs_status(api, ns, name):
    return (get(api, rs_path(ns, name)) or {}).get("status", {})


def test_replicaset_creates_scales_and_reports(cluster):
    api = cluster[0].api
    ns = new_namespace(api)
    st, _, rs = api.post(rs_path(ns), rs_body("web", 3, min_ready=2))
    assert st == 201, rs
    pods = wait_for("3 pods", lambda: (lambda p: p if len(p) == 3 else None)(pods_of(api, ns, "app%3Dweb")))
    for p in pods:
        assert p["metadata"]["name"].startswith("web-")
        ref = p["metadata"]["ownerReferences"][0]
        assert ref == {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": rs["metadata"]["uid"],
                       "controller": True, "blockOwnerDeletion": True}, ref
        assert p["metadata"]["labels"] == {"app": "web", "extra": "x"}
    wait_for("status replicas 3", lambda: rs_status(api, ns, "web").get("replicas") == 3 and
             rs_status(api, ns, "web").get("observedGeneration") == 1)
    assert rs_status(api, ns, "web")["fullyLabeledReplicas"] == 3
    # Ready pods count at once; available only after minReadySeconds.
    make_ready(api, ns, pods[0], node="n1")
    wait_for("readyReplicas 1", lambda: rs_status(api, ns, "web").get("readyReplicas") == 1)
    assert rs_status(api, ns, "web").get("availableReplicas", 0) == 0
    wait_for("availableReplicas 1", lambda: rs_status(api, ns, "web").get("availableReplicas") == 1, timeout=10)
    # Nothing extra appears while it is settled.
    time.sleep(1)
    assert len(pods_of(api, ns, "app%3Dweb")) == 3
    # Scale down through the scale subresource: the unassigned, not-ready pods go first.
    st, _, body = api.patch(rs_path(ns, "web") + "/scale", {"spec": {"replicas": 1}})
    assert st == 200, body
    left = wait_for("1 pod", lambda: (lambda p: p if len(p) == 1 else None)(pods_of(api, ns, "app%3Dweb")))
    assert left[0]["metadata"]["name"] == pods[0]["metadata"]["name"]
    wait_for("status replicas 1", lambda: rs_status(api, ns, "web").get("replicas") == 1 and
             rs_status(api, ns, "web").get("observedGeneration") == 2)
    _, _, evs = api.get("/api/v1/namespaces/%s/events?fieldSelector=involvedObject.name%%3Dweb" % ns)
    reasons = [e["reason"] for e in evs["items"]]
    assert reasons.count("SuccessfulCreate") == 3 and reasons.count("SuccessfulDelete") == 2, reasons
    # Deleting the ReplicaSet lets the garbage collector remove its pods.
    delete(api, rs_path(ns, "web"))
    wait_for("pods collected", lambda: pods_of(api, ns, "app%3Dweb") == [])


def test_replicaset_adopts_releases_and_replaces(cluster):
    api = cluster[0].api
    ns = new_namespace(api)
    st, _, orphan = api.post("/api/v1/namespaces/%s/pods" % ns, {
        "metadata": {"name": "orphan", "labels": {"app": "db"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert st == 201, orphan
    st, _, rs = api.post(rs_path(ns), rs_body("db", 2))
    assert st == 201, rs
    pods = wait_for("2 pods", lambda: (lambda p: p if len(p) == 2 else None)(pods_of(api, ns, "app%3Ddb")))
    adopted = [p for p in pods if p["metadata"]["name"] == "orphan"]
    assert adopted and adopted[0]["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"], pods
    # A pod relabelled out of the selector is released and replaced.
    st, _, _ = api.patch("/api/v1/namespaces/%s/pods/orphan" % ns, {"metadata": {"labels": {"app": "other"}}})
    assert st == 200
    released = wait_for("released", lambda: (lambda p: p if p and not p["metadata"].get("ownerReferences") else None)(
        get(api, "/api/v1/namespaces/%s/pods/orphan" % ns)))
    assert released["metadata"]["labels"] == {"app": "other"}
    wait_for("a replacement", lambda: len(pods_of(api, ns, "app%3Ddb")) == 2)
    # A failed pod is replaced; it is not counted.
    victim = pods_of(api, ns, "app%3Ddb")[0]
    st, _, _ = api.patch("/api/v1/namespaces/%s/pods/%s/status" % (ns, victim["metadata"]["name"]),
                         {"status": {"phase": "Failed"}})
    assert st == 200
    wait_for("2 active pods again", lambda: len([p for p in pods_of(api, ns, "app%3Ddb")
                                                 if p.get("status", {}).get("phase") != "Failed"]) == 2)


def test_replicaset_burst_makes_exactly_replicas(cluster):
    api = cluster[0].api
    ns = new_namespace(api)
    st, _, rs = api.post(rs_path(ns), rs_body("many", 60))
    assert st == 201, rs
    wait_for("60 pods", lambda: len(pods_of(api, ns, "app%3Dmany")) >= 60, timeout=60)
    time.sleep(2)
    assert len(pods_of(api, ns, "app%3Dmany")) == 60
    wait_for("status replicas 60", lambda: rs_status(api, ns, "many").get("replicas") == 60)
    st, _, _ = api.patch(rs_path(ns, "many") + "/scale", {"spec": {"replicas": 0}})
    assert st == 200
    wait_for("no pods", lambda: pods_of(api, ns, "app%3Dmany") == [], timeout=60)


def slices_of(api, ns, service):
    _, _, lst = api.get("/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices"
                        "?labelSelector=kubernetes.io/service-name%%3D%s" % (ns, service))
    return lst["items"]


def slice_ips(slices):
    return sorted(ep["addresses"][0] for s in slices for ep in s["endpoints"] or [])


def test_endpointslices_follow_pods_in_slices_of_at_most_max(cluster, kubectl_for):
    """The module's controller manager runs with --max-endpoints-per-slice=2."""
    api = cluster[0].api
    ns = new_namespace(api)
    st, _, svc = api.post("/api/v1/namespaces/%s/services" % ns, {
        "metadata": {"name": "web", "labels": {"tier": "front"}},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}})
    assert st == 201, svc
    # No pods yet: one placeholder slice, owned by the Service.
    placeholder = wait_for("the placeholder slice", lambda: (lambda s: s if len(s) == 1 else None)(
        slices_of(api, ns, "web")))[0]
    assert placeholder["addressType"] == "IPv4"
    assert not placeholder.get("endpoints") and not placeholder.get("ports"), placeholder
    assert placeholder["metadata"]["name"].startswith("web-")
    assert placeholder["metadata"]["labels"] == {
        "tier": "front", "kubernetes.io/service-name": "web",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
    ref = placeholder["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == ("Service", "web", svc["metadata"]["uid"], True)

    ips = {}
    for i in range(5):
        name = "p%d" % i
        st, _, pod = api.post("/api/v1/namespaces/%s/pods" % ns, {
            "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
        assert st == 201, pod
        ips[name] = "10.77.0.%d" % (10 + i)
        st, _, body = api.patch("/api/v1/namespaces/%s/pods/%s/status" % (ns, name), {"status": {
            "phase": "Running", "podIP": ips[name],
            "conditions": [{"type": "Ready", "status": "False" if i == 4 else "True"}]}})
        assert st == 200, body
    want = sorted(ips.values())
    slices = wait_for("slices for 5 pods", lambda: (lambda s: s if slice_ips(s) == want and len(s) == 3 else None)(
        slices_of(api, ns, "web")))
    assert placeholder["metadata"]["name"] not in [s["metadata"]["name"] for s in slices]
    for s in slices:
        assert 1 <= len(s["endpoints"]) <= 2, s
        assert s["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}], s
        for ep in s["endpoints"]:
            name = ep["targetRef"]["name"]
            assert ep["addresses"] == [ips[name]] and ep["targetRef"]["kind"] == "Pod"
            assert ep["conditions"] == {"ready": name != "p4", "serving": name != "p4", "terminating": False}

    # Stock kubectl's table.
    rc, out, err = kubectl_for("get", "endpointslices", "-n", ns)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"], out
    assert len(lines) == 4 and all(l.split()[1:3] == ["IPv4", "8080"] for l in lines[1:]), out

    # A slice deleted by hand is made good; a deleted pod leaves.
    victim = slices[0]["metadata"]["name"]
    st, _, body = api.delete("/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices/%s" % (ns, victim))
    assert st == 200, body
    wait_for("the endpoints back", lambda: slice_ips(slices_of(api, ns, "web")) == want)
    st, _, body = api.delete("/api/v1/namespaces/%s/pods/p0?gracePeriodSeconds=0" % ns)
    assert st == 200, body
    want.remove(ips["p0"])
    wait_for("p0 gone from the slices", lambda: slice_ips(slices_of(api, ns, "web")) == want)
    assert all(len(s["endpoints"]) <= 2 for s in slices_of(api, ns, "web"))

    # Deleting the Service takes its slices with it.
    st, _, body = api.delete("/api/v1/namespaces/%s/services/web" % ns)
    assert st == 200, body
    wait_for("no slices", lambda: slices_of(api, ns, "web") == [])



# --------------------------------------------------------------------------- leader election (last: it stops the
# module's controller manager)


@pytest.mark.slow
def test_one_leader_and_takeover(cluster, tmp_path_factory):
    srv, cm = cluster
    api = srv.api
    lease_path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager"
    first = wait_for("the lease", lambda: (get(api, lease_path) or {}).get("spec", {}).get("holderIdentity"))
    second = ControllerManager(srv, str(tmp_path_factory.mktemp("cm2")), name="cm2")
    try:
        time.sleep(3)
        assert get(api, lease_path)["spec"]["holderIdentity"] == first
        assert "started namespace" not in second.log_tail()
        # The leader leaves (releasing the lease); the standby takes over and works.
        assert cm.stop() == 0
        wait_for("the standby to lead", lambda: "started namespace" in second.log_tail(), timeout=20)
        ns = new_namespace(api)
        wait_for("ServiceAccount default from the new leader",
                 lambda: get(api, "/api/v1/namespaces/%s/serviceaccounts/default" % ns))
    finally:
        assert second.stop() == 0, second.log_tail()
