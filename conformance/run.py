#!/usr/bin/python3
"""Run Shepherd's ported Kubernetes conformance tests and write conformance/RESULTS.md.

Usage (from anywhere; needs /usr/bin/python3 with python3-kubernetes and pytest):

    /usr/bin/python3 conformance/run.py [extra pytest args, e.g. -k watch]

Runs the suite in-process with pytest (a plugin records, per test, the upstream codename
from its ``@conformance`` marker, the outcome and the duration of setup + call + teardown),
prints the results table, writes it to conformance/RESULTS.md sorted in the order of the
upstream list (test/conformance/testdata/conformance.yaml), and exits non-zero if any test
failed or errored. SHEPHERD_APISERVER selects the binary (see conftest.py). Extra arguments select tests
(`-m storage`: the tests whose behaviour depends on the store, which scripts/test.sh's
etcd pass runs); the results file names the selection.
"""

import datetime
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# With SHEPHERD_ETCD_SERVERS set (the API server on etcd), the results go to RESULTS-etcd.md.
STORAGE = "etcd" if os.environ.get("SHEPHERD_ETCD_SERVERS") else "the embedded SQLite store"
RESULTS = os.path.join(HERE, "RESULTS-etcd.md" if os.environ.get("SHEPHERD_ETCD_SERVERS") else "RESULTS.md")

# The ported codenames; sorted, as upstream's conformance.yaml is (by codename).
UPSTREAM_ORDER = sorted([
    "[sig-api-machinery] Discovery should validate PreferredVersion for each APIGroup "
    "[Conformance]",
    "[sig-api-machinery] Namespaces [Serial] should apply a finalizer to a Namespace "
    "[Conformance]",
    "[sig-api-machinery] Namespaces [Serial] should apply changes to a namespace status "
    "[Conformance]",
    "[sig-api-machinery] Namespaces [Serial] should patch a Namespace [Conformance]",
    "[sig-api-machinery] Servers with support for API chunking should return chunks of "
    "results for list calls [Conformance]",
    "[sig-api-machinery] Servers with support for Table transformation should return a 406 "
    "for a backend which does not implement metadata [Conformance]",
    "[sig-api-machinery] Watchers should be able to restart watching from the last resource "
    "version observed by the previous watch [Conformance]",
    "[sig-api-machinery] Watchers should be able to start watching from a specific resource "
    "version [Conformance]",
    "[sig-api-machinery] Watchers should observe add, update, and delete watch notifications "
    "on configmaps [Conformance]",
    "[sig-api-machinery] Watchers should observe an object deletion if it stops meeting the "
    "requirements of the selector [Conformance]",
    "[sig-api-machinery] Watchers should receive events on concurrent watches in same order "
    "[Conformance]",
    "[sig-instrumentation] Events API should ensure that an event can be fetched, patched, "
    "deleted, and listed [Conformance]",
    "[sig-instrumentation] Events should manage the lifecycle of an event [Conformance]",
    "[sig-node] ConfigMap should fail to create ConfigMap with empty key [Conformance]",
    "[sig-node] ConfigMap should run through a ConfigMap lifecycle [Conformance]",
    "[sig-node] Lease lease API should be available [Conformance]",
    "[sig-node] Node Lifecycle should run through the lifecycle of a node [Conformance]",
    "[sig-node] PodTemplates should run the lifecycle of PodTemplates [Conformance]",
    "[sig-node] Pods Extended Pods Set QOS Class should be set on Pods with matching resource "
    "requests and limits for memory and cpu [Conformance]",
    "[sig-node] Secrets should patch a secret [Conformance]",
    "[sig-scheduling] SchedulerPredicates [Serial] validates that NodeSelector is respected if "
    "not matching [Conformance]",
    "[sig-storage] ConfigMap should be immutable if `immutable` field is set [Conformance]",
    "[sig-node] Pods should allow activeDeadlineSeconds to be updated [NodeConformance] "
    "[Conformance]",
    "[sig-node] Pods should be submitted and removed [NodeConformance] [Conformance]",
    "[sig-node] Pods should delete a collection of pods [Conformance]",
    "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]",
    "[sig-node] Pods should patch a pod status [Conformance]",
    "[sig-node] Pods should run through the lifecycle of Pods and PodStatus [Conformance]",
    "[sig-node] Pods should support remote command execution over websockets [NodeConformance] "
    "[Conformance]",
    "[sig-node] Pods should support retrieving logs from the container over websockets "
    "[NodeConformance] [Conformance]",
    "[sig-architecture] Conformance Tests should have at least two untainted nodes "
    "[Conformance]",
    "[sig-node] Container Runtime blackbox test on terminated container should report "
    "termination message from log output if TerminationMessagePolicy FallbackToLogsOnError is "
    "set [NodeConformance] [Conformance]",
    "[sig-node] Container Runtime blackbox test when starting a container that exits should run "
    "with the expected status [NodeConformance] [Conformance]",
    "[sig-node] Containers should use the image defaults if command and args are blank "
    "[NodeConformance] [Conformance]",
    "[sig-node] Downward API should provide default limits.cpu/memory from node allocatable "
    "[NodeConformance] [Conformance]",
    "[sig-node] Downward API should provide pod name, namespace and IP address as env vars "
    "[NodeConformance] [Conformance]",
    "[sig-node] InitContainer [NodeConformance] should invoke init containers on a RestartNever "
    "pod [Conformance]",
    "[sig-node] Kubelet when scheduling a busybox command in a pod should print the output to "
    "logs [NodeConformance] [Conformance]",
    "[sig-node] Kubelet when scheduling an agnhost Pod with hostAliases should write entries to "
    "/etc/hosts [NodeConformance] [Conformance]",
    "[sig-node] Probing container should be restarted with a exec \"cat /tmp/health\" liveness "
    "probe [NodeConformance] [Conformance]",
    "[sig-node] Probing container with readiness probe that fails should never be ready and "
    "never restart [NodeConformance] [Conformance]",
    "[sig-node] Variable Expansion should allow composing env vars into new env vars "
    "[NodeConformance] [Conformance]",
    "[sig-storage] ConfigMap should be consumable from pods in volume [NodeConformance] "
    "[Conformance]",
    "[sig-api-machinery] Namespaces [Serial] should ensure that all pods are removed when a "
    "namespace is deleted [Conformance]",
    "[sig-api-machinery] Namespaces [Serial] should ensure that all services are removed when "
    "a namespace is deleted [Conformance]",
    "[sig-auth] ServiceAccounts should run through the lifecycle of a ServiceAccount "
    "[Conformance]",
    "[sig-auth] ServiceAccounts should guarantee kube-root-ca.crt exist in any namespace "
    "[Conformance]",
    "[sig-api-machinery] Garbage collector should not be blocked by dependency circle "
    "[Conformance]",
    "[sig-api-machinery] Garbage collector should orphan RS created by deployment when "
    "deleteOptions.PropagationPolicy is Orphan [Conformance]",
    "[sig-api-machinery] Garbage collector should delete RS created by deployment when not "
    "orphaning [Conformance]",
    "[sig-apps] ReplicaSet Replace and Patch tests [Conformance]",
    "[sig-apps] ReplicaSet should validate Replicaset Status endpoints [Conformance]",
    "[sig-apps] ReplicaSet should adopt matching pods on creation and release no longer "
    "matching pods [Conformance]",
])


