#include "kubelet-lite/options.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "common/clock.h"
#include "common/log.h"
#include "kubelet-lite/serving_cert.h"

namespace shepherd::kubelet {

void defineFlags(Flags& flags) {
  flags.define("kubeconfig", "",
               "Path to a kubeconfig with the API server's address and credentials (required).");
  flags.define("hostname-override", "", "The node's name (default: the machine's hostname).");
  flags.define("node-ip", "127.0.0.1",
               "The node's InternalIP: pods' hostIP, and where the API server reaches the kubelet port.");
  flags.define("address", "", "Address the kubelet port binds (default: --node-ip).");
  flags.define("port", "10250", "The kubelet port (container logs, health).");
  flags.define("cert-dir", "", "Where the kubelet port's certificates are kept (default ROOT-DIR/pki).");
  flags.define("tls-cert-file", "",
               "Serving certificate of the kubelet port (default: one from a self-signed CA in --cert-dir).");
  flags.define("tls-private-key-file", "", "Key of --tls-cert-file.");
  flags.define(
      "client-ca-file", "",
      "CA of the client certificates the kubelet port accepts (default: the kubeconfig's CA; with no CA "
      "at all the port is plain HTTP).");
  flags.define("authorized-client-users", "kube-apiserver-kubelet-client",
               "Certificate users (CN) that may read container logs, comma-separated.");
  flags.define("streaming-connection-idle-timeout", "4h",
               "Exec, attach and port-forward sessions with no traffic for this long are closed (0: never).");
  flags.define("runtime", "cri",
               "cri: containers through containerd's CRI; fake: an in-memory runtime that runs no processes "
               "(scale tests).");
  flags.define("container-runtime-endpoint", "unix:///run/containerd/containerd.sock", "The CRI socket.");
  flags.define("root-dir", "/var/lib/shepherd-kubelet", "Pod volumes and container logs live here.");
  flags.define("cgroup-root", "/kubepods", "Absolute cgroup under which pod cgroups are made.");
  flags.define("resolv-conf", "/etc/resolv.conf", "DNS configuration given to pods (empty: none).");
  flags.define("node-labels", "", "Extra node labels, key=value,...");
  flags.define("max-pods", "110", "Pods this node accepts (capacity.pods).");
  flags.define("cpu", "", "Override the cpu capacity reported (e.g. for fake nodes).");
  flags.define("memory", "", "Override the memory capacity reported.");
  flags.define("fake-startup-ms", "100", "With --runtime=fake: delay before a pod is Running.");
  flags.define("fake-nodes", "0",
               "With --runtime=fake: run this many fake nodes in this process, named "
               "<hostname-override>-<i> (cluster simulations); 0 = one node.");
  flags.define("fake-workers", "4", "With --fake-nodes: threads writing pod statuses.");
  flags.define("node-lease-duration-seconds", "40", "leaseDurationSeconds of the node's Lease.");
  flags.define("node-status-update-frequency", "10", "Seconds between lease renewals.");
  flags.define("v", "0", "Log verbosity.");
  flags.define("help", "false", "Show this help.", true);
}

Result<std::map<std::string, std::string>> parseNodeLabels(const std::string& s) {
  std::map<std::string, std::string> out;
  std::stringstream ss(s);
  for (std::string kv; std::getline(ss, kv, ',');) {
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      return ApiError::badRequest("--node-labels: \"" + kv + "\" is not key=value");
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

Result<KubeletOptions> optionsFromFlags(const Flags& flags) {
  KubeletOptions o;
  std::string runtime = flags.get("runtime");
  if (runtime != "cri" && runtime != "fake") return ApiError::badRequest("--runtime must be cri or fake");
  o.fake_runtime = runtime == "fake";
  o.fake_nodes = flags.getInt("fake-nodes");
  if (o.fake_nodes > 0 && !o.fake_runtime) return ApiError::badRequest("--fake-nodes needs --runtime=fake");
  auto labels = parseNodeLabels(flags.get("node-labels"));
  if (!labels) return labels.error();
  o.labels = std::move(labels.value());
  auto idle = clock::parseDuration(flags.get("streaming-connection-idle-timeout"));
  if (!idle) return ApiError::badRequest("invalid --streaming-connection-idle-timeout");
  o.streaming_idle_timeout_seconds =
      static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(*idle).count());

  o.kubeconfig = flags.get("kubeconfig");
  o.node_name = flags.get("hostname-override");
  if (o.node_name.empty()) {
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    o.node_name = host;
  }
  o.node_ip = flags.get("node-ip");
  o.address = flags.get("address");
  o.port = flags.getInt("port");
  o.cert_dir = flags.get("cert-dir");
  o.tls_cert_file = flags.get("tls-cert-file");
  o.tls_private_key_file = flags.get("tls-private-key-file");
  o.client_ca_file = flags.get("client-ca-file");
  o.authorized_client_users = flags.getList("authorized-client-users");
  o.runtime_endpoint = flags.get("container-runtime-endpoint");
  o.root_dir = flags.get("root-dir");
  o.cgroup_root = flags.get("cgroup-root");
  o.resolv_conf = flags.get("resolv-conf");
  o.max_pods = flags.getInt("max-pods");
  o.cpu = flags.get("cpu");
  o.memory = flags.get("memory");
  o.lease_seconds = flags.getInt("node-lease-duration-seconds");
  o.renew_interval_seconds = std::max(1, flags.getInt("node-status-update-frequency"));
  o.fake_startup_ms = std::max(0, flags.getInt("fake-startup-ms"));
  o.fake_workers = std::max(1, flags.getInt("fake-workers"));
  return o;
}

namespace {

// nameserver/search/options from a resolv.conf.
void readResolvConf(const std::string& path, KubeletConfig& kc) {
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) {
    std::stringstream ss(line);
    std::string key;
    ss >> key;
    for (std::string v; ss >> v;) {
      if (key == "nameserver")
        kc.dns_servers.push_back(v);
      else if (key == "search")
        kc.dns_searches.push_back(v);
      else if (key == "options")
        kc.dns_options.push_back(v);
    }
  }
}

}  // namespace

KubeletConfig kubeletConfig(const KubeletOptions& o, const MachineResources& machine,
                            const std::string& runtime_name) {
  KubeletConfig kc;
  kc.node_name = o.node_name;
  kc.node_ip = o.node_ip;
  kc.root_dir = o.root_dir;
  kc.cgroup_root = o.cgroup_root;
  kc.fake = o.fake_runtime;
  kc.runtime_name = runtime_name;
  kc.node_cpu = o.cpu.empty() ? std::to_string(machine.cpus) : o.cpu;
  kc.node_memory = o.memory.empty() ? std::to_string(machine.memory_bytes) : o.memory;
  if (!o.resolv_conf.empty()) readResolvConf(o.resolv_conf, kc);
  return kc;
}

NodeConfig nodeConfig(const KubeletOptions& o, int kubelet_port, const std::string& runtime_version) {
  NodeConfig nc;
  nc.name = o.node_name;
  nc.internal_ip = o.node_ip;
  nc.kubelet_port = kubelet_port;
  nc.labels = o.labels;
  // Where the local-path provisioner puts this node's volumes (its helper pods make them).
  if (!o.fake_runtime) nc.annotations[kLocalStoragePathAnnotation] = o.root_dir + "/storage";
  nc.runtime_version = runtime_version;
  nc.max_pods = o.max_pods;
  nc.cpu = o.cpu;
  nc.memory = o.memory;
  nc.lease_seconds = o.lease_seconds;
  nc.renew_interval_seconds = o.renew_interval_seconds;
  return nc;
}

FakeFleetConfig fakeFleetConfig(const KubeletOptions& o) {
  FakeFleetConfig fc;
  fc.name_prefix = o.node_name;
  fc.nodes = o.fake_nodes;
  fc.startup_ms = o.fake_startup_ms;
  fc.workers = o.fake_workers;
  fc.machine = detectMachine(o.root_dir);
  // No kubelet port is served (fake pods have no logs); the Node still names the flag's.
  fc.node = nodeConfig(o, o.port, "fake://0.1.0");
  return fc;
}

Result<LogServerOptions> kubeletPortOptions(const KubeletOptions& o, const std::string& cluster_ca_pem) {
  LogServerOptions lo;
  lo.address = o.bindAddress();
  lo.port = o.port;
  lo.streaming.idle_timeout_seconds = o.streaming_idle_timeout_seconds;
  if (o.client_ca_file.empty() && cluster_ca_pem.empty()) return lo;  // plain HTTP: no CA to check clients
  ServingCertOptions so;
  so.cert_dir = o.certDir();
  so.node_name = o.node_name;
  so.node_ip = o.node_ip;
  so.cert_file = o.tls_cert_file;
  so.key_file = o.tls_private_key_file;
  so.client_ca_file = o.client_ca_file;
  so.client_ca_pem = cluster_ca_pem;
  auto tls = kubeletServingTls(so);
  if (!tls) return ApiError::internal("kubelet port TLS: " + tls.error().message);
  lo.tls = *tls;
  lo.allowed_users = o.authorized_client_users;
  return lo;
}

}  // namespace shepherd::kubelet
