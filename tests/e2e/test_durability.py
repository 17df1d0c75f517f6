"""Acknowledged writes survive kill -9 and SIGTERM.

Each test runs its own shepherd-apiserver on its own data dir (the shared one is left alone).
"""

import concurrent.futures
import json
import threading
import time

import pytest

from conftest import http_request

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage

NS = "default"
CM = "/api/v1/namespaces/%s/configmaps" % NS
THREADS = 16


def cm(name, data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def list_configmaps(api, prefix):
    st, _, lst = api.get(CM)
    assert st == 200, lst
    return {o["metadata"]["name"]: o for o in lst["items"]
            if o["metadata"]["name"].startswith(prefix)}


def test_acknowledged_creates_survive_kill_9(server_factory, restart_server):
    srv = server_factory()
    n = 200
    names = ["durable-%03d" % i for i in range(n)]

    def create(name):
        st, _, obj = srv.api.post(CM, cm(name, {"name": name, "payload": "x" * 512}))
        assert st == 201, (name, st, obj)
        return name, obj["metadata"]["resourceVersion"], obj["metadata"]["uid"]

    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        acked = {name: (rv, uid) for name, rv, uid in pool.map(create, names)}
    assert len(acked) == n
    rvs = [int(rv) for rv, _ in acked.values()]
    assert len(set(rvs)) == n, "every write gets its own resourceVersion"

    old_pid = srv.pid
    restart_server(srv, hard=True)  # kill -9, then start on the same data dir
    assert srv.proc.returncode is None and srv.pid != old_pid

    for name, (rv, uid) in acked.items():
        st, _, obj = srv.api.get(CM + "/" + name)
        assert st == 200, "%s lost after kill -9" % name
        assert obj["metadata"]["resourceVersion"] == rv, name
        assert obj["metadata"]["uid"] == uid, name
        assert obj["data"]["name"] == name
    assert set(list_configmaps(srv.api, "durable-")) == set(names)

    # new writes continue above the old resourceVersions
    st, _, obj = srv.api.post(CM, cm("after-restart", {"a": "b"}))
    assert st == 201
    assert int(obj["metadata"]["resourceVersion"]) > max(rvs)
    st, _, lst = srv.api.get(CM)
    assert int(lst["metadata"]["resourceVersion"]) >= int(obj["metadata"]["resourceVersion"])


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGKILL"])
def test_acknowledged_writes_survive_signal_under_load(server_factory, restart_server,
                                                       signal_name):
    """SIGTERM (or kill -9) while writes are in flight: every write answered 2xx is there
    after restart.

    Each writer thread creates new configmaps and also keeps updating one configmap of its
    own with an increasing counter; after restart the stored counter must be at least the
    last acknowledged one.
    """
    srv = server_factory()
    base = srv.base_url

    def send(*args, **kw):
        return http_request(*args, context=srv.ssl_context, **kw)
    stop = threading.Event()
    lock = threading.Lock()
    acked_creates = {}   # name -> resourceVersion
    acked_counter = {}   # thread -> (counter, resourceVersion)
    failures = []
    unacked = []         # writes that got an error status or no answer

    def writer(t):
        own = "counter-%02d" % t
        st, _, body = send(base, "POST", CM, cm(own, {"n": "0"}))
        assert st == 201, body
        with lock:
            acked_counter[t] = (0, json.loads(body)["metadata"]["resourceVersion"])
        i = 0
        while not stop.is_set():
            i += 1
            try:
                name = "inflight-%02d-%05d" % (t, i)
                st, _, body = send(base, "POST", CM, cm(name, {"i": str(i)}), timeout=15)
                if 200 <= st < 300:
                    with lock:
                        acked_creates[name] = json.loads(body)["metadata"]["resourceVersion"]
                else:
                    unacked.append((name, st))
                st, _, body = send(base, "PUT", CM + "/" + own,
                                           cm(own, {"n": str(i)}), timeout=15)
                if 200 <= st < 300:
                    with lock:
                        acked_counter[t] = (i, json.loads(body)["metadata"]["resourceVersion"])
                else:
                    unacked.append((own, st))
            except OSError as e:
                unacked.append(repr(e))
                # connection refused/reset once the server stops accepting; not acknowledged
                if not srv.running():
                    return
                time.sleep(0.01)
            except Exception as e:  # noqa: BLE001
                with lock:
                    failures.append(repr(e))
                return

    threads = [threading.Thread(target=writer, args=(t,), daemon=True) for t in range(THREADS)]
    for th in threads:
        th.start()
    # let writes flow, then SIGTERM mid-stream
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with lock:
            if len(acked_creates) >= 300:
                break
        time.sleep(0.05)
    with lock:
        before_term = len(acked_creates)
    assert before_term > 0, "no writes were acknowledged before SIGTERM"
    if signal_name == "SIGTERM":
        rc = srv.stop()  # SIGTERM; SIGKILL after 10 s
    else:
        rc = srv.kill()
    stop.set()
    for th in threads:
        th.join(30)
    assert not any(th.is_alive() for th in threads), "writer stuck after server exit"
    assert failures == []
    if signal_name == "SIGTERM":
        assert rc == 0, "exit code after SIGTERM: %s\n%s" % (rc, srv.log_tail())
    print("%s: %d creates acknowledged (%d before the signal), %d writes not acknowledged"
          % (signal_name, len(acked_creates), before_term, len(unacked)))

    restart_server(srv)
    present = list_configmaps(srv.api, "inflight-")
    missing = sorted(set(acked_creates) - set(present))
    assert not missing, "%d acknowledged creates lost, e.g. %s" % (len(missing), missing[:5])
    for name, rv in acked_creates.items():
        assert present[name]["metadata"]["resourceVersion"] == rv, name

    counters = list_configmaps(srv.api, "counter-")
    for t, (n, rv) in acked_counter.items():
        obj = counters["counter-%02d" % t]
        stored = int(obj["data"]["n"])
        assert stored >= n, "thread %d: acknowledged n=%d but stored n=%d" % (t, n, stored)
        if stored == n:
            assert obj["metadata"]["resourceVersion"] == rv
