#!/usr/bin/python3
"""The thread-safety check: clang's -Wthread-safety over every .cc file that uses the
annotated locks (it includes common/mutex.h or common/thread_annotations.h, directly or
through a project header it includes, such as its own), failing on any warning. g++ builds ignore the annotations; this is
where they are enforced.

Compile flags come from the build directory's compile_commands.json (the top CMakeLists.txt
sets CMAKE_EXPORT_COMPILE_COMMANDS); sanitizer flags and g++-only warning flags are dropped
and clang runs with -fsyntax-only, two files at a time. A file whose inputs (its command,
its source and every header it includes, as ninja recorded them) are unchanged since it last
passed is skipped: the stamps live in <build-dir>/thread_safety_stamps/.

    scripts/check_thread_safety.py [--build-dir DIR]   check (exit 1 on a warning)
    scripts/check_thread_safety.py --self-test          show that a violation is caught
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLANG = "clang++"
TSA_FLAGS = ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety", "-Wno-unknown-warning-option"]
TRIGGERS = ('"common/mutex.h"', '"common/thread_annotations.h"')
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+("[^"]+")', re.M)
# g++ flags clang rejects or that only matter for code generation.
DROP_PREFIXES = ("-fsanitize", "-fno-sanitize", "-fno-omit-frame-pointer", "-g", "-O", "-MD", "-MMD")
DROP_EXACT = {"-Wno-maybe-uninitialized", "-Werror", "-c"}
DROP_WITH_ARG = {"-o", "-MF", "-MT", "-MQ"}


def includes(path):
    try:
        return INCLUDE_RE.findall(open(path, errors="replace").read())
    except OSError:
        return []


def uses_annotations(path, memo={}):
    """True if `path` includes a trigger directly or through a project header that does (one
    level: its own header, or e.g. client/workqueue.h in a controller)."""
    def direct(p):
        if p not in memo:
            memo[p] = any(inc in TRIGGERS for inc in includes(p))
        return memo[p]

    if direct(path):
        return True
    return any(direct(os.path.join(REPO, inc.strip('"'))) for inc in includes(path))


def clang_args(entry):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    # Drop the compiler (and a launcher such as ccache in front of it).
    while args and not args[0].startswith("-"):
        args.pop(0)
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in DROP_WITH_ARG:
            skip = True
            continue
        if a in DROP_EXACT or a.startswith(DROP_PREFIXES) or a == entry["file"]:
            continue
        out.append(a)
    return [CLANG] + out + TSA_FLAGS + [entry["file"]]


def ninja_deps(build_dir):
    """Object file -> the headers ninja recorded for it (empty if ninja is unavailable)."""
    try:
        text = subprocess.run(["ninja", "-C", build_dir, "-t", "deps"], capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    deps, cur = {}, None
    for line in text.splitlines():
        if not line.strip():
            cur = None
        elif not line.startswith(" "):
            cur = line.split(":")[0]
            deps[cur] = [] if "VALID" in line else None
        elif cur is not None and deps.get(cur) is not None:
            deps[cur].append(line.strip())
    return deps


def stamp_key(entry, args, deps, build_dir):
    obj = None
    m = re.search(r"\s-o\s+(\S+)", entry.get("command", ""))
    if m:
        obj = m.group(1)
    files = deps.get(obj) if obj else None
    if files is None:
        return None
    h = hashlib.sha256(" ".join(args).encode())
    for f in [entry["file"]] + files:
        p = f if os.path.isabs(f) else os.path.join(build_dir, f)
        try:
            h.update(p.encode() + b"\0" + open(p, "rb").read())
        except OSError:
            return None
    return h.hexdigest()


def check_one(entry, build_dir, deps, stamp_dir):
    args = clang_args(entry)
    key = stamp_key(entry, args, deps, build_dir)
    stamp = os.path.join(stamp_dir, hashlib.sha256(entry["file"].encode()).hexdigest()[:16])
    if key and os.path.exists(stamp) and open(stamp).read() == key:
        return entry["file"], True, "", True
    r = subprocess.run(args, cwd=entry["directory"], capture_output=True, text=True)
    ok = r.returncode == 0 and "warning:" not in r.stderr
    if ok and key:
        with open(stamp, "w") as f:
            f.write(key)
    elif os.path.exists(stamp):
        os.remove(stamp)
    return entry["file"], ok, r.stderr, False


def check(build_dir, jobs):
    db = os.path.join(build_dir, "compile_commands.json")
    if not os.path.exists(db):
        raise SystemExit("check_thread_safety: no " + db + " (configure the build first)")
    entries, seen = [], set()
    for e in json.load(open(db)):
        f = e["file"]
        if f in seen or not f.endswith(".cc") or not f.startswith(REPO + os.sep):
            continue
        if uses_annotations(f):
            seen.add(f)
            entries.append(e)
    stamp_dir = os.path.join(build_dir, "thread_safety_stamps")
    os.makedirs(stamp_dir, exist_ok=True)
    deps = ninja_deps(build_dir)
    failed, cached = [], 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for f, ok, err, hit in pool.map(lambda e: check_one(e, build_dir, deps, stamp_dir), entries):
            cached += hit
            if not ok:
                failed.append(f)
                sys.stderr.write(err)
    print("check_thread_safety: %d files (%d unchanged since they passed), %d failed" %
          (len(entries), cached, len(failed)))
    return 1 if failed else 0


SELF_TEST_SOURCE = """
#include "common/mutex.h"
namespace shepherd {
class Counter {
 public:
  void inc() { MutexLock g(mu_); ++n_; }
  int read() const { return n_; }  // reads a guarded member without the lock
 private:
  mutable Mutex mu_;
  int n_ GUARDED_BY(mu_) = 0;
};
}  // namespace shepherd
"""


def self_test():
    """The check must reject a read of a GUARDED_BY member without its lock, and accept the
    same code once the read takes the lock."""
    with tempfile.TemporaryDirectory() as d:
        results = []
        for name, src in (("bad.cc", SELF_TEST_SOURCE),
                          ("good.cc", SELF_TEST_SOURCE.replace("return n_;", "MutexLock g(mu_); return n_;"))):
            path = os.path.join(d, name)
            open(path, "w").write(src)
            entry = {"directory": d, "file": path, "command": "c++ -std=c++20 -I" + REPO + " -c " + path}
            results.append(subprocess.run(clang_args(entry), cwd=d, capture_output=True, text=True))
        bad, good = results
        if bad.returncode == 0 or "requires holding mutex" not in bad.stderr:
            print("self-test FAILED: clang accepted an unguarded read:\n" + bad.stderr)
            return 1
        if good.returncode != 0:
            print("self-test FAILED: clang rejected correct code:\n" + good.stderr)
            return 1
    print("self-test passed: an unguarded read of a GUARDED_BY member is rejected")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build-asan"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    return self_test() if a.self_test else check(os.path.abspath(a.build_dir), a.jobs)


if __name__ == "__main__":
    sys.exit(main())
