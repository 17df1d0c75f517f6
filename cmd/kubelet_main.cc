// kubelet-lite: the node agent. Registers a Node, keeps its Lease and conditions fresh,
// runs the pods bound to it through containerd's CRI (or the fake runtime), and serves
// their logs on the kubelet port.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/signals.h"
#include "kubelet-lite/cri_client.h"
#include "kubelet-lite/fake_fleet.h"
#include "kubelet-lite/fake_runtime.h"
#include "kubelet-lite/kubelet.h"
#include "kubelet-lite/log_server.h"
#include "kubelet-lite/node_status.h"
#include "kubelet-lite/serving_cert.h"
#include "pki/certificates.h"

using namespace shepherd;

namespace {

// nameserver/search/options from a resolv.conf, the pods' DNS under dnsPolicy Default.
void readResolvConf(const std::string& path, kubelet::KubeletConfig& kc) {
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

std::map<std::string, std::string> parseLabels(const std::string& s, std::string& error) {
  std::map<std::string, std::string> out;
  std::stringstream ss(s);
  for (std::string kv; std::getline(ss, kv, ',');) {
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "--node-labels: \"" + kv + "\" is not key=value";
      return {};
    }
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

// Many fake nodes in this process until SIGINT/SIGTERM (no kubelet port: fake pods have
// no logs).
int runFakeFleet(client::RestClient& rest, const Flags& flags, const std::string& prefix,
                 const std::map<std::string, std::string>& labels, sigset_t set) {
  kubelet::FakeFleetConfig fc;
  fc.name_prefix = prefix;
  fc.nodes = flags.getInt("fake-nodes");
  fc.startup_ms = flags.getInt("fake-startup-ms");
  fc.workers = std::max(1, flags.getInt("fake-workers"));
  fc.machine = kubelet::detectMachine(flags.get("root-dir"));
  fc.node.internal_ip = flags.get("node-ip");
  fc.node.kubelet_port = flags.getInt("port");
  fc.node.labels = labels;
  fc.node.runtime_version = "fake://0.1.0";
  fc.node.max_pods = flags.getInt("max-pods");
  fc.node.cpu = flags.get("cpu");
  fc.node.memory = flags.get("memory");
  fc.node.lease_seconds = flags.getInt("node-lease-duration-seconds");
  fc.node.renew_interval_seconds = std::max(1, flags.getInt("node-status-update-frequency"));
  auto fleet = std::make_unique<kubelet::FakeFleet>(rest, fc);
  while (!fleet->start(30000)) {
    LOG_WARN("kubelet-lite: fake fleet not started; trying again");
    fleet = std::make_unique<kubelet::FakeFleet>(rest, fc);
    struct timespec ts {
      1, 0
    };
    if (sigtimedwait(&set, nullptr, &ts) > 0) return 0;
  }
  while (true) {
    int sig = sigwaitinfo(&set, nullptr);
    if (sig == SIGINT || sig == SIGTERM) break;
  }
  fleet->stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
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
  if (int rc = flags.parseMain(argc, argv, "kubelet-lite", "kubelet-lite --kubeconfig FILE [flags]",
                               {"kubeconfig"});
      rc >= 0)
    return rc;
  std::string error;
  std::string runtimeMode = flags.get("runtime");
  if (runtimeMode != "cri" && runtimeMode != "fake") {
    std::fprintf(stderr, "kubelet-lite: --runtime must be cri or fake\n");
    return 2;
  }
  auto labels = parseLabels(flags.get("node-labels"), error);
  if (!error.empty()) {
    std::fprintf(stderr, "kubelet-lite: %s\n", error.c_str());
    return 2;
  }
  auto cfg = client::loadKubeconfig(flags.get("kubeconfig"));
  if (!cfg) {
    std::fprintf(stderr, "kubelet-lite: %s\n", cfg.error().message.c_str());
    return 1;
  }
  cfg->user_agent = "kubelet-lite/v0.1";
  sigset_t set = blockTerminationSignals();

  std::string nodeName = flags.get("hostname-override");
  if (nodeName.empty()) {
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    nodeName = host;
  }
  bool fake = runtimeMode == "fake";
  client::RestClient rest(cfg.value());
  if (flags.getInt("fake-nodes") > 0) {
    if (!fake) {
      std::fprintf(stderr, "kubelet-lite: --fake-nodes needs --runtime=fake\n");
      return 2;
    }
    return runFakeFleet(rest, flags, nodeName, labels, set);
  }

  // The runtime first: without it the node cannot run anything.
  std::unique_ptr<kubelet::RuntimeService> runtime;
  kubelet::FakeRuntime* fakeRuntime = nullptr;
  if (fake) {
    // Every image is present; a sandbox takes --fake-startup-ms to make.
    kubelet::FakeRuntimeOptions fo;
    fo.any_image = true;
    fo.sandbox_delay = std::chrono::milliseconds(std::max(0, flags.getInt("fake-startup-ms")));
    // The node's /24 in 10.128.0.0/9 from its name, so fake nodes in separate processes
    // hand out different pod IPs (FNV-1a).
    uint32_t h = 2166136261u;
    for (unsigned char ch : nodeName) h = (h ^ ch) * 16777619u;
    fo.node_index = h % 32768;
    auto owned = std::make_unique<kubelet::FakeRuntime>(fo);
    fakeRuntime = owned.get();
    runtime = std::move(owned);
  } else {
    runtime = std::make_unique<kubelet::CriClient>(flags.get("container-runtime-endpoint"));
  }
  std::string runtimeVersion, runtimeName;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    auto v = runtime->version();
    if (v) {
      runtimeName = v->runtime_name();
      runtimeVersion = v->runtime_name() + "://" + v->runtime_version();
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "kubelet-lite: container runtime at %s is not answering: %s\n",
                   flags.get("container-runtime-endpoint").c_str(), v.error().message.c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }

  std::string rootDir = flags.get("root-dir");
  kubelet::MachineResources machine = kubelet::detectMachine(rootDir);
  kubelet::KubeletConfig kc;
  kc.node_name = nodeName;
  kc.node_ip = flags.get("node-ip");
  kc.root_dir = rootDir;
  kc.cgroup_root = flags.get("cgroup-root");
  kc.fake = fake;
  kc.runtime_name = runtimeName;
  kc.node_cpu = flags.get("cpu").empty() ? std::to_string(machine.cpus) : flags.get("cpu");
  kc.node_memory = flags.get("memory").empty() ? std::to_string(machine.memory_bytes) : flags.get("memory");
  if (!flags.get("resolv-conf").empty()) readResolvConf(flags.get("resolv-conf"), kc);
  kubelet::Kubelet kl(rest, *runtime, kc);
  if (fakeRuntime) {
    // Fake init containers complete as soon as they start; the others run until stopped.
    fakeRuntime->setExitOnStart([&kl](const runtime::v1::ContainerConfig& c,
                                      const runtime::v1::PodSandboxConfig& sb) -> std::optional<int> {
      client::Object pod = kl.currentPod(sb.metadata().namespace_() + "/" + sb.metadata().name());
      const json::Value* inits = pod ? json::findPath(*pod, {"spec", "initContainers"}) : nullptr;
      if (inits && inits->IsArray())
        for (auto& ic : inits->GetArray())
          if (json::getString(ic, "name") == c.metadata().name()) return 0;
      return std::nullopt;
    });
  }

  // The kubelet port first: the Node advertises the port it really got (--port=0 picks one).
  std::string bind = flags.get("address").empty() ? kc.node_ip : flags.get("address");
  kubelet::LogServerOptions lo;
  lo.address = bind;
  lo.port = flags.getInt("port");
  std::string caPem = cfg->ca_data;
  if (caPem.empty() && !cfg->ca_file.empty())
    if (auto f = pki::readFile(cfg->ca_file)) caPem = *f;
  if (!flags.get("client-ca-file").empty() || !caPem.empty()) {
    kubelet::ServingCertOptions so;
    so.cert_dir = flags.get("cert-dir").empty() ? rootDir + "/pki" : flags.get("cert-dir");
    so.node_name = nodeName;
    so.node_ip = kc.node_ip;
    so.cert_file = flags.get("tls-cert-file");
    so.key_file = flags.get("tls-private-key-file");
    so.client_ca_file = flags.get("client-ca-file");
    so.client_ca_pem = caPem;
    auto tls = kubelet::kubeletServingTls(so);
    if (!tls) {
      std::fprintf(stderr, "kubelet-lite: kubelet port TLS: %s\n", tls.error().message.c_str());
      return 1;
    }
    lo.tls = *tls;
    lo.allowed_users = flags.getList("authorized-client-users");
  } else {
    LOG_WARN("kubelet-lite: no cluster CA known; the kubelet port serves plain HTTP");
  }
  auto idle = clock::parseDuration(flags.get("streaming-connection-idle-timeout"));
  if (!idle) {
    std::fprintf(stderr, "kubelet-lite: invalid --streaming-connection-idle-timeout\n");
    return 1;
  }
  lo.streaming.idle_timeout_seconds =
      static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(*idle).count());
  kubelet::LogServer logs(kl, lo);
  auto port = logs.start();
  if (!port) {
    std::fprintf(stderr, "kubelet-lite: kubelet port: %s\n", port.error().message.c_str());
    return 1;
  }

  kubelet::NodeConfig nc;
  nc.name = nodeName;
  nc.internal_ip = kc.node_ip;
  nc.kubelet_port = port.value();
  nc.labels = labels;
  nc.runtime_version = runtimeVersion;
  nc.max_pods = flags.getInt("max-pods");
  nc.cpu = flags.get("cpu");
  nc.memory = flags.get("memory");
  nc.lease_seconds = flags.getInt("node-lease-duration-seconds");
  nc.renew_interval_seconds = std::max(1, flags.getInt("node-status-update-frequency"));
  kubelet::NodeAgent node(rest, nc, machine);
  while (!node.registerNode()) {
    struct timespec ts {
      1, 0
    };
    if (sigtimedwait(&set, nullptr, &ts) > 0) return 0;
  }
  while (!kl.start(10000)) LOG_WARN("kubelet-lite: waiting for the API server to list this node's pods");
  node.start();
  LOG_INFO("kubelet-lite: node " << nodeName << " ready (" << runtimeVersion << ", port " << nc.kubelet_port
                                 << ")");

  // Runtime health decides the node's Ready condition.
  while (true) {
    struct timespec ts {
      5, 0
    };
    int sig = sigtimedwait(&set, nullptr, &ts);
    if (sig == SIGINT || sig == SIGTERM) break;
    auto st = runtime->status();
    if (!st) {
      node.setReady(false, "KubeletNotReady", "container runtime is down: " + st.error().message);
      continue;
    }
    bool runtimeReady = true, networkReady = true;
    std::string why;
    for (const auto& c : st->status().conditions()) {
      if (c.status()) continue;
      if (c.type() == "RuntimeReady") runtimeReady = false;
      if (c.type() == "NetworkReady") networkReady = false;
      why = c.type() + "=false reason:" + c.reason() + " message:" + c.message();
    }
    if (runtimeReady && networkReady)
      node.setReady(true, "KubeletReady", "kubelet-lite is posting ready status");
    else
      node.setReady(false, "KubeletNotReady", "container runtime not ready: " + why);
  }
  LOG_INFO("kubelet-lite: stopping (containers keep running)");
  node.stop();
  logs.stop();
  kl.stop();
  return 0;
}
