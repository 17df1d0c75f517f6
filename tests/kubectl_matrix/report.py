#!/usr/bin/python3
"""Run the kubectl matrix (or read a junit xml of a run) and write MATRIX.md.

    /usr/bin/python3 tests/kubectl_matrix/report.py                  # run, then write
    /usr/bin/python3 tests/kubectl_matrix/report.py --junit run.xml  # only write
    /usr/bin/python3 tests/kubectl_matrix/report.py -o /tmp/M.md -- -x   # extra pytest args

Rows are commands, columns kubectl versions; a cell is ``pass``, ``FAIL``, ``error`` (the
set-up failed), ``skip`` or ``-`` (not run). Failing cells are listed with the first lines
of their assertion message. Exits 0 when every cell that ran passed, else 1.
"""

import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

try:
    import test_matrix as tm  # row/column order and the binaries used
except Exception:  # pragma: no cover - report from a junit file without pytest around
    tm = None

CELL_RE = re.compile(r"^test_cell\[(\d+\.\d+)-(.+)\]$")


def run_suite(junit_path, extra):
    cmd = [sys.executable, "-m", "pytest", os.path.relpath(HERE, REPO), "-q",
           "-p", "no:cacheprovider", "--junitxml", junit_path] + list(extra)
    print("+ " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    rc = subprocess.call(cmd, cwd=REPO)
    return rc, time.monotonic() - t0


def parse(junit_path):
    """{(version, command): (state, message, {property: value})}, elapsed seconds, notes"""
    root = ET.parse(junit_path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    cells, elapsed, notes = {}, 0.0, []
    for suite in suites:
        elapsed += float(suite.get("time", 0) or 0)
        for case in suite.iter("testcase"):
            m = CELL_RE.match(case.get("name", ""))
            if not m:
                continue
            state, msg = "pass", ""
            for tag, name in (("failure", "FAIL"), ("error", "error"), ("skipped", "skip")):
                el = case.find(tag)
                if el is not None:
                    state = name
                    msg = (el.get("message") or "") + "\n" + (el.text or "")
                    break
            if state == "error" and msg.startswith("failed on teardown"):
                # the session teardown (server stop) is attributed to the last test by
                # pytest, as a second entry: not a property of that cell
                notes.append(msg)
                continue
            props = {p.get("name"): p.get("value") for p in case.iter("property")}
            cells[(m.group(1), m.group(2))] = (state, msg, props)
    return cells, elapsed, notes


def summary_of(msg, limit=6):
    """The useful lines of a failure: the assertion message and the kubectl call."""
    lines = [l.rstrip() for l in msg.splitlines() if l.strip()]
    keep = []
    for l in lines:
        s = l.strip()
        if s.startswith("E "):
            s = s[1:].strip()
        elif keep:
            continue
        if s.startswith(("assert ", "+  where", "+ ")) and keep:
            continue
        if s.startswith("$ "):  # a kubectl command line: drop the per-run flags
            s = re.sub(r" --kubeconfig \S+ --cache-dir \S+", "", s)
            s = re.sub(r"^\$ \S*/(kubectl\.\d+\.\d+)", r"$ \1", s)
        if s in keep:
            continue
        keep.append(s)
        if len(keep) >= limit:
            break
    if not keep:
        keep = lines[:limit]
    return keep


def kubectl_patch_version(version):
    if tm is None:
        return version
    binary = os.path.join(tm.KUBECTL_DIR, "kubectl." + version)
    try:
        out = subprocess.run([binary, "version", "--client", "-o", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             timeout=20).stdout.decode()
        m = re.search(r'"gitVersion":\s*"([^"]+)"', out)
        return m.group(1) if m else version
    except (OSError, subprocess.SubprocessError):
        return version


def git_head():
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              timeout=10).stdout.decode().strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               timeout=10).stdout.decode().strip()
        return head + (" + uncommitted changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def render(cells, elapsed, source, notes=()):
    versions = [v for v in (tm.ALL_VERSIONS if tm else [])
                if any(c[0] == v for c in cells)]
    versions += sorted({v for v, _ in cells} - set(versions), key=lambda v: tuple(map(int, v.split("."))))
    commands = [c for c in (tm.COMMAND_IDS if tm else []) if any(x[1] == c for x in cells)]
    commands += sorted({c for _, c in cells} - set(commands))

    now = datetime.datetime.now(datetime.timezone.utc)
    counts = {}
    for state, _, _ in cells.values():
        counts[state] = counts.get(state, 0) + 1
    out = []
    out.append("# kubectl compatibility matrix\n")
    storage = "etcd" if os.environ.get("SHEPHERD_ETCD_SERVERS") else "the embedded SQLite store"
    out.append("Generated %s by `tests/kubectl_matrix/report.py` (%s) against "
               "`shepherd-apiserver` at commit %s (storage: %s). %d cells: %s; suite time %.0f s.\n"
               % (now.strftime("%Y-%m-%d %H:%M UTC"), source, git_head(), storage, len(cells),
                  ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items())), elapsed))
    out.append("Each cell is one test, `tests/kubectl_matrix/test_matrix.py::test_cell"
               "[<version>-<command>]`; every kubectl version runs the scenario in its own "
               "namespace against one server. `kubectl logs` is not covered (no nodes yet).\n")
    out.append("| command | " + " | ".join(versions) + " |")
    out.append("|---|" + "---|" * len(versions))
    for c in commands:
        row = []
        for v in versions:
            state = cells.get((v, c), ("-", "", {}))[0]
            row.append("**%s**" % state if state in ("FAIL", "error") else state)
        out.append("| `%s` | " % c + " | ".join(row) + " |")
    out.append("")
    out.append("kubectl builds: " + ", ".join("%s = %s" % (v, kubectl_patch_version(v))
                                               for v in versions) + ".\n")

    # measured latencies
    metric_names = []
    for _, _, props in cells.values():
        for name in props:
            if name not in metric_names:
                metric_names.append(name)
    if metric_names:
        out.append("## Measured latencies (seconds)\n")
        out.append("`wait_*`: from the end of the change (status patch / delete) to `kubectl "
                   "wait` exiting; `watch_latency_after_*`: from the start of the changing kubectl "
                   "command to the line appearing in `get -w`; `delete_wait_s`: the whole `kubectl delete` "
                   "(default `--wait`).\n")
        out.append("| command | measurement | " + " | ".join(versions) + " |")
        out.append("|---|---|" + "---|" * len(versions))
        for c in commands:
            names = [n for n in metric_names
                     if any(n in cells.get((v, c), ("", "", {}))[2] for v in versions)]
            for n in names:
                vals = [cells.get((v, c), ("", "", {}))[2].get(n, "") for v in versions]
                out.append("| `%s` | %s | " % (c, n) + " | ".join(vals) + " |")
        out.append("")

    if notes:
        out.append("## Teardown problems\n")
        for msg in notes:
            out.append("```")
            out.extend(summary_of(msg, limit=20))
            out.append("```\n")

    bad = [(c, v) for c in commands for v in versions
           if cells.get((v, c), ("pass",))[0] in ("FAIL", "error")]
    if bad:
        out.append("## Failures\n")
        for c, v in bad:
            state, msg, _ = cells[(v, c)]
            out.append("### %s `%s` (%s)\n" % (v, c, state))
            out.append("```")
            out.extend(summary_of(msg))
            out.append("```\n")
    return "\n".join(out).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--junit", help="read this junit xml instead of running the suite")
    ap.add_argument("-o", "--output", default=os.path.join(HERE, "MATRIX.md"))
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args()

    if args.junit:
        cells, elapsed, notes = parse(args.junit)
        source = "from %s" % os.path.basename(args.junit)
    else:
        tmpdir = tempfile.mkdtemp(prefix="kubectl-matrix-report-")
        junit = os.path.join(tmpdir, "junit.xml")
        rc, wall = run_suite(junit, args.pytest_args)
        if not os.path.exists(junit):
            print("pytest wrote no junit xml (exit code %s)" % rc, file=sys.stderr)
            return 2
        cells, elapsed, notes = parse(junit)
        elapsed = wall
        os.unlink(junit)
        os.rmdir(tmpdir)
        source = "fresh run"
    if not cells:
        print("no test_cell results found", file=sys.stderr)
        return 2
    text = render(cells, elapsed, source, notes)
    with open(args.output, "w") as f:
        f.write(text)
    print(text)
    print("wrote %s" % args.output)
    ok = all(s in ("pass", "skip") for s, _, _ in cells.values()) and not notes
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
