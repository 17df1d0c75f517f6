"""Fault tests of the distributed mode (issue 9): three etcd members and two API servers on
loopback, a client writing continuously and recording every acknowledged write, watches on
both servers. The etcd leader is killed, then one API server, then both come back.
Afterwards every acknowledged write is present exactly once, no watch saw a
resourceVersion go backwards, and writes resumed within 10 s of each failure.

The figures (resume times, writes acknowledged, failed and lost) are printed; they are
recorded in docs/reliability.md."""

import json
import threading
import time
import urllib.error
import urllib.request
import uuid

import pytest

from conftest import api_servers_on_etcd

NS_PATH = "/api/v1/namespaces/default/configmaps"
RESUME_BOUND = 10.0


def request(base_url, method, path, body=None, timeout=5.0):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base_url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read())
        except ValueError:
            return e.code, None


class Writer(threading.Thread):
    """Creates ConfigMaps one after another, each with a unique seq, through whichever API
    server answers (the last good one first). A write is acknowledged only by a 201."""

    def __init__(self, servers, run_id):
        super().__init__(daemon=True)
        self.servers = servers
        self.run_id = run_id
        self.stop = threading.Event()
        self.acked = []   # (seq, name, resourceVersion, time)
        self.failed = []  # (seq, time, why): not acknowledged; may or may not exist
        self.preferred = 0

    def run(self):
        try:
            self._run()
        except BaseException as e:  # reported by the test through `error`
            self.error = repr(e)
            raise

    error = None

    def _run(self):
        seq = 0
        while not self.stop.is_set():
            seq += 1
            body = {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"generateName": "w-", "labels": {"run": self.run_id}},
                    "data": {"seq": str(seq)}}
            srv = self.servers[self.preferred % len(self.servers)]
            why = None
            try:
                if not srv.running() or srv.port is None:
                    raise OSError("server down")
                status, obj = request(srv.base_url, "POST", NS_PATH, body, timeout=15)
                if status == 201:
                    self.acked.append((seq, obj["metadata"]["name"],
                                       int(obj["metadata"]["resourceVersion"]), time.monotonic()))
                    time.sleep(0.01)
                    continue
                why = "HTTP %s %s" % (status, (obj or {}).get("message", ""))
            except (OSError, ValueError) as e:
                why = str(e)
            self.failed.append((seq, time.monotonic(), why))
            self.preferred += 1  # the other server next
            time.sleep(0.05)

    def first_ack_after(self, t):
        for _, _, _, at in list(self.acked):
            if at > t:
                return at
        return None

    def wait_resumed(self, t, limit=RESUME_BOUND + 10):
        """When the first write after t was acknowledged (None if not within `limit`)."""
        deadline = t + limit
        while time.monotonic() < deadline:
            at = self.first_ack_after(t)
            if at is not None:
                return at
            time.sleep(0.05)
        return None


class Watcher(threading.Thread):
    """Watches ConfigMaps on one API server from a list's revision, reconnecting from the
    last resourceVersion seen (re-listing on 410, as informers do), and records every
    resourceVersion in order."""

    def __init__(self, server, run_id):
        super().__init__(daemon=True)
        self.server = server
        self.run_id = run_id
        self.stop = threading.Event()
        self.revisions = []
        self.added = set()
        self.backwards = []
        self.relists = 0
        self.last = None

    def _see(self, rv):
        if self.last is not None and rv < self.last:
            self.backwards.append((self.last, rv))
        self.last = rv if self.last is None else max(self.last, rv)
        self.revisions.append(rv)

    def _list(self):
        status, lst = request(self.server.base_url, "GET", NS_PATH + "?labelSelector=run%3D" + self.run_id)
        if status != 200:
            raise OSError("list: HTTP %s" % status)
        for o in lst["items"]:
            self.added.add(o["metadata"]["name"])
        self._see(int(lst["metadata"]["resourceVersion"]))

    def run(self):
        while not self.stop.is_set():
            try:
                if not self.server.running() or self.server.port is None:
                    raise OSError("server down")
                if self.last is None:
                    self._list()
                url = "%s%s?watch=1&labelSelector=run%%3D%s&resourceVersion=%d&timeoutSeconds=5" % (
                    self.server.base_url, NS_PATH, self.run_id, self.last)
                with urllib.request.urlopen(url, timeout=10) as resp:
                    for line in resp:
                        ev = json.loads(line)
                        if ev["type"] == "ERROR":
                            if ev["object"].get("code") == 410:
                                self.relists += 1
                                self._list()
                            break
                        rv = int(ev["object"]["metadata"]["resourceVersion"])
                        if ev["type"] != "BOOKMARK":
                            self._see(rv)
                        if ev["type"] == "ADDED":
                            self.added.add(ev["object"]["metadata"]["name"])
                        if self.stop.is_set():
                            break
            except urllib.error.HTTPError as e:
                if e.code == 410:
                    self.relists += 1
                    try:
                        self._list()
                    except (OSError, ValueError):
                        time.sleep(0.2)
                else:
                    time.sleep(0.2)
            except (OSError, ValueError):
                time.sleep(0.2)


