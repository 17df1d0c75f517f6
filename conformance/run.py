#!/usr/bin/python3
"""Run Shepherd's ported Kubernetes conformance tests and write conformance/RESULTS.md.

Usage (from anywhere; needs /usr/bin/python3 with python3-kubernetes and pytest):

    /usr/bin/python3 conformance/run.py [--shards N] [extra pytest args, e.g. -k watch]

Runs the suite with pytest (a plugin records, per test, the upstream codename from its
``@conformance`` marker, the outcome and the duration of setup + call + teardown), prints
the results table, writes it to conformance/RESULTS.md sorted by codename (as upstream's
test/conformance/testdata/conformance.yaml is), followed by the upstream tests of the areas
being ported that are not ported yet and why (conformance/not_ported.tsv), and exits
non-zero if any test failed or errored.

``--shards N`` runs N pytest processes side by side, each with its own cluster (conftest.py's
session fixture) and its own share of SHEPHERD_TEST_SUBNETS; tests are dealt to the shards
longest first, by the seconds the last RESULTS.md recorded, so the shards end together. The
tests mostly wait (upstream's probe, grace and back-off timings), so N shards take about
1/N of the time even on two cores.

SHEPHERD_APISERVER selects the binary (see conftest.py). Extra arguments select tests
(`-m storage`: the tests whose behaviour depends on the store, which scripts/test.sh's etcd
pass runs); the results file names the selection.
"""

import datetime
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# With SHEPHERD_ETCD_SERVERS set (the API server on etcd), the results go to RESULTS-etcd.md.
STORAGE = "etcd" if os.environ.get("SHEPHERD_ETCD_SERVERS") else "the embedded SQLite store"
RESULTS = os.path.join(HERE, "RESULTS-etcd.md" if os.environ.get("SHEPHERD_ETCD_SERVERS") else
                       "RESULTS.md")
NOT_PORTED = os.path.join(HERE, "not_ported.tsv")
DEFAULT_SUBNETS = (100, 249)  # tests/harness/real_node.py's range when none is set
UNKNOWN_SECONDS = 30.0        # the weight of a test RESULTS.md has no figure for


class ResultCollector:
    """pytest plugin: codename, outcome and seconds per test item; with a shard, it keeps
    only that shard's items."""

    def __init__(self, shard=None):
        self.shard = shard    # (index, count) or None
        self.codenames = {}   # nodeid -> codename
        self.results = {}     # nodeid -> {"outcome", "seconds", "message"}
        self.order = []

    def pytest_collection_modifyitems(self, config, items):
        for item in items:
            marker = item.get_closest_marker("conformance")
            self.codenames[item.nodeid] = marker.args[0] if marker else item.nodeid
        if self.shard is not None:
            index, count = self.shard
            mine = deal(items, count, previous_seconds(),
                        lambda item: self.codenames[item.nodeid])[index]
            deselected = [item for item in items if item.nodeid not in mine]
            items[:] = [item for item in items if item.nodeid in mine]
            config.hook.pytest_deselected(items=deselected)
        self.order = [item.nodeid for item in items]

    def pytest_runtest_logreport(self, report):
        r = self.results.setdefault(report.nodeid,
                                    {"outcome": "pass", "seconds": 0.0, "message": ""})
        r["seconds"] += report.duration
        if report.failed:
            r["outcome"] = "fail"
            if not r["message"]:
                r["message"] = _first_line(report)
        elif report.skipped and r["outcome"] != "fail":
            r["outcome"] = "skip"
            if not r["message"]:
                r["message"] = _first_line(report)

    def rows(self):
        out = []
        for nodeid in self.order:
            res = self.results.get(nodeid)
            if res is not None:
                out.append(dict(res, codename=self.codenames[nodeid]))
        return out


