"""Several API servers on one etcd (issue 9): each follows etcd, so what is written through
one is read, listed and watched through the other at once, and default/kubernetes lists
every live server. Each test starts its own etcd; it runs in both passes of the suite."""

import json
import os
import threading
import time
import urllib.request

import pytest

from conftest import api_servers_on_etcd


@pytest.fixture
def two_servers(tmp_path):
    with api_servers_on_etcd(str(tmp_path)) as (_, servers):
        yield servers


def cm(name, value):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": value}}


def kubernetes_endpoints(srv):
    status, _, ep = srv.api.get("/api/v1/namespaces/default/endpoints/kubernetes")
    assert status == 200, ep
    return sorted("%s:%d" % (a["ip"], s["ports"][0]["port"]) for s in ep.get("subsets", []) for a in s["addresses"])


def test_writes_through_one_server_are_read_at_once_through_the_other(two_servers):
    a, b = two_servers
    path = "/api/v1/namespaces/default/configmaps"
    for i in range(30):
        status, _, made = a.api.post(path, cm("c%d" % i, str(i)))
        assert status == 201, made
        # A consistent read on b (no resourceVersion) sees the write b never handled.
        status, _, got = b.api.get(path + "/c%d" % i)
        assert status == 200, got
        assert got["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]
        status, _, lst = b.api.get(path)
        assert status == 200
        assert "c%d" % i in {o["metadata"]["name"] for o in lst["items"]}
        assert int(lst["metadata"]["resourceVersion"]) >= int(made["metadata"]["resourceVersion"])
    # An update through b conflicts with a stale resourceVersion from a, as on one server.
    stale = dict(made, data={"v": "stale"})
    status, _, ok = b.api.put(path + "/c29", dict(made, data={"v": "fresh"}))
    assert status == 200, ok
    status, _, conflict = a.api.put(path + "/c29", stale)
    assert status == 409 and conflict["reason"] == "Conflict", conflict


def test_a_watch_on_one_server_sees_writes_through_the_other_in_order(two_servers):
    a, b = two_servers
    path = "/api/v1/namespaces/default/configmaps"
    status, _, lst = b.api.get(path)
    start_rv = lst["metadata"]["resourceVersion"]
    seen = []
    done = threading.Event()

    def watch():
        url = "%s%s?watch=1&resourceVersion=%s&timeoutSeconds=30" % (b.base_url, path, start_rv)
        with urllib.request.urlopen(url, timeout=40) as resp:
            for line in resp:
                ev = json.loads(line)
                seen.append((ev["type"], ev["object"]["metadata"]["name"],
                             int(ev["object"]["metadata"]["resourceVersion"])))
                if len(seen) >= 20:
                    break
        done.set()

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    time.sleep(0.5)
    written = []
    for i in range(10):
        status, _, made = a.api.post(path, cm("w%d" % i, "x"))
        assert status == 201
        written.append(("ADDED", "w%d" % i, int(made["metadata"]["resourceVersion"])))
        status, _, gone = a.api.delete(path + "/w%d" % i)
        assert status == 200, gone
        written.append(("DELETED", "w%d" % i, None))
    assert done.wait(20), "the watch on b saw only %s" % seen
    assert [(t, n) for t, n, _ in seen] == [(t, n) for t, n, _ in written]
    revs = [r for _, _, r in seen]
    assert revs == sorted(revs) and len(set(revs)) == len(revs)
    assert [r for _, _, r in seen[0::2]] == [r for _, _, r in written[0::2]]


def test_default_kubernetes_lists_every_live_api_server(two_servers):
    a, b = two_servers
    both = sorted(["127.0.0.1:%d" % a.port, "127.0.0.1:%d" % b.port])
    deadline = time.monotonic() + 5
    while kubernetes_endpoints(a) != both and time.monotonic() < deadline:
        time.sleep(0.1)
    assert kubernetes_endpoints(a) == both
    assert kubernetes_endpoints(b) == both
    # A server that stops takes itself out of the list as it goes.
    b.stop()
    assert kubernetes_endpoints(a) == ["127.0.0.1:%d" % a.port]
    # And comes back when it starts again (on a new port).
    b.port = None
    b.start()
    again = sorted(["127.0.0.1:%d" % a.port, "127.0.0.1:%d" % b.port])
    assert kubernetes_endpoints(a) == again
    status, _, slices = a.api.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
                                  "?labelSelector=kubernetes.io/service-name=kubernetes")
    assert status == 200
    ports = sorted(s["ports"][0]["port"] for s in slices["items"])
    assert ports == sorted([a.port, b.port])


def test_api_server_reaches_etcd_over_tls_with_a_client_certificate(tmp_path):
    """etcd serving HTTPS and requiring client certificates: --etcd-cafile/--etcd-certfile/
    --etcd-keyfile get the API server in; without the client certificate it cannot start."""
    import subprocess
    from conftest import SERVER_BIN, ShepherdServer
    import etcd_cluster

    d = str(tmp_path)

    def openssl(*args):
        subprocess.run(["openssl"] + list(args), check=True, capture_output=True, cwd=d)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
            "-days", "2", "-subj", "/CN=etcd-test-ca")
    with open(os.path.join(d, "san"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    for name, subj, ext in (("server", "/CN=etcd", ["-extfile", "san"]), ("client", "/O=shepherd", [])):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr", "-subj", subj)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", name + ".crt", "-days", "2", *ext)
    tls = etcd_cluster.EtcdTls(os.path.join(d, "ca.crt"), os.path.join(d, "server.crt"), os.path.join(d, "server.key"),
                               os.path.join(d, "client.crt"), os.path.join(d, "client.key"))
    # start() waits for /health over HTTPS with the client certificate: etcd answers a
    # client that has it...
    etcd = etcd_cluster.EtcdCluster(os.path.join(d, "etcd"), tls=tls).start()
    url = etcd.endpoints
    assert url.startswith("https://127.0.0.1:"), url
    srv = None
    try:
        ca = ["--etcd-servers", url, "--etcd-cafile", os.path.join(d, "ca.crt")]
        assert etcd.members[0].healthy()
        # ...and refuses the handshake without it: the API server says so and exits.
        refused = subprocess.run([SERVER_BIN, "--data-dir", os.path.join(d, "nocert"), "--port", "0",
                                  "--plain-http"] + ca, capture_output=True, text=True, timeout=60)
        assert refused.returncode != 0 and "cannot reach etcd" in refused.stderr, refused.stderr
        os.makedirs(os.path.join(d, "api"))
        srv = ShepherdServer(os.path.join(d, "api"), tls=False, extra_args=ca + [
            "--etcd-certfile", os.path.join(d, "client.crt"), "--etcd-keyfile", os.path.join(d, "client.key")])
        srv.start()
        status, _, made = srv.api.post("/api/v1/namespaces/default/configmaps", cm("over-tls", "v"))
        assert status == 201, made
        status, _, got = srv.api.get("/api/v1/namespaces/default/configmaps/over-tls")
        assert status == 200 and got["data"] == {"v": "v"}, got
    finally:
        if srv:
            srv.stop()
        etcd.stop()
