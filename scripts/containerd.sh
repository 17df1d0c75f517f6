#!/usr/bin/env bash
# A private containerd for kubelet-lite: everything lives under DIR, so several instances
# (one per test node) run side by side without touching a system containerd.
#
#   containerd.sh start  DIR [--subnet 10.199.0.0/24] [--bridge shepherd0]
#   containerd.sh stop   DIR [--keep-pods]
#   containerd.sh status DIR
#   containerd.sh import DIR
#
# start   writes DIR/config.toml and the CNI conflist, creates the pod bridge, starts
#         containerd (pid in DIR/containerd.pid, log in DIR/containerd.log), waits until
#         `ctr --address DIR/containerd.sock version` answers, then imports the images of
#         kubelet-lite/images/build-images.sh into namespace k8s.io. Starting a running
#         instance is a no-op. --subnet/--bridge are remembered in DIR/node.env.
# stop    removes every container and pod sandbox of the instance, stops containerd by its
#         pid and waits for it to exit, then removes what it left behind: mounts and network
#         namespaces under DIR, the bridge, IP leases. Images stay (DIR/root).
#         --keep-pods stops only containerd: its shims and pods keep running and the next
#         start picks them up again (a containerd restart).
# status  exits 0 when the instance runs and answers, 1 otherwise.
# import  (re)builds and imports the images into a running instance.
#
# See docs/runtime.md. Needs root and the Debian packages containerd, runc,
# containernetworking-plugins, iproute2, busybox-static, gcc, python3.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
BUILD_IMAGES=$REPO/kubelet-lite/images/build-images.sh
CNI_BIN_DIR=/usr/lib/cni
PAUSE_IMAGE=registry.k8s.io/pause:3.10
START_TIMEOUT=${CONTAINERD_START_TIMEOUT:-30}
STOP_TIMEOUT=${CONTAINERD_STOP_TIMEOUT:-15}
# Shared by all instances: the ip_forward value found before the first one set up a bridge,
# restored when the last one stops (the CNI bridge plugin turns forwarding on).
FORWARD_SAVE=/run/shepherd-containerd.ip_forward
# Held while an instance adds or removes its bridge and reads or restores FORWARD_SAVE, so
# instances started and stopped at once (suites running side by side) agree on which is first
# and last.
BRIDGES_LOCK=/run/shepherd-containerd.lock
ALIAS_PREFIX=shepherd-containerd:

usage() {
  sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
log() { echo "containerd.sh: $*" >&2; }
die() { log "$*"; exit 1; }

[ $# -ge 2 ] || usage
CMD=$1
DIR_ARG=$2
shift 2
SUBNET_ARG='' BRIDGE_ARG='' KEEP_PODS=0
while [ $# -gt 0 ]; do
  case $1 in
    --subnet) [ $# -ge 2 ] || usage; SUBNET_ARG=$2; shift 2 ;;
    --subnet=*) SUBNET_ARG=${1#*=}; shift ;;
    --bridge) [ $# -ge 2 ] || usage; BRIDGE_ARG=$2; shift 2 ;;
    --bridge=*) BRIDGE_ARG=${1#*=}; shift ;;
    --keep-pods) KEEP_PODS=1; shift ;;
    *) usage ;;
  esac
done
case $CMD in start|stop|status|import) ;; *) usage ;; esac

[ "$(id -u)" -eq 0 ] || die "must run as root"
if [ ! -d "$DIR_ARG" ]; then
  case $CMD in
    start) mkdir -p "$DIR_ARG" ;;
    stop) log "not running ($DIR_ARG does not exist)"; exit 0 ;;
    *) echo "not running ($DIR_ARG does not exist)"; exit 1 ;;
  esac
fi
DIR=$(cd "$DIR_ARG" && pwd)
SOCK=$DIR/containerd.sock
PIDFILE=$DIR/containerd.pid
CONFIG=$DIR/config.toml
LOGFILE=$DIR/containerd.log
NODE_ENV=$DIR/node.env
CNI_CONF_DIR=$DIR/cni/net.d
IPAM_DIR=$DIR/cni/ipam
IMAGES_DIR=${SHEPHERD_IMAGES_DIR:-$DIR/images}

