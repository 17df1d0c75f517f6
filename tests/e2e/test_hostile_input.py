"""Hostile input against the HTTPS API server: 10,000 concurrent idle connections (some
stuck half-way through a TLS handshake), then a bounded flood of oversized, malformed,
deeply nested and garbage requests. Throughout, health checks and normal requests are
answered, nothing is answered 5xx, and every acknowledged object is intact afterwards.
Also the per-user watch limit (429). Loopback only.

Run from the repository root:  /usr/bin/python3 -m pytest tests/e2e/test_hostile_input.py -q
"""

import concurrent.futures
import http.client
import json
import os
import resource
import socket
import time

import pytest

from conftest import http_request
from proc_stats import rss_mib  # tests/harness, on the path through conftest

IDLE_CONNECTIONS = 10000
FLOOD_REQUESTS = 1200      # bounded in count ...
FLOOD_SECONDS = 120        # ... and in time


def raise_fd_limit(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        assert hard >= need, "this test needs %d descriptors; the hard limit is %d" % (need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


@pytest.fixture(scope="module")
def srv(server_factory):
    return server_factory()


def api(srv, method, path, body=None, headers=None, content_type=None, timeout=30):
    return http_request(srv.base_url, method, path, body, headers=headers, content_type=content_type,
                        timeout=timeout, context=srv.ssl_context)


@pytest.mark.slow
def test_idle_connections_and_a_flood_leave_the_server_serving(srv):
    # Acknowledged data first.
    acked = {}
    for i in range(30):
        st, _, raw = api(srv, "POST", "/api/v1/namespaces/default/configmaps",
                         {"metadata": {"name": "keep-%d" % i}, "data": {"i": str(i)}})
        assert st == 201, raw
        obj = json.loads(raw)
        acked[obj["metadata"]["name"]] = (obj["metadata"]["resourceVersion"], obj["data"])

    raise_fd_limit(IDLE_CONNECTIONS + 512)
    idle = []
    rss_before = rss_mib(srv.pid)
    try:
        t0 = time.monotonic()
        for i in range(IDLE_CONNECTIONS):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            if i % 10 == 0:
                s.sendall(b"\x16\x03\x01\x02")  # a TLS record header, then nothing (slowloris)
            idle.append(s)
        opened = time.monotonic() - t0
        # With all of them open, the server still answers health checks and real work.
        t1 = time.monotonic()
        st, _, body = api(srv, "GET", "/healthz", timeout=20)
        health_latency = time.monotonic() - t1
        assert (st, body) == (200, b"ok")
        st, _, raw = api(srv, "POST", "/api/v1/namespaces/default/configmaps",
                         {"metadata": {"name": "during-idle"}, "data": {"k": "v"}}, timeout=20)
        assert st == 201, raw
        st, _, raw = api(srv, "GET", "/api/v1/namespaces/default/configmaps?limit=500", timeout=20)
        assert st == 200 and len(json.loads(raw)["items"]) == 31
        rss_idle = rss_mib(srv.pid)
        print("\n%d idle connections opened in %.1fs; healthz with them open in %.0f ms; "
              "server RSS %.0f -> %.0f MiB" % (len(idle), opened, health_latency * 1000, rss_before, rss_idle))

        # The flood, bounded in count and time. Every answer is a 4xx (or the connection is
        # closed on garbage): never a 5xx, never a hang.
        statuses = {}
        deadline = time.monotonic() + FLOOD_SECONDS
        ctx = srv.ssl_context
        deep = "[" * 20000 + "]" * 20000
        kinds = [
            ("oversized", lambda: api(srv, "POST", "/api/v1/namespaces/default/configmaps",
                                      b'{"metadata":{"name":"big"},"data":{"k":"' + b"x" * (4 << 20) + b'"}}',
                                      content_type="application/json")),
            ("malformed", lambda: api(srv, "POST", "/api/v1/namespaces/default/configmaps",
                                      b'{"metadata": {"name": "bad"', content_type="application/json")),
            ("deep-json", lambda: api(srv, "POST", "/api/v1/namespaces/default/configmaps",
                                      deep.encode(), content_type="application/json")),
            ("deep-yaml", lambda: api(srv, "POST", "/api/v1/namespaces/default/configmaps",
                                      ("a:\n" + "".join(" " * (i + 1) + "- \n" for i in range(2000))).encode(),
                                      content_type="application/yaml")),
            ("bad-protobuf", lambda: api(srv, "POST", "/api/v1/namespaces/default/configmaps",
                                         b"k8s\x00\x0a\xff\xff\xff\xff\x0f",
                                         content_type="application/vnd.kubernetes.protobuf")),
            ("huge-annotation", lambda: api(srv, "POST", "/api/v1/namespaces/default/configmaps",
                                            {"metadata": {"name": "ann", "annotations": {"a": "x" * 300000}}})),
            ("long-name", lambda: api(srv, "GET", "/api/v1/namespaces/default/configmaps/" + "n" * 5000)),
            ("huge-header", lambda: api(srv, "GET", "/api/v1/namespaces", headers={"X-Junk": "j" * 100000})),
            ("bad-patch", lambda: api(srv, "PATCH", "/api/v1/namespaces/default/configmaps/keep-0",
                                      b'[{"op":"replace","path":"/data/i","value":' + b"[" * 5000 + b"]",
                                      content_type="application/json-patch+json")),
        ]

        def garbage():
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            try:
                s.sendall(os.urandom(4096))
                s.settimeout(10)
                try:
                    s.recv(1024)
                except (ConnectionError, socket.timeout):
                    pass
            finally:
                s.close()
            return ("closed", None, None)

        def one(n):
            if time.monotonic() > deadline:
                return "skipped", None
            if n % (len(kinds) + 1) == len(kinds):
                return "garbage", garbage()[0]
            name, fn = kinds[n % (len(kinds) + 1)]
            try:
                st, _, _ = fn()
            except (OSError, http.client.HTTPException) as e:
                # The server closes the connection after refusing an over-large body, possibly
                # while the client is still sending it.
                return name, "closed"
            return name, st

        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            for name, st in pool.map(one, range(FLOOD_REQUESTS)):
                statuses.setdefault(name, {}).setdefault(st, 0)
                statuses[name][st] += 1
        print("flood results: %s" % json.dumps({k: {str(s): n for s, n in v.items()} for k, v in statuses.items()},
                                                sort_keys=True))
        assert "skipped" not in statuses, statuses  # the flood finished inside its time bound
        for name, by_status in statuses.items():
            for st in by_status:
                assert not (isinstance(st, int) and st >= 500), (name, by_status)
        assert set(statuses["oversized"]) <= {413, "closed"}, statuses
        assert set(statuses["malformed"]) == {400} and set(statuses["deep-json"]) == {400}
        assert set(statuses["deep-yaml"]) == {400} and set(statuses["bad-protobuf"]) == {400}
        assert set(statuses["huge-annotation"]) == {422} and set(statuses["bad-patch"]) == {400}
        # As for bodies, the server answers and closes while the client may still be sending.
        assert set(statuses["huge-header"]) <= {431, "closed"} and 431 in statuses["huge-header"], statuses

        # Still serving, with the idle connections still open.
        st, _, body = api(srv, "GET", "/readyz")
        assert (st, body) == (200, b"ok")
    finally:
        for s in idle:
            s.close()

    assert srv.running(), srv.log_tail()
    # Every acknowledged object is intact, and nothing the flood sent was stored.
    for name, (rv, data) in acked.items():
        st, _, raw = api(srv, "GET", "/api/v1/namespaces/default/configmaps/" + name)
        obj = json.loads(raw)
        assert st == 200 and obj["data"] == data and obj["metadata"]["resourceVersion"] == rv, obj
    for name in ("big", "bad", "ann"):
        st, _, _ = api(srv, "GET", "/api/v1/namespaces/default/configmaps/" + name)
        assert st == 404
    st, _, raw = api(srv, "GET", "/api/v1/namespaces/default/configmaps/during-idle")
    assert st == 200 and json.loads(raw)["data"] == {"k": "v"}


def test_watches_per_user_are_limited(server_factory):
    srv = server_factory(extra_args=["--max-watches-per-user", "3"])
    conns = []
    try:
        for _ in range(3):
            c = http.client.HTTPSConnection("127.0.0.1", srv.port, context=srv.ssl_context, timeout=10)
            c.request("GET", "/api/v1/namespaces/default/configmaps?watch=1")
            r = c.getresponse()
            assert r.status == 200
            conns.append((c, r))
        st, hdrs, raw = api(srv, "GET", "/api/v1/namespaces/default/configmaps?watch=1")
        body = json.loads(raw)
        assert st == 429 and body["reason"] == "TooManyRequests" and hdrs.get("Retry-After") == "1", body
        assert body["message"] == 'too many watches: user "kubernetes-admin" already has 3 open', body
        # Another user is not affected; and a closed watch gives its slot back.
        node = srv.client_context("scheduler")
        st, _, _ = http_request(srv.base_url, "GET", "/api/v1/pods?watch=1&timeoutSeconds=1", context=node)
        assert st == 200
        c, r = conns.pop()
        c.close()
        deadline = time.monotonic() + 10
        while True:
            st, _, _ = api(srv, "GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
            if st == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert st == 200
    finally:
        for c, _ in conns:
            c.close()