def previous_seconds():
    """codename -> seconds, from the table of the last RESULTS.md."""
    seconds = {}
    try:
        with open(os.path.join(HERE, "RESULTS.md")) as f:
            for line in f:
                cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
                if len(cells) == 3 and cells[1] in ("pass", "fail", "skip"):
                    try:
                        seconds[cells[0].replace("\\|", "|")] = float(cells[2])
                    except ValueError:
                        pass
    except OSError:
        pass
    return seconds


def deal(items, count, seconds, codename_of):
    """Longest-processing-time-first: each test, longest first, goes to the shard with the
    least total so far. Returns one set of nodeids per shard; the same in every shard, as
    every shard collects the same items and reads the same RESULTS.md."""
    weighted = sorted(items, key=lambda item: (-seconds.get(codename_of(item), UNKNOWN_SECONDS),
                                               item.nodeid))
    shards = [set() for _ in range(count)]
    totals = [0.0] * count
    for item in weighted:
        k = min(range(count), key=lambda i: (totals[i], i))
        shards[k].add(item.nodeid)
        totals[k] += seconds.get(codename_of(item), UNKNOWN_SECONDS)
    return shards


def _first_line(report):
    text = ""
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):  # skip: (file, line, reason)
        text = str(longrepr[2])
    elif hasattr(longrepr, "reprcrash") and longrepr.reprcrash is not None:
        text = longrepr.reprcrash.message
    else:
        text = str(longrepr)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    phase = "" if report.when == "call" else "[%s] " % report.when
    return phase + (lines[0] if lines else "")[:300]


def not_ported():
    """[(codename, reason)] from not_ported.tsv (codename TAB reason; # comments)."""
    rows = []
    with open(NOT_PORTED) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            codename, _, reason = line.partition("\t")
            rows.append((codename.strip(), reason.strip()))
    return rows


def render(rows, exit_code, selection="", shards=1):
    passed = sum(1 for r in rows if r["outcome"] == "pass")
    failed = sum(1 for r in rows if r["outcome"] == "fail")
    skipped = sum(1 for r in rows if r["outcome"] == "skip")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    how = "conformance/run.py"
    if shards > 1:
        how += " --shards %d" % shards
    if selection:
        how += " " + selection
    out = ["# Conformance results", ""]
    out.append("Generated by `/usr/bin/python3 %s` on %s; storage: %s." % (how, now, STORAGE))
    out.append("")
    out.append("**%d passed of %d** (%d failed, %d skipped)." % (passed, len(rows), failed,
                                                                 skipped))
    if exit_code not in (0, 1):
        out.append("")
        out.append("pytest exit status %d (errors outside the tests, e.g. the server did not "
                   "start)." % exit_code)
    out.append("")
    out.append("| codename | result | seconds |")
    out.append("|---|---|---|")
    for r in sorted(rows, key=lambda r: r["codename"]):
        out.append("| %s | %s | %.2f |" % (r["codename"].replace("|", "\\|"), r["outcome"],
                                           r["seconds"]))
    failures = [r for r in rows if r["outcome"] != "pass"]
    if failures:
        out += ["", "## Not passing", ""]
        for r in sorted(failures, key=lambda r: r["codename"]):
            out.append("- %s — %s: %s" % (r["codename"], r["outcome"],
                                           r["message"].replace("\n", " ") or "(no message)"))
    if not selection:
        ported = {r["codename"] for r in rows}
        pending = [(c, why) for c, why in not_ported() if c not in ported]
        out += ["", "## Not ported yet, in the areas being ported", "",
                "Upstream v1.32 `[Conformance]` tests of the areas the open issues port "
                "(`conformance/not_ported.tsv`; the census in `../shared/notes/` lists all "
                "408), and what each waits for.", "",
                "| codename | why not yet |", "|---|---|"]
        for codename, why in sorted(pending):
            out.append("| %s | %s |" % (codename.replace("|", "\\|"), why.replace("|", "\\|")))
    out.append("")
    return "\n".join(out)


