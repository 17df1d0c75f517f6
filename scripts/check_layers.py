#!/usr/bin/python3
"""The layering check: every `#include "dir/..."` between Shepherd's components must follow
the allowed dependency graph written once in docs/architecture.md (the block between the
`layers:begin` and `layers:end` markers, one line per component: `component: dep dep ...`).

A component is a folder of the repository (the longest listed folder that contains a file
owns it). A component may include its own headers and those of every component it depends
on, directly or through others; anything else is a forbidden include direction. The graph
must be acyclic, every listed dependency must be a listed component, and every folder with
C++ sources must belong to a component.

    scripts/check_layers.py              check the repository (exit 1 on a violation)
    scripts/check_layers.py --self-test  show that a forbidden include is caught
"""

import os
import re
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_EXT = (".h", ".cc")
# Generated or third-party trees that are not components.
SKIP_DIRS = {".git", "build", "build-asan", "build-fuzz", "build-tsa", "node_modules"}


def read_graph(architecture_md):
    text = open(architecture_md).read()
    m = re.search(r"<!-- layers:begin -->(.*?)<!-- layers:end -->", text, re.S)
    if not m:
        raise SystemExit("check_layers: no layers:begin/layers:end block in " + architecture_md)
    graph = {}
    for line in m.group(1).splitlines():
        line = line.strip().strip("`")
        if not line or line.startswith("```") or line.startswith("#"):
            continue
        if ":" not in line:
            continue
        comp, deps = line.split(":", 1)
        graph[comp.strip()] = deps.split()
    return graph


def closure(graph):
    """Every component each one may include (itself and its transitive dependencies);
    raises on an unknown dependency or a cycle."""
    errors = []
    for comp, deps in graph.items():
        for d in deps:
            if d not in graph:
                errors.append("%s depends on %s, which is not a component" % (comp, d))
    if errors:
        raise SystemExit("\n".join(errors))
    allowed = {}
    state = {}

    def visit(c, path):
        if state.get(c) == "done":
            return allowed[c]
        if state.get(c) == "visiting":
            raise SystemExit("check_layers: dependency cycle: " + " -> ".join(path + [c]))
        state[c] = "visiting"
        out = {c}
        for d in graph[c]:
            out |= visit(d, path + [c])
        state[c] = "done"
        allowed[c] = out
        return out

    for c in graph:
        visit(c, [])
    return allowed


def owner(path, comps):
    """The component owning a repository-relative path (longest folder prefix)."""
    best = None
    for c in comps:
        if path == c or path.startswith(c + "/"):
            if best is None or len(c) > len(best):
                best = c
    return best


def check(repo, architecture_md):
    graph = read_graph(architecture_md)
    allowed = closure(graph)
    comps = list(graph)
    violations = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for f in sorted(files):
            if not f.endswith(SOURCE_EXT):
                continue
            rel = os.path.relpath(os.path.join(root, f), repo)
            me = owner(rel, comps)
            if me is None:
                violations.append("%s: not in any component of the layer graph" % rel)
                continue
            text = open(os.path.join(root, f), errors="replace").read()
            for inc in INCLUDE_RE.findall(text):
                if "/" not in inc:
                    continue  # a generated header beside the file (api.pb.h)
                target = owner(inc, comps)
                if target is None:
                    if os.path.exists(os.path.join(repo, inc)):
                        violations.append("%s includes %s, which is in no component" % (rel, inc))
                    continue  # a system or generated header
                if target not in allowed[me]:
                    violations.append("%s (%s) includes %s (%s): not an allowed direction"
                                      % (rel, me, inc, target))
    return violations


def self_test():
    """A tiny tree in which `low` may not include `high`: the check must report it."""
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "low"))
        os.makedirs(os.path.join(d, "high"))
        md = os.path.join(d, "architecture.md")
        with open(md, "w") as f:
            f.write("<!-- layers:begin -->\n```\nlow:\nhigh: low\n```\n<!-- layers:end -->\n")
        with open(os.path.join(d, "high", "h.h"), "w") as f:
            f.write('#include "low/l.h"\n')
        with open(os.path.join(d, "low", "l.h"), "w") as f:
            f.write("#pragma once\n")
        if check(d, md):
            print("self-test: an allowed include was reported")
            return 1
        with open(os.path.join(d, "low", "l.cc"), "w") as f:
            f.write('#include "high/h.h"\n')
        v = check(d, md)
        if len(v) != 1 or "low/l.cc" not in v[0]:
            print("self-test: the forbidden include low -> high was not reported: %r" % v)
            return 1
    print("self-test: a forbidden include is reported")
    return 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    violations = check(REPO, os.path.join(REPO, "docs", "architecture.md"))
    for v in violations:
        print(v)
    if violations:
        print("check_layers: %d forbidden include(s); the allowed graph is in docs/architecture.md"
              % len(violations))
        return 1
    print("check_layers: every include follows docs/architecture.md's layer graph")
    return 0


if __name__ == "__main__":
    sys.exit(main())