# A unix socket path holds at most 107 bytes; containerd also listens on SOCK.ttrpc.
[ ${#SOCK} -le 100 ] || die "DIR is too long for a unix socket path: $SOCK"

ctr_() { ctr --address "$SOCK" "$@"; }

# The pid from DIR/containerd.pid if that process is alive and is our containerd.
running_pid() {
  local pid
  [ -f "$PIDFILE" ] || return 1
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  is_our_containerd "$pid" || return 1
  echo "$pid"
}

is_our_containerd() {
  local pid=$1
  [ -r "/proc/$pid/cmdline" ] || return 1
  # A zombie has an empty cmdline; a reused pid has another one.
  tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -xF -- "$CONFIG" >/dev/null
}

# The pid of the containerd running with our config, found through /proc.
find_containerd() {
  local f pid
  # shellcheck disable=SC2013
  for f in $(grep -lzxF -- "$CONFIG" /proc/[0-9]*/cmdline 2>/dev/null); do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    case $(readlink "/proc/$pid/exe" 2>/dev/null) in
      */containerd) echo "$pid"; return 0 ;;
    esac
  done
  return 1
}

answers() { timeout 5 ctr --address "$SOCK" version >/dev/null 2>&1; }

load_node_env() {
  SUBNET=10.199.0.0/24
  BRIDGE=shepherd0
  # shellcheck disable=SC1090
  if [ -f "$NODE_ENV" ]; then . "$NODE_ENV"; fi
  if [ -n "$SUBNET_ARG" ]; then SUBNET=$SUBNET_ARG; fi
  if [ -n "$BRIDGE_ARG" ]; then BRIDGE=$BRIDGE_ARG; fi
  return 0
}

# Validates SUBNET (an IPv4 network, /8 to /29) and sets GATEWAY (its first host, with
# the prefix length) and NETNAME.
check_network() {
  local a b c d len ip mask o
  [[ $BRIDGE =~ ^[A-Za-z0-9_.-]{1,15}$ ]] || die "bad bridge name '$BRIDGE' (1-15 of [A-Za-z0-9_.-])"
  [[ $SUBNET =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})/([0-9]{1,2})$ ]] ||
    die "bad --subnet '$SUBNET' (want an IPv4 network such as 10.199.0.0/24)"
  a=${BASH_REMATCH[1]} b=${BASH_REMATCH[2]} c=${BASH_REMATCH[3]} d=${BASH_REMATCH[4]}
  len=${BASH_REMATCH[5]}
  for o in "$a" "$b" "$c" "$d"; do
    [ $((10#$o)) -le 255 ] || die "bad --subnet '$SUBNET'"
  done
  (( 10#$len >= 8 && 10#$len <= 29 )) || die "--subnet '$SUBNET': prefix must be /8 to /29"
  ip=$(( (10#$a << 24) | (10#$b << 16) | (10#$c << 8) | 10#$d ))
  mask=$(( (0xffffffff << (32 - 10#$len)) & 0xffffffff ))
  [ $((ip & ~mask & 0xffffffff)) -eq 0 ] || die "--subnet '$SUBNET' has host bits set"
  ip=$((ip + 1))
  GATEWAY="$((ip >> 24 & 255)).$((ip >> 16 & 255)).$((ip >> 8 & 255)).$((ip & 255))/$((10#$len))"
  NETNAME=shepherd-$BRIDGE
}

write_config() {
  mkdir -p "$DIR/root" "$DIR/state" "$DIR/runc" "$DIR/opt" "$CNI_CONF_DIR" "$IPAM_DIR" \
           "$DIR/pod-logs"
  chmod 0711 "$DIR/root" "$DIR/state"
  cat >"$CONFIG.tmp" <<EOF
# Generated by scripts/containerd.sh; rewritten on every start. See docs/runtime.md.
version = 2
root = "$DIR/root"
state = "$DIR/state"
oom_score = 0
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$SOCK"
  uid = 0
  gid = 0

[ttrpc]
  address = "$SOCK.ttrpc"

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$DIR/opt"

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    restrict_oom_score_adj = true
    disable_apparmor = true
    netns_mounts_under_state_dir = true
    disable_tcp_service = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    max_container_log_line_size = 16384

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "$DIR/runc"

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$CNI_BIN_DIR"
      conf_dir = "$CNI_CONF_DIR"
      max_conf_num = 1

    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = ""
EOF
  mv "$CONFIG.tmp" "$CONFIG"

  # A bridge + host-local network on the instance's own bridge; no masquerade and no
  # default route, so pods reach only their subnet (the host is its .1 address).
  cat >"$CNI_CONF_DIR/10-shepherd.conflist.tmp" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$NETNAME",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "isDefaultGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$SUBNET", "gateway": "${GATEWAY%/*}" }]],
        "dataDir": "$IPAM_DIR"
      }
    }
  ]
}
EOF
  rm -f "$CNI_CONF_DIR"/*.conflist "$CNI_CONF_DIR"/*.conf
  mv "$CNI_CONF_DIR/10-shepherd.conflist.tmp" "$CNI_CONF_DIR/10-shepherd.conflist"

  printf 'SUBNET=%s\nBRIDGE=%s\n' "$SUBNET" "$BRIDGE" >"$NODE_ENV"
}

other_instance_bridges() {
  ip -o link show type bridge 2>/dev/null | grep -F "alias $ALIAS_PREFIX" |
    grep -vF "alias $ALIAS_PREFIX$DIR" || true
}

# Creates the bridge with the gateway address (the bridge plugin then finds it ready).
setup_bridge() {
  local alias
  if ip link show dev "$BRIDGE" >/dev/null 2>&1; then
    alias=$(ip -o link show dev "$BRIDGE" | sed -n 's/.* alias //p')
    [ "$alias" = "$ALIAS_PREFIX$DIR" ] ||
      die "interface $BRIDGE exists and is not this instance's bridge (choose another --bridge)"
  else
    # The subnet must not be routed anywhere yet (another node, a real network).
    if [ -n "$(ip -4 route show match "${GATEWAY%/*}" | grep -v '^default' || true)" ]; then
      die "subnet $SUBNET overlaps a route on this machine: $(ip -4 route show match "${GATEWAY%/*}" | grep -v '^default' | head -n1)"
    fi
    exec 8>"$BRIDGES_LOCK"
    flock 8
    if [ ! -f "$FORWARD_SAVE" ] && [ -z "$(other_instance_bridges)" ]; then
      cat /proc/sys/net/ipv4/ip_forward >"$FORWARD_SAVE"
    fi
    ip link add name "$BRIDGE" type bridge
    ip link set dev "$BRIDGE" alias "$ALIAS_PREFIX$DIR"
    exec 8>&-
  fi
  if ! ip -4 -o addr show dev "$BRIDGE" | grep -F " $GATEWAY " >/dev/null; then
    ip addr add "$GATEWAY" dev "$BRIDGE"
  fi
  ip link set dev "$BRIDGE" up
}

# Imports the images unless (with "missing") every reference is already there with the
# digest build-images.sh made.
import_images() {
  local tar ref digest have
  "$BUILD_IMAGES" "$IMAGES_DIR" >/dev/null
  if [ "${1:-}" = missing ]; then
    have=$(ctr_ -n k8s.io images ls 2>/dev/null | awk 'NR > 1 { print $1 " " $3 }')
    while IFS=$'\t' read -r tar ref digest; do
      grep -qxF -- "$ref $digest" <<<"$have" || { have=; break; }
    done <"$IMAGES_DIR/images.txt"
    if [ -n "$have" ]; then
      log "images present: $(cut -f2 "$IMAGES_DIR/images.txt" | tr '\n' ' ')"
      return 0
    fi
  fi
  for tar in "$IMAGES_DIR"/*.tar; do
    ctr_ -n k8s.io images import "$tar" >/dev/null ||
      die "importing $tar failed"
  done
  log "imported: $(cut -f2 "$IMAGES_DIR/images.txt" | tr '\n' ' ')"
}

cmd_start() {
  local pid t0 i
  load_node_env
  check_network
  if pid=$(running_pid); then
    if answers; then
      log "already running (pid $pid, $SOCK)"
      return 0
    fi
    die "containerd pid $pid runs but does not answer on $SOCK; stop it first"
  fi
  for b in containerd ctr runc containerd-shim-runc-v2 ip; do
    command -v "$b" >/dev/null || die "$b not found (see scripts/setup-deps.sh)"
  done
  for b in bridge host-local loopback; do
    [ -x "$CNI_BIN_DIR/$b" ] ||
      die "CNI plugin $CNI_BIN_DIR/$b missing (apt-get install containernetworking-plugins)"
  done
  if [ -S "$SOCK" ] && answers; then die "something else answers on $SOCK"; fi

  setup_bridge
  write_config
  rm -f "$SOCK" "$SOCK.ttrpc"

  echo "=== containerd.sh start $(date -u +%FT%TZ)" >>"$LOGFILE"
  t0=$(date +%s%N)
  # setsid: its own session, so the instance outlives this shell and its signals.
  setsid containerd --config "$CONFIG" </dev/null >>"$LOGFILE" 2>&1 &
  pid=$!
  echo "$pid" >"$PIDFILE"
  for ((i = 0; i < START_TIMEOUT * 20; i++)); do
    if ! kill -0 "$pid" 2>/dev/null && ! find_containerd >/dev/null; then
      tail -n 20 "$LOGFILE" >&2
      rm -f "$PIDFILE"
      die "containerd exited during start (log: $LOGFILE)"
    fi
    if [ -S "$SOCK" ] && answers; then
      break
    fi
    sleep 0.05
  done
  if ! answers; then
    tail -n 20 "$LOGFILE" >&2
    die "containerd (pid $pid) did not answer within ${START_TIMEOUT}s (log: $LOGFILE)"
  fi
  # setsid forks when started as a process group leader: record containerd's own pid.
  if ! is_our_containerd "$pid"; then
    pid=$(find_containerd) || die "containerd answers but its process was not found"
    echo "$pid" >"$PIDFILE"
  fi
  log "started pid $pid on $SOCK in $(( ($(date +%s%N) - t0) / 1000000 )) ms (bridge $BRIDGE $GATEWAY)"
  # containerd serves even when its CRI plugin failed to load; kubelet-lite needs it.
  if ! ctr_ plugins ls 2>/dev/null | grep -E '^io\.containerd\.grpc\.v1[[:space:]]+cri[[:space:]].*[[:space:]]ok[[:space:]]*$' >/dev/null; then
    grep -E 'level=(error|warning)' "$LOGFILE" | tail -n 10 >&2
    die "containerd runs but its CRI plugin did not load (log: $LOGFILE); stop it with: $0 stop $DIR"
  fi
  import_images missing
}

# Removes every container (pods included) of the instance through containerd.
remove_containers() {
  local ns id
  for ns in $(ctr_ namespaces ls -q 2>/dev/null); do
    for id in $(ctr_ -n "$ns" containers ls -q 2>/dev/null); do
      ctr_ -n "$ns" tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    for id in $(ctr_ -n "$ns" containers ls -q 2>/dev/null); do
      ctr_ -n "$ns" tasks delete -f "$id" >/dev/null 2>&1 || true
      ctr_ -n "$ns" containers delete "$id" >/dev/null 2>&1 ||
        log "could not delete container $ns/$id"
    done
  done
}

# Kills by pid whatever the instance left running after containerd exited: containers
# (through runc's own state under DIR/runc) and shims (whose -address is our socket).
kill_leftovers() {
  local root id pid f
  for root in "$DIR"/runc/*/; do
    [ -d "$root" ] || continue
    for id in $(runc --root "$root" list -q 2>/dev/null); do
      runc --root "$root" delete -f "$id" >/dev/null 2>&1 || true
    done
  done
  # Shims whose arguments include our socket path exactly (grep -z: NUL-separated).
  # shellcheck disable=SC2013
  for f in $(grep -lzxF -- "$SOCK" /proc/[0-9]*/cmdline 2>/dev/null); do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    case $(readlink "/proc/$pid/exe" 2>/dev/null) in
      */containerd-shim*) kill -KILL "$pid" 2>/dev/null || true ;;
    esac
  done
}

# Removes each container's cgroup (if runc left it) and, when empty, its parent when that
# is a pod-level one (pod<uid>) or ctr's per-namespace one (/NS), in every hierarchy.
remove_cgroups() {
  local entry ns path parent root
  for entry in "${CGROUPS[@]}"; do
    ns=${entry%% *}
    path=${entry#* }
    case $path in /?*) ;; *) continue ;; esac
    parent=${path%/*}
    # shellcheck disable=SC2013
    for root in $(awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/self/mounts); do
      rmdir "$root$path" 2>/dev/null || true
      case $parent in
        */pod*|"/$ns") rmdir "$root$parent" 2>/dev/null || true ;;
      esac
    done
  done
}

# Unmounts everything mounted below DIR (rootfs overlays, shm, network namespaces),
# deepest first.
unmount_all() {
  local m
  awk -v d="$DIR/" '{ gsub(/\\040/, " ", $5); if (index($5, d) == 1) print $5 }' \
      /proc/self/mountinfo | sort -r | while IFS= read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
  done
}

cleanup_network() {
  local f id
  exec 8>"$BRIDGES_LOCK"
  flock 8
  if ip link show dev "$BRIDGE" >/dev/null 2>&1; then
    if [ "$(ip -o link show dev "$BRIDGE" | sed -n 's/.* alias //p')" = "$ALIAS_PREFIX$DIR" ]; then
      ip link del dev "$BRIDGE" || log "cannot delete bridge $BRIDGE"
    fi
  fi
  rm -rf "$IPAM_DIR"
  # libcni caches each attachment's result under /var/lib/cni/results/NETNAME-ID-IFNAME;
  # a sandbox torn down without CNI DEL leaves its pod network's and its loopback's.
  for f in /var/lib/cni/results/"$NETNAME"-*; do
    rm -f "$f"
  done
  for id in "${SANDBOX_IDS[@]}"; do
    rm -f "/var/lib/cni/results/cni-loopback-$id-lo"
  done
  # The last instance to go restores ip_forward as it was before the first one came.
  if [ -f "$FORWARD_SAVE" ] && [ -z "$(other_instance_bridges)" ]; then
    cat "$FORWARD_SAVE" >/proc/sys/net/ipv4/ip_forward 2>/dev/null || true
    rm -f "$FORWARD_SAVE"
  fi
  exec 8>&-
}

# Notes, from the task bundles under DIR/state, what outlives the containers: pod-level
# cgroups, shim sockets, and the sandbox ids that name CNI cache files.
collect_leftovers() {
  local f ns
  COLLECTED=1
  # runc removes a container's own cgroup but not the pod-level one above it.
  CGROUPS=()
  for f in "$DIR"/state/io.containerd.runtime.v2.task/*/*/config.json; do
    [ -f "$f" ] || continue
    ns=${f#"$DIR"/state/io.containerd.runtime.v2.task/}
    ns=${ns%%/*}
    CGROUPS+=("$ns $(grep -o '"cgroupsPath": *"[^"]*"' "$f" | sed 's/.*"\([^"]*\)"$/\1/')")
  done
  SANDBOX_IDS=()
  for f in "$DIR"/root/io.containerd.grpc.v1.cri/sandboxes/*/; do
    if [ -d "$f" ]; then SANDBOX_IDS+=("$(basename "$f")"); fi
  done
  # Each shim's socket (in /run/containerd/s, see below) is named in its bundle.
  SHIM_SOCKETS=()
  for f in "$DIR"/state/io.containerd.runtime.v2.task/*/*/address; do
    if [ -f "$f" ]; then SHIM_SOCKETS+=("$(sed -n 's|^unix://||p' "$f")"); fi
  done
  return 0
}

cmd_stop() {
  local pid i f
  COLLECTED=0
  load_node_env
  NETNAME=shepherd-$BRIDGE
  if pid=$(running_pid); then
    if [ "$KEEP_PODS" -eq 0 ] && answers; then
      collect_leftovers
      remove_containers
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < STOP_TIMEOUT * 20; i++)); do
      is_our_containerd "$pid" || break
      sleep 0.05
    done
    if is_our_containerd "$pid"; then
      log "containerd pid $pid ignored SIGTERM for ${STOP_TIMEOUT}s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 100; i++)); do is_our_containerd "$pid" || break; sleep 0.05; done
    fi
    log "stopped pid $pid"
  else
    log "not running"
  fi
  rm -f "$PIDFILE"
  if [ "$KEEP_PODS" -eq 1 ]; then
    return 0
  fi
  [ "$COLLECTED" -eq 1 ] || collect_leftovers
  kill_leftovers
  for f in "${SHIM_SOCKETS[@]}"; do
    case $f in /run/containerd/s/*) rm -f "$f" ;; esac
  done
  remove_cgroups
  unmount_all
  # Runtime state only (like /run): sandboxes, netns files, shim bundles. Images stay.
  rm -rf "$DIR/state" "$DIR/runc" "$SOCK" "$SOCK.ttrpc"
  rm -rf "$DIR/root/io.containerd.grpc.v1.cri/sandboxes" "$DIR/root/io.containerd.grpc.v1.cri/containers"
  cleanup_network
  # Shim sockets live in /run/containerd/s whatever the state dir (hashed per instance),
  # and ctr's FIFOs in /run/containerd/fifo: the last instance drops them if left empty.
  if [ -z "$(other_instance_bridges)" ]; then
    rmdir /run/containerd/s /run/containerd/fifo /run/containerd 2>/dev/null || true
  fi
}

cmd_status() {
  local pid
  load_node_env
  if pid=$(running_pid) && answers; then
    echo "running pid=$pid socket=$SOCK bridge=$BRIDGE subnet=$SUBNET"
    return 0
  fi
  echo "not running ($DIR)"
  return 1
}

cmd_import() {
  if ! running_pid >/dev/null || ! answers; then
    die "not running: start it first"
  fi
  import_images
}

"cmd_$CMD"