def run_pytest(argv, shard=None):
    import pytest  # imported here: the sharding parent never runs tests itself

    collector = ResultCollector(shard)
    args = [HERE, "-p", "no:cacheprovider", "-q", "-rfE"] + list(argv)
    exit_code = int(pytest.main(args, plugins=[collector]))
    return exit_code, collector.rows()


def subnet_shares(count):
    spec = os.environ.get("SHEPHERD_TEST_SUBNETS", "")
    low, high = (int(x) for x in spec.split("-")) if spec else DEFAULT_SUBNETS
    size = (high - low + 1) // count
    if size < 4:
        raise SystemExit("SHEPHERD_TEST_SUBNETS=%s is too small for %d shards" % (spec, count))
    return ["%d-%d" % (low + i * size, low + (i + 1) * size - 1) for i in range(count)]


def run_shards(count, argv):
    """Start `count` children (`--shard i/count`), wait for all, and merge their rows. Their
    output goes to files printed in turn afterwards, so it is not interleaved."""
    workdir = tempfile.mkdtemp(prefix="shepherd-conformance-")
    children = []
    try:
        for i, subnets in enumerate(subnet_shares(count)):
            log = open(os.path.join(workdir, "shard%d.log" % i), "w+")
            out = os.path.join(workdir, "shard%d.json" % i)
            env = dict(os.environ, SHEPHERD_TEST_SUBNETS=subnets)
            cmd = [sys.executable, os.path.abspath(__file__), "--shard", "%d/%d" % (i, count),
                   "--rows", out] + list(argv)
            children.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL), log, out))
        exit_code, rows = 0, []
        for i, (proc, log, out) in enumerate(children):
            rc = proc.wait()
            log.seek(0)
            print("=== conformance shard %d/%d (exit %d)" % (i + 1, count, rc))
            sys.stdout.write(log.read())
            try:
                with open(out) as f:
                    got = json.load(f)
                rows += got["rows"]
                code = got["exit_code"]
            except (OSError, ValueError):
                code = rc or 3
            if code not in (0, 1) or rc not in (0, 1):
                exit_code = max(exit_code, code if code not in (0, 1) else rc)
            elif code == 1 and exit_code == 0:
                exit_code = 1
        return exit_code, rows
    finally:
        # After a SIGINT to the process group (scripts/test.sh stopping early) the children
        # are cleaning up their clusters: wait for them rather than kill them.
        for proc, log, _ in children:
            while proc.poll() is None:
                try:
                    proc.wait()
                except KeyboardInterrupt:
                    continue
            log.close()
        for name in os.listdir(workdir):
            os.unlink(os.path.join(workdir, name))
        os.rmdir(workdir)


def main(argv):
    argv = list(argv)
    shards, shard, rows_out = 1, None, None
    while argv and argv[0] in ("--shards", "--shard", "--rows"):
        flag, value = argv[0], argv[1]
        del argv[:2]
        if flag == "--shards":
            shards = int(value)
        elif flag == "--shard":
            index, count = (int(x) for x in value.split("/"))
            shard = (index, count)
        else:
            rows_out = value
    if shard is not None:  # a child of run_shards: run, hand the rows back
        exit_code, rows = run_pytest(argv, shard)
        if exit_code == 5 and not rows:
            exit_code = 0  # the selection left this shard nothing to run
        with open(rows_out, "w") as f:
            json.dump({"exit_code": exit_code, "rows": rows}, f)
        return exit_code
    if shards > 1:
        exit_code, rows = run_shards(shards, argv)
    else:
        exit_code, rows = run_pytest(argv)
    text = render(rows, exit_code, " ".join(argv), shards)
    with open(RESULTS, "w") as f:
        f.write(text)
    print()
    print(text)
    print("written %s" % RESULTS)
    if exit_code != 0 or any(r["outcome"] == "fail" for r in rows) or not rows:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