@pytest.fixture
def cluster(tmp_path):
    with api_servers_on_etcd(str(tmp_path), members=3) as (etcd, servers):
        yield etcd, servers


def test_acknowledged_writes_survive_losing_the_etcd_leader_and_an_api_server(cluster):
    etcd, (a, b) = cluster
    run_id = uuid.uuid4().hex[:8]
    writer = Writer([a, b], run_id)
    watchers = [Watcher(a, run_id), Watcher(b, run_id)]
    for w in watchers:
        w.start()
    time.sleep(0.5)
    writer.start()
    figures = {}
    try:
        time.sleep(3)
        # 1. The etcd leader dies.
        leader = etcd.leader()
        t = time.monotonic()
        etcd.kill_member(leader)
        # A write that etcd forwarded to the dead leader is lost in etcd and fails only at
        # etcd's request timeout (5 s + 2 election timeouts = 7 s by default).
        resumed = writer.wait_resumed(t)
        assert resumed is not None, "no write acknowledged after the etcd leader died (%d before; writer %s): %s" % (
            len(writer.acked), "running" if writer.is_alive() else "dead", writer.failed[-3:])
        figures["etcd leader killed: writes resumed after (s)"] = resumed - t
        time.sleep(2)
        # 2. An API server dies (the writer and one watch were using it).
        t = time.monotonic()
        a.kill()
        resumed = writer.wait_resumed(t)
        assert resumed is not None, "no write acknowledged after API server a died: %s" % writer.failed[-3:]
        figures["API server killed: writes resumed after (s)"] = resumed - t
        time.sleep(2)
        # 3. Both come back.
        etcd.start_member(leader)
        etcd.wait_healthy([leader])
        a.port = None
        a.start()
        t = time.monotonic()
        assert writer.wait_resumed(t) is not None
        time.sleep(2)
    finally:
        writer.stop.set()
        writer.join(30)
    # Let the watches catch up with the last writes, then stop them.
    last_rv = max(rv for _, _, rv, _ in writer.acked)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any((w.last or 0) < last_rv for w in watchers):
        time.sleep(0.1)
    for w in watchers:
        w.stop.set()
    for w in watchers:
        w.join(15)

    # Every acknowledged write is there exactly once (read through both servers).
    for srv in (a, b):
        status, lst = request(srv.base_url, "GET", NS_PATH + "?labelSelector=run%3D" + run_id, timeout=30)
        assert status == 200
        by_seq = {}
        for o in lst["items"]:
            by_seq.setdefault(int(o["data"]["seq"]), []).append(o["metadata"]["name"])
        duplicated = {s: n for s, n in by_seq.items() if len(n) > 1}
        assert not duplicated, "writes applied twice: %s" % duplicated
        lost = [(s, n) for s, n, _, _ in writer.acked if by_seq.get(s) != [n]]
        assert not lost, "acknowledged writes lost: %s" % lost[:10]
    # No watch saw a resourceVersion go backwards; the one on b (never restarted) saw every
    # acknowledged write.
    for w in watchers:
        assert not w.backwards, "resourceVersion went backwards on %s: %s" % (w.server.base_url, w.backwards[:5])
    missed = [n for _, n, _, _ in writer.acked if n not in watchers[1].added]
    assert not missed, "the watch on b missed %d acknowledged writes" % len(missed)
    for what, seconds in figures.items():
        assert seconds < RESUME_BOUND, "%s: %.1f s" % (what, seconds)

    figures["writes acknowledged"] = len(writer.acked)
    figures["writes not acknowledged (failed or unknown)"] = len(writer.failed)
    figures["acknowledged writes lost"] = 0
    figures["watch re-lists on a (after its restart)"] = watchers[0].relists
    print("\nFAULT FIGURES " + json.dumps(figures))