class ResultCollector:
    """pytest plugin: codename, outcome and seconds per test item."""

    def __init__(self):
        self.codenames = {}   # nodeid -> codename
        self.results = {}     # nodeid -> {"outcome", "seconds", "message"}
        self.order = []

    def pytest_collection_modifyitems(self, items):
        for item in items:
            marker = item.get_closest_marker("conformance")
            self.codenames[item.nodeid] = marker.args[0] if marker else item.nodeid
            self.order.append(item.nodeid)

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


def sort_key(codename):
    try:
        return (0, UPSTREAM_ORDER.index(codename), codename)
    except ValueError:
        return (1, 0, codename)


def render(rows, exit_code, selection=""):
    passed = sum(1 for r in rows if r["outcome"] == "pass")
    failed = sum(1 for r in rows if r["outcome"] == "fail")
    skipped = sum(1 for r in rows if r["outcome"] == "skip")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = []
    out.append("# Conformance results")
    out.append("")
    out.append("Generated by `/usr/bin/python3 conformance/run.py%s` on %s; storage: %s." %
               ((" " + selection) if selection else "", now, STORAGE))
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
    for r in rows:
        out.append("| %s | %s | %.2f |" % (r["codename"].replace("|", "\\|"), r["outcome"],
                                           r["seconds"]))
    failures = [r for r in rows if r["outcome"] != "pass"]
    if failures:
        out.append("")
        out.append("## Not passing")
        out.append("")
        for r in failures:
            out.append("- %s — %s: %s" % (r["codename"], r["outcome"],
                                           r["message"].replace("\n", " ") or "(no message)"))
    out.append("")
    return "\n".join(out)


def main(argv):
    collector = ResultCollector()
    args = [HERE, "-p", "no:cacheprovider", "-q", "-rfE"] + list(argv)
    exit_code = pytest.main(args, plugins=[collector])
    rows = []
    for nodeid in collector.order:
        res = collector.results.get(nodeid)
        if res is None:
            continue  # deselected
        rows.append(dict(res, codename=collector.codenames[nodeid]))
    rows.sort(key=lambda r: sort_key(r["codename"]))
    text = render(rows, int(exit_code), " ".join(argv))
    with open(RESULTS, "w") as f:
        f.write(text)
    print()
    print(text)
    print("written %s" % RESULTS)
    if int(exit_code) != 0 or any(r["outcome"] == "fail" for r in rows) or not rows:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
