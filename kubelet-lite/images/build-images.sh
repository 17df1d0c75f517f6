#!/usr/bin/env bash
# Builds the OCI image archives kubelet-lite's pods run from, offline, from Debian packages:
#
#   OUTDIR/busybox.tar  docker.io/library/busybox:latest and docker.io/library/busybox:1.36
#                       (/bin/busybox from busybox-static + applet symlinks in /bin,
#                       /etc/passwd and /etc/group with root and nobody; Cmd ["sh"])
#   OUTDIR/pause.tar    registry.k8s.io/pause:3.10 (static /pause from pause.c beside
#                       this script; Entrypoint ["/pause"], User 65535:65535)
#   OUTDIR/agnhost-lite.tar  shepherd.test/agnhost-lite:1.0 (the busybox tree plus /agnhost,
#                       a busybox sh script standing in for the agnhost test image's
#                       `pause`, `entrypoint-tester`, `etc-hosts`, `mounttest` and
#                       `test-webserver` subcommands, and /agnhost-2 -> agnhost;
#                       Entrypoint ["/agnhost"], Cmd ["pause"] as agnhost's)
#   OUTDIR/images.txt   one "archive<TAB>reference<TAB>manifest-digest" line per reference
#
# Import with: ctr --address SOCK -n k8s.io images import OUTDIR/busybox.tar
#
# Each archive is an OCI image layout in a tar: oci-layout, index.json (entries annotated
# with io.containerd.image.name), blobs/sha256/<hex> (uncompressed layer tar, config JSON,
# manifest JSON). Every mtime, owner and ordering is fixed, so the same inputs give the same
# digests on every build. If OUTDIR already holds archives built from the same inputs
# (this script, pause.c, the busybox binary, the compiler) nothing is rebuilt.
#
# Usage: build-images.sh OUTDIR     (needs gcc with static glibc, busybox-static, python3)
set -euo pipefail

if [ $# -ne 1 ] || [ "${1:0:1}" = "-" ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
OUTDIR=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUSYBOX=${BUSYBOX:-/bin/busybox}
CC=${CC:-gcc}

for tool in "$CC" python3 sha256sum flock; do
  command -v "$tool" >/dev/null || { echo "build-images: $tool not found" >&2; exit 1; }
done
if [ ! -x "$BUSYBOX" ] || ! "$BUSYBOX" --list >/dev/null 2>&1; then
  echo "build-images: $BUSYBOX is not a busybox binary (apt-get install busybox-static)" >&2
  exit 1
fi
if command -v readelf >/dev/null && LC_ALL=C readelf -l "$BUSYBOX" 2>/dev/null | grep INTERP >/dev/null; then
  echo "build-images: $BUSYBOX is dynamically linked; the image needs busybox-static" >&2
  exit 1
fi

mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)

# Concurrent builds into one OUTDIR (two nodes starting at once) take turns.
exec 9>"$OUTDIR/.lock"
flock 9

# Everything the output depends on goes into the stamp.
# (No `| grep -q` or `| head` under pipefail here: an early exit would SIGPIPE the writer.)
stamp=$( {
  sha256sum "$HERE/build-images.sh" "$HERE/pause.c" "$BUSYBOX" | cut -d' ' -f1
  "$CC" -dumpmachine
  "$CC" -dumpfullversion
  uname -m
} | sha256sum | cut -d' ' -f1)

if [ -f "$OUTDIR/.stamp" ] && [ "$(cat "$OUTDIR/.stamp")" = "$stamp" ] &&
   [ -s "$OUTDIR/busybox.tar" ] && [ -s "$OUTDIR/pause.tar" ] && [ -s "$OUTDIR/agnhost-lite.tar" ] &&
   [ -s "$OUTDIR/images.txt" ]; then
  echo "build-images: up to date in $OUTDIR"
  exit 0
fi

work=$(mktemp -d "$OUTDIR/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The pause binary. -s drops the symbol table (which names the source path), so the
# bytes depend only on pause.c and the toolchain.
nice -n 10 "$CC" -static -O2 -s -o "$work/pause" "$HERE/pause.c"

nice -n 10 python3 - "$work" "$OUTDIR" "$BUSYBOX" <<'PY'
import hashlib, io, json, os, platform, sys, tarfile

work, outdir, busybox = sys.argv[1], sys.argv[2], sys.argv[3]

EPOCH = 1704067200                      # 2024-01-01T00:00:00Z: every mtime and "created"
CREATED = "2024-01-01T00:00:00Z"
ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le",
        "s390x": "s390x", "riscv64": "riscv64"}.get(platform.machine(), platform.machine())
PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

MT_INDEX = "application/vnd.oci.image.index.v1+json"
MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_LAYER = "application/vnd.oci.image.layer.v1.tar"


def canon(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def sha(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Tar:
    """A tar written in memory with fixed owners and mtimes, entries in the order added."""

    def __init__(self):
        self.buf = io.BytesIO()
        self.tar = tarfile.open(fileobj=self.buf, mode="w", format=tarfile.GNU_FORMAT)

    def _info(self, name, kind, mode):
        ti = tarfile.TarInfo(name)
        ti.type, ti.mode, ti.mtime = kind, mode, EPOCH
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = ""
        return ti

    def dir(self, name, mode=0o755):
        self.tar.addfile(self._info(name.rstrip("/") + "/", tarfile.DIRTYPE, mode))

    def file(self, name, data, mode=0o644):
        ti = self._info(name, tarfile.REGTYPE, mode)
        ti.size = len(data)
        self.tar.addfile(ti, io.BytesIO(data))

    def symlink(self, name, target):
        ti = self._info(name, tarfile.SYMTYPE, 0o777)
        ti.linkname = target
        self.tar.addfile(ti)

    def bytes(self):
        self.tar.close()
        return self.buf.getvalue()


def write_archive(path, layer, config, refs):
    """One OCI layout tar holding one image (one layer) under every name in refs."""
    diff_id = sha(layer)
    config = dict(config)
    config.update({"architecture": ARCH, "os": "linux", "created": CREATED,
                   "rootfs": {"type": "layers", "diff_ids": [diff_id]}})
    config_b = canon(config)
    manifest_b = canon({
        "schemaVersion": 2,
        "mediaType": MT_MANIFEST,
        "config": {"mediaType": MT_CONFIG, "digest": sha(config_b), "size": len(config_b)},
        "layers": [{"mediaType": MT_LAYER, "digest": diff_id, "size": len(layer)}],
    })
    mdigest = sha(manifest_b)
    index_b = canon({
        "schemaVersion": 2,
        "mediaType": MT_INDEX,
        "manifests": [{
            "mediaType": MT_MANIFEST, "digest": mdigest, "size": len(manifest_b),
            "platform": {"architecture": ARCH, "os": "linux"},
            "annotations": {"io.containerd.image.name": ref,
                            "org.opencontainers.image.ref.name": ref.rsplit(":", 1)[1]},
        } for ref in refs],
    })
    out = Tar()
    out.file("oci-layout", canon({"imageLayoutVersion": "1.0.0"}))
    out.file("index.json", index_b)
    out.dir("blobs")
    out.dir("blobs/sha256")
    blobs = {diff_id: layer, sha(config_b): config_b, mdigest: manifest_b}
    for digest in sorted(blobs):
        out.file("blobs/sha256/" + digest.split(":", 1)[1], blobs[digest])
    tmp = os.path.join(work, os.path.basename(path))
    with open(tmp, "wb") as f:
        f.write(out.bytes())
    os.replace(tmp, path)
    return mdigest


lines = []

# --- busybox -------------------------------------------------------------------------
with open(busybox, "rb") as f:
    bb = f.read()
import subprocess
applets = sorted(set(
    a.strip() for a in subprocess.run([busybox, "--list"], check=True, capture_output=True,
                                      text=True).stdout.split()
    if a.strip() and "/" not in a and a.strip() != "busybox"))
if "sh" not in applets:
    sys.exit("build-images: busybox has no sh applet")

def busybox_tree(layer):
    """The busybox root filesystem (also the base of agnhost-lite)."""
    for d in ["bin", "dev", "etc", "home", "proc", "root", "sys", "tmp", "usr", "usr/bin",
              "usr/sbin", "var", "var/spool", "var/spool/mail", "var/www"]:
        layer.dir(d, {"root": 0o700, "tmp": 0o1777}.get(d, 0o755))
    layer.file("bin/busybox", bb, 0o755)
    for a in applets:
        layer.symlink("bin/" + a, "busybox")
    layer.file("etc/group", b"root:x:0:\ndaemon:x:1:\nnogroup:x:65534:\nnobody:x:65534:\n")
    layer.file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n"
                             b"daemon:x:1:1:daemon:/usr/sbin:/bin/false\n"
                             b"nobody:x:65534:65534:nobody:/home:/bin/false\n")
    layer.file("etc/shadow", b"root:*:19723:0:99999:7:::\ndaemon:*:19723:0:99999:7:::\n"
                             b"nobody:*:19723:0:99999:7:::\n", 0o640)
    layer.file("etc/nsswitch.conf", b"hosts: files dns\n")


layer = Tar()
busybox_tree(layer)
busybox_layer = layer.bytes()
refs = ["docker.io/library/busybox:latest", "docker.io/library/busybox:1.36"]
d = write_archive(os.path.join(outdir, "busybox.tar"), busybox_layer,
                  {"config": {"Env": [PATH_ENV], "Cmd": ["sh"]},
                   "history": [{"created": CREATED,
                                "created_by": "shepherd build-images.sh: busybox-static"}]},
                  refs)
lines += ["busybox.tar\t%s\t%s" % (r, d) for r in refs]

# --- pause ---------------------------------------------------------------------------
with open(os.path.join(work, "pause"), "rb") as f:
    pause = f.read()
layer = Tar()
layer.file("pause", pause, 0o755)
pause_layer = layer.bytes()
refs = ["registry.k8s.io/pause:3.10"]
d = write_archive(os.path.join(outdir, "pause.tar"), pause_layer,
                  {"config": {"Env": [PATH_ENV], "Entrypoint": ["/pause"],
                              "User": "65535:65535", "WorkingDir": "/"},
                   "history": [{"created": CREATED,
                                "created_by": "shepherd build-images.sh: pause.c"}]},
                  refs)
lines += ["pause.tar\t%s\t%s" % (r, d) for r in refs]

# --- agnhost-lite ----------------------------------------------------------------------
# Upstream's e2e tests run registry.k8s.io/e2e-test-images/agnhost (ENTRYPOINT ["/agnhost"],
# CMD ["pause"]). This stand-in keeps that config; /agnhost is a busybox sh script with the
# subcommands the ported tests use, printing what agnhost's Go code prints
# (test/images/agnhost in kubernetes/kubernetes):
#   pause              prints "Paused" and waits for a signal (INT -> exit 1, TERM -> exit 2)
#   entrypoint-tester  prints its argv as Go's fmt.Println(os.Args) ("[/agnhost entrypoint-tester a b]")
#   etc-hosts          prints /etc/hosts followed by a newline (fmt.Println of the file)
#   mounttest          the flags of agnhost's mounttest (--fs_type, --new_file_0644/0666/0660/0777,
#                      --file_mode, --file_perm, --file_owner, --file_content,
#                      --file_content_in_loop with --retry_time and --break_on_expected_content),
#                      in agnhost's order and with its output lines; modes are written as Go's
#                      os.FileMode.String() ("-rw-r--r--"); exit 1 if any step failed
#   test-webserver     an HTTP file server for / on --port (default 80): busybox httpd, with
#                      /cgi-bin/index.cgi listing directories as Go's http.FileServer does
# /agnhost-2 links to it, as in agnhost's Dockerfile.
AGNHOST = rb"""#!/bin/sh
# agnhost-lite: Shepherd's stand-in for the agnhost test image (see build-images.sh).
nl='
'

# go_mode PATH [perm]: os.Stat(PATH).Mode() (or its .Perm()) as Go's FileMode.String().
go_mode() {
  raw=$(stat -L -c %f "$1" 2>/dev/null) || return 1
  m=$((0x$raw))
  s=
  if [ "$2" != perm ]; then
    t=$((m & 61440))
    case $t in
    16384) s=d ;;
    40960) s=L ;;
    24576 | 8192) s=D ;;
    4096) s=p ;;
    49152) s=S ;;
    esac
    [ $((m & 2048)) -ne 0 ] && s="${s}u"
    [ $((m & 1024)) -ne 0 ] && s="${s}g"
    [ "$t" -eq 8192 ] && s="${s}c"
    [ $((m & 512)) -ne 0 ] && s="${s}t"
  fi
  [ -n "$s" ] || s=-
  i=8
  for c in r w x r w x r w x; do
    if [ $((m >> i & 1)) -eq 1 ]; then s="$s$c"; else s="$s-"; fi
    i=$((i - 1))
  done
  echo "$s"
}

# os_err PATH: the text of the *PathError Go reports for PATH.
os_err() {
  if [ ! -e "$1" ]; then echo "no such file or directory"
  elif [ -d "$1" ]; then echo "is a directory"
  else echo "permission denied"; fi
}

is_true() {
  case "$1" in 1 | t | T | true | TRUE | True) return 0 ;; *) return 1 ;; esac
}

mt_fs_type() {
  [ -n "$1" ] || return 0
  if t=$(stat -f -c %t "$1" 2>/dev/null); then
    echo "mount type of \"$1\": $((0x$t))"
  else
    echo "error from statfs(\"$1\"): $(os_err "$1")"
    return 1
  fi
}

mt_read_content() {
  [ -n "$1" ] || return 0
  if c=$(cat "$1" 2>/dev/null && echo x); then
    printf 'content of file "%s": %s\n' "$1" "${c%x}"
  else
    printf 'error reading file content for "%s": open %s: %s\n' "$1" "$1" "$(os_err "$1")"
    return 1
  fi
}

mt_new_file() {
  [ -n "$1" ] || return 0
  existed=
  [ -e "$1" ] && existed=1
  if ! { printf 'mount-tester new file\n' >"$1"; } 2>/dev/null; then
    printf 'error writing new file "%s": open %s: %s\n' "$1" "$1" "$(os_err "$1")"
    return 1
  fi
  [ -n "$existed" ] || chmod "$2" "$1"
  mt_read_content "$1"
}

mt_file_mode() {
  [ -n "$1" ] || return 0
  if m=$(go_mode "$1" $2); then
    if [ "$2" = perm ]; then echo "perms of file \"$1\": $m"; else echo "mode of file \"$1\": $m"; fi
  else
    echo "error from Stat(\"$1\"): stat $1: $(os_err "$1")"
    return 1
  fi
}

mt_file_owner() {
  [ -n "$1" ] || return 0
  if u=$(stat -L -c %u "$1" 2>/dev/null); then
    echo "owner UID of \"$1\": $u"
    echo "owner GID of \"$1\": $(stat -L -c %g "$1")"
  else
    echo "error from stat(\"$1\"): $(os_err "$1")"
    return 1
  fi
}

mt_content_in_loop() {
  [ -n "$1" ] || return 0
  start=$(date +%s)
  rc=0
  while [ $(($(date +%s) - start)) -lt "$retry_time" ]; do
    if c=$(cat "$1" 2>/dev/null && echo x); then
      rc=0
      c=${c%x}
      printf 'content of file "%s": %s\n' "$1" "$c"
      if is_true "$break_on_expected_content"; then
        if [ "$c" = "mount-tester new file$nl" ]; then break; fi
        printf 'Unexpected content. Expected: %s. Retrying\n' "mount-tester new file$nl"
      fi
    else
      rc=1
      echo "Error reading file $1: open $1: $(os_err "$1"), retrying"
    fi
    sleep 2
  done
  return $rc
}

case "$1" in
pause)
  echo Paused
  trap 'exit 1' INT
  trap 'exit 2' TERM
  while :; do
    sleep 3600 &
    wait $!
  done
  ;;
entrypoint-tester)
  out=$0
  for a in "$@"; do out="$out $a"; done
  echo "[$out]"
  ;;
etc-hosts)
  c=$(cat /etc/hosts && echo x) || exit 2
  printf '%s\n' "${c%x}"
  ;;
mounttest)
  shift
  fs_type= file_mode= file_perm= file_owner= new_0644= new_0666= new_0660= new_0777=
  file_content= file_content_in_loop= retry_time=180 break_on_expected_content=true
  while [ $# -gt 0 ]; do
    case "$1" in
    --*=*) name=${1%%=*} val=${1#*=} ;;
    --break_on_expected_content) name=$1 val=true ;;
    --fs_type | --file_mode | --file_perm | --file_owner | --new_file_0644 | --new_file_0666 | \
      --new_file_0660 | --new_file_0777 | --file_content | --file_content_in_loop | --retry_time)
      [ $# -ge 2 ] || { echo "Error: flag needs an argument: $1" >&2; exit 1; }
      name=$1 val=$2
      shift
      ;;
    --*) echo "Error: unknown flag: ${1%%=*}" >&2; exit 1 ;;
    *) echo "Error: unknown command \"$1\" for \"app mounttest\"" >&2; exit 1 ;;
    esac
    shift
    case "${name#--}" in
    fs_type) fs_type=$val ;;
    file_mode) file_mode=$val ;;
    file_perm) file_perm=$val ;;
    file_owner) file_owner=$val ;;
    new_file_0644) new_0644=$val ;;
    new_file_0666) new_0666=$val ;;
    new_file_0660) new_0660=$val ;;
    new_file_0777) new_0777=$val ;;
    file_content) file_content=$val ;;
    file_content_in_loop) file_content_in_loop=$val ;;
    retry_time) retry_time=$val ;;
    break_on_expected_content) break_on_expected_content=$val ;;
    *) echo "Error: unknown flag: $name" >&2; exit 1 ;;
    esac
  done
  umask 0000
  errs=0
  mt_fs_type "$fs_type" || errs=1
  mt_new_file "$new_0644" 0644 || errs=1
  mt_new_file "$new_0666" 0666 || errs=1
  mt_new_file "$new_0660" 0660 || errs=1
  mt_new_file "$new_0777" 0777 || errs=1
  mt_file_mode "$file_mode" || errs=1
  mt_file_mode "$file_perm" perm || errs=1
  mt_file_owner "$file_owner" || errs=1
  mt_read_content "$file_content" || errs=1
  mt_content_in_loop "$file_content_in_loop" || errs=1
  exit $errs
  ;;
test-webserver)
  shift
  port=80
  while [ $# -gt 0 ]; do
    case "$1" in
    --port=*) port=${1#*=} ;;
    --port)
      [ $# -ge 2 ] || { echo "Error: flag needs an argument: --port" >&2; exit 1; }
      port=$2
      shift
      ;;
    *) echo "Error: unknown flag: $1" >&2; exit 1 ;;
    esac
    shift
  done
  exec httpd -f -p "$port" -h /
  ;;
*)
  echo "agnhost-lite: unknown subcommand '$1' (has: pause, entrypoint-tester, etc-hosts, mounttest, test-webserver)" >&2
  exit 1
  ;;
esac
"""
# test-webserver's directory listing (busybox httpd runs /cgi-bin/index.cgi for a directory
# without index.html): the entries, sorted, as Go's http.FileServer lists them.
AGNHOST_INDEX_CGI = rb"""#!/bin/sh
dir=${REQUEST_URI%%\?*}
cd "/${dir#/}" 2>/dev/null || { printf 'Status: 404 Not Found\r\n\r\n404 page not found\n'; exit 0; }
printf 'Content-Type: text/html; charset=utf-8\r\n\r\n'
printf '<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n'
ls -1A | while IFS= read -r e; do
  if [ -d "$e" ]; then e="$e/"; fi
  printf '<a href="%s">%s</a>\n' "$e" "$e"
done
printf '</pre>\n'
"""
layer = Tar()
busybox_tree(layer)
layer.file("agnhost", AGNHOST, 0o755)
layer.dir("cgi-bin")
layer.file("cgi-bin/index.cgi", AGNHOST_INDEX_CGI, 0o755)
layer.symlink("agnhost-2", "agnhost")
agnhost_layer = layer.bytes()
refs = ["shepherd.test/agnhost-lite:1.0"]
d = write_archive(os.path.join(outdir, "agnhost-lite.tar"), agnhost_layer,
                  {"config": {"Env": [PATH_ENV], "Entrypoint": ["/agnhost"], "Cmd": ["pause"]},
                   "history": [{"created": CREATED,
                                "created_by": "shepherd build-images.sh: busybox-static + "
                                              "agnhost-lite script"}]},
                  refs)
lines += ["agnhost-lite.tar\t%s\t%s" % (r, d) for r in refs]

with open(os.path.join(work, "images.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
os.replace(os.path.join(work, "images.txt"), os.path.join(outdir, "images.txt"))
PY

echo "$stamp" >"$work/.stamp"
mv "$work/.stamp" "$OUTDIR/.stamp"
echo "build-images: built in $OUTDIR"
cat "$OUTDIR/images.txt"
