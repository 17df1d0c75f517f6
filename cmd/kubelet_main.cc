// kubelet-lite: the node agent. Registers a Node, keeps its Lease and conditions fresh,
// runs the pods bound to it through containerd's CRI (or the fake runtime), and serves
// their logs on the kubelet port.
#include <signal.h>

#include <cstdio>
#include <memory>

#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/signals.h"
#include "kubelet-lite/fake_fleet.h"
#include "kubelet-lite/kubelet.h"
#include "kubelet-lite/log_server.h"
#include "kubelet-lite/node_status.h"
#include "kubelet-lite/options.h"
#include "kubelet-lite/runtime_setup.h"
#include "pki/certificates.h"

using namespace shepherd;

namespace {

// Waits up to `seconds` for SIGINT/SIGTERM; true when one came.
bool terminationSignal(const sigset_t& set, int seconds) {
  struct timespec ts {
    seconds, 0
  };
  int sig = sigtimedwait(&set, nullptr, &ts);
  return sig == SIGINT || sig == SIGTERM;
}

// Many fake nodes in this process until SIGINT/SIGTERM (no kubelet port: fake pods have
// no logs).
int runFakeFleet(client::RestClient& rest, const kubelet::KubeletOptions& o, const sigset_t& set) {
  kubelet::FakeFleetConfig fc = kubelet::fakeFleetConfig(o);
  auto fleet = std::make_unique<kubelet::FakeFleet>(rest, fc);
  while (!fleet->start(30000)) {
    LOG_WARN("kubelet-lite: fake fleet not started; trying again");
    fleet = std::make_unique<kubelet::FakeFleet>(rest, fc);
    if (terminationSignal(set, 1)) return 0;
  }
  while (!terminationSignal(set, 3600)) {
  }
  fleet->stop();
  return 0;
}

// The CA the kubelet port checks client certificates against, unless --client-ca-file.
std::string clusterCa(const client::ClientConfig& cfg) {
  if (!cfg.ca_data.empty() || cfg.ca_file.empty()) return cfg.ca_data;
  auto f = pki::readFile(cfg.ca_file);
  return f ? *f : "";
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  kubelet::defineFlags(flags);
  if (int rc = flags.parseMain(argc, argv, "kubelet-lite", "kubelet-lite --kubeconfig FILE [flags]",
                               {"kubeconfig"});
      rc >= 0)
    return rc;
  auto opts = kubelet::optionsFromFlags(flags);
  if (!opts) {
    std::fprintf(stderr, "kubelet-lite: %s\n", opts.error().message.c_str());
    return 2;
  }
  const kubelet::KubeletOptions& o = opts.value();
  auto cfg = client::loadKubeconfig(o.kubeconfig);
  if (!cfg) {
    std::fprintf(stderr, "kubelet-lite: %s\n", cfg.error().message.c_str());
    return 1;
  }
  cfg->user_agent = "kubelet-lite/v0.1";
  sigset_t set = blockTerminationSignals();
  client::RestClient rest(cfg.value());
  if (o.fake_nodes > 0) return runFakeFleet(rest, o, set);

  // The runtime first: without it the node cannot run anything.
  kubelet::ChosenRuntime runtime = kubelet::makeRuntime(o);
  auto identity = kubelet::waitForRuntime(*runtime.service, std::chrono::seconds(60));
  if (!identity) {
    std::fprintf(stderr, "kubelet-lite: %s at %s\n", identity.error().message.c_str(),
                 o.runtime_endpoint.c_str());
    return 1;
  }
  kubelet::MachineResources machine = kubelet::detectMachine(o.root_dir);
  kubelet::Kubelet kl(rest, *runtime.service, kubelet::kubeletConfig(o, machine, identity->name));
  if (runtime.fake) kubelet::exitInitContainersOnStart(*runtime.fake, kl);

  // The kubelet port next: the Node advertises the port it really got (--port=0 picks one).
  auto portOptions = kubelet::kubeletPortOptions(o, clusterCa(cfg.value()));
  if (!portOptions) {
    std::fprintf(stderr, "kubelet-lite: %s\n", portOptions.error().message.c_str());
    return 1;
  }
  if (!portOptions->tls) LOG_WARN("kubelet-lite: no cluster CA known; the kubelet port serves plain HTTP");
  kubelet::LogServer logs(kl, portOptions.value());
  auto port = logs.start();
  if (!port) {
    std::fprintf(stderr, "kubelet-lite: kubelet port: %s\n", port.error().message.c_str());
    return 1;
  }

  kubelet::NodeAgent node(rest, kubelet::nodeConfig(o, port.value(), identity->version), machine);
  while (!node.registerNode())
    if (terminationSignal(set, 1)) return 0;
  while (!kl.start(10000)) LOG_WARN("kubelet-lite: waiting for the API server to list this node's pods");
  node.start();
  LOG_INFO("kubelet-lite: node " << o.node_name << " ready (" << identity->version << ", port "
                                 << port.value() << ")");

  // Runtime health decides the node's Ready condition.
  while (!terminationSignal(set, 5)) {
    kubelet::NodeReadiness r = kubelet::readinessFromRuntime(*runtime.service);
    node.setReady(r.ready, r.reason, r.message);
  }
  LOG_INFO("kubelet-lite: stopping (containers keep running)");
  node.stop();
  logs.stop();
  kl.stop();
  return 0;
}
