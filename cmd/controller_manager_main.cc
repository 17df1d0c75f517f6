// shepherd-controller-manager: the level-triggered controllers that keep the cluster's
// objects consistent (garbage collection, namespace lifecycle, node lifecycle and taint
// eviction, Deployments, ReplicaSets, Endpoints, ServiceAccounts, the root CA ConfigMap),
// run while this process holds the kube-controller-manager lease.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "client/discovery.h"
#include "client/event_recorder.h"
#include "client/kubeconfig.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "client/shared_informers.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/ids.h"
#include "common/log.h"
#include "common/signals.h"
#include "controllers/deployment/deployment_controller.h"
#include "controllers/endpoint/endpoints_controller.h"
#include "controllers/endpointslice/endpointslice_controller.h"
#include "controllers/garbagecollector/garbage_collector.h"
#include "controllers/namespace/namespace_controller.h"
#include "controllers/nodelifecycle/node_lifecycle_controller.h"
#include "controllers/podgc/pod_gc_controller.h"
#include "controllers/replicaset/replica_set_controller.h"
#include "controllers/serviceaccount/root_ca_publisher.h"
#include "controllers/serviceaccount/serviceaccounts_controller.h"
#include "net/http/health_endpoint.h"
#include "pki/certificate_authority.h"

using namespace shepherd;

namespace {

// --controllers as upstream: "*" enables the default set, "name" adds, "-name" removes.
std::set<std::string> enabledControllers(const std::string& spec, const std::set<std::string>& all) {
  std::set<std::string> on;
  std::stringstream ss(spec);
  std::string item;
  std::vector<std::string> items;
  while (std::getline(ss, item, ','))
    if (!item.empty()) items.push_back(item);
  for (auto& i : items)
    if (i == "*") on = all;
  for (auto& i : items) {
    if (i == "*") continue;
    if (i[0] == '-')
      on.erase(i.substr(1));
    else
      on.insert(i);
  }
  return on;
}

// Every controller this process can run, by its upstream name.
const std::vector<std::string> kControllers = {
    "deployment",    "endpoint", "endpointslice", "garbagecollector", "namespace",
    "nodelifecycle", "podgc",    "replicaset",    "serviceaccount",   "root-ca-cert-publisher"};

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  flags.define("kubeconfig", "",
               "Path to a kubeconfig with the API server's address and credentials (required).");
  std::string names;
  for (auto& c : kControllers) names += (names.empty() ? "" : ", ") + c;
  flags.define(
      "controllers", "*",
      "Controllers to run: '*' for all (" + names + "), 'name' to add one, '-name' to leave one out.");
  flags.define("node-monitor-period", "5s", "How often every node's health is checked.");
  flags.define("node-monitor-grace-period", "40s",
               "How long a node may go without a status heartbeat or Lease renewal before it is Unknown.");
  flags.define("concurrent-gc-syncs", "5", "Objects the garbage collector checks at once.");
  flags.define("terminated-pod-gc-threshold", "12500",
               "Terminated pods kept before the pod garbage collector deletes the oldest (<= 0: no limit).");
  flags.define("pod-gc-check-period", "20s",
               "How often the pod garbage collector looks (Shepherd; upstream: 20s).");
  flags.define("pod-gc-quarantine", "40s",
               "How long a pod's node must be missing before the pod garbage collector confirms it gone "
               "(Shepherd; upstream: 40s).");
  flags.define("concurrent-replicaset-syncs", "5", "ReplicaSets synced at once.");
  flags.define("concurrent-deployment-syncs", "5", "Deployments synced at once.");
  flags.define("concurrent-endpoint-syncs", "5", "Services whose Endpoints are synced at once.");
  flags.define("concurrent-service-endpoint-syncs", "5", "Services whose EndpointSlices are synced at once.");
  flags.define("max-endpoints-per-slice", "100", "Most endpoints one EndpointSlice holds (1 to 1000).");
  flags.define("root-ca-file", "",
               "The cluster CA certificate published as ConfigMap kube-root-ca.crt in every namespace; when "
               "neither it nor FILE.key exists, a placeholder CA is generated there.");
  flags.define("concurrent-namespace-syncs", "10", "Namespaces emptied at once.");
  flags.define("concurrent-serviceaccount-syncs", "5",
               "Namespaces checked for their ServiceAccount at once.");
  client::defineLeaderElectionFlags(flags, "kube-controller-manager");
  flags.define("bind-address", "127.0.0.1", "Address of the health endpoint.");
  flags.define("port", "0", "Port of /healthz (0: disabled).");
  flags.define("v", "0", "Log verbosity.");
  flags.define("help", "false", "Show this help.", true);
  if (int rc = flags.parseMain(argc, argv, "shepherd-controller-manager",
                               "shepherd-controller-manager --kubeconfig FILE [flags]", {"kubeconfig"});
      rc >= 0)
    return rc;
  auto cfg = client::loadKubeconfig(flags.get("kubeconfig"));
  if (!cfg) {
    std::fprintf(stderr, "shepherd-controller-manager: %s\n", cfg.error().message.c_str());
    return 1;
  }
  cfg->user_agent = "shepherd-controller-manager/v0.1";
  const std::set<std::string> all(kControllers.begin(), kControllers.end());
  std::set<std::string> enabled = enabledControllers(flags.get("controllers"), all);
  for (auto& c : enabled)
    if (!all.count(c)) {
      std::fprintf(stderr, "shepherd-controller-manager: unknown controller %s\n", c.c_str());
      return 2;
    }
  std::string caPem;
  if (enabled.count("root-ca-cert-publisher")) {
    std::string caFile = flags.get("root-ca-file");
    if (caFile.empty()) {
      std::fprintf(stderr, "shepherd-controller-manager: root-ca-cert-publisher needs --root-ca-file\n");
      return 2;
    }
    auto ca = pki::ensureCertificateAuthority(caFile, caFile + ".key", "shepherd-ca");
    if (!ca) {
      std::fprintf(stderr, "shepherd-controller-manager: %s\n", ca.error().message.c_str());
      return 1;
    }
    caPem = ca.value();
  }
  sigset_t set = blockTerminationSignals();

  client::RestClient rest(cfg.value());
  client::SharedInformers informers(rest);
  std::vector<std::pair<std::unique_ptr<controllers::Controller>, int>> running;
  if (enabled.count("garbagecollector")) {
    // The collector watches every resource the server serves: discover them first.
    client::DiscoveryResult found = client::discoverPreferredResources(rest);
    while (!found.failures.empty()) {
      LOG_WARN("controller-manager: discovery failed (" << found.failures.front() << "); retrying");
      timespec second{1, 0};
      if (sigtimedwait(&set, nullptr, &second) > 0) return 0;  // asked to stop meanwhile
      found = client::discoverPreferredResources(rest);
    }
    auto gc = std::make_unique<controllers::GarbageCollector>(rest, informers, found.resources);
    LOG_INFO("controller-manager: garbage collector monitors " << gc->monitored() << " resources");
    running.emplace_back(std::move(gc), std::max(1, flags.getInt("concurrent-gc-syncs")));
  }
  client::EventRecorder replicasetEvents(rest, "replicaset-controller");
  if (enabled.count("replicaset"))
    running.emplace_back(
        std::make_unique<controllers::ReplicaSetController>(rest, informers, replicasetEvents),
        std::max(1, flags.getInt("concurrent-replicaset-syncs")));
  client::EventRecorder deploymentEvents(rest, "deployment-controller");
  if (enabled.count("deployment"))
    running.emplace_back(
        std::make_unique<controllers::DeploymentController>(rest, informers, deploymentEvents),
        std::max(1, flags.getInt("concurrent-deployment-syncs")));
  if (enabled.count("endpoint"))
    running.emplace_back(std::make_unique<controllers::EndpointsController>(rest, informers),
                         std::max(1, flags.getInt("concurrent-endpoint-syncs")));
  if (enabled.count("endpointslice")) {
    int per_slice = flags.getInt("max-endpoints-per-slice");
    if (per_slice < 1 || per_slice > 1000) {
      std::fprintf(stderr,
                   "shepherd-controller-manager: --max-endpoints-per-slice must be between 1 and 1000\n");
      return 2;
    }
    running.emplace_back(std::make_unique<controllers::EndpointSliceController>(
                             rest, informers, static_cast<size_t>(per_slice)),
                         std::max(1, flags.getInt("concurrent-service-endpoint-syncs")));
  }
  client::EventRecorder nodeEvents(rest, "node-controller");
  if (enabled.count("nodelifecycle")) {
    controllers::NodeLifecycleOptions no;
    auto period = clock::parseDuration(flags.get("node-monitor-period"));
    auto grace = clock::parseDuration(flags.get("node-monitor-grace-period"));
    if (!period || !grace) {
      std::fprintf(stderr,
                   "shepherd-controller-manager: bad --node-monitor-period or --node-monitor-grace-period\n");
      return 2;
    }
    no.monitor_period = *period;
    no.grace_period = *grace;
    running.emplace_back(
        std::make_unique<controllers::NodeLifecycleController>(rest, informers, nodeEvents, no), 2);
  }
  if (enabled.count("podgc")) {
    controllers::PodGcOptions po;
    po.terminated_threshold = flags.getInt("terminated-pod-gc-threshold");
    auto period = clock::parseDuration(flags.get("pod-gc-check-period"));
    auto quarantine = clock::parseDuration(flags.get("pod-gc-quarantine"));
    if (!period || !quarantine || period->count() <= 0) {
      std::fprintf(stderr, "shepherd-controller-manager: bad --pod-gc-check-period or --pod-gc-quarantine\n");
      return 2;
    }
    po.check_period = *period;
    po.quarantine = *quarantine;
    running.emplace_back(std::make_unique<controllers::PodGcController>(rest, informers, po), 1);
  }
  if (enabled.count("namespace"))
    running.emplace_back(std::make_unique<controllers::NamespaceController>(rest, informers),
                         std::max(1, flags.getInt("concurrent-namespace-syncs")));
  if (enabled.count("serviceaccount"))
    running.emplace_back(std::make_unique<controllers::ServiceAccountsController>(rest, informers),
                         std::max(1, flags.getInt("concurrent-serviceaccount-syncs")));
  if (enabled.count("root-ca-cert-publisher"))
    running.emplace_back(std::make_unique<controllers::RootCaPublisher>(rest, informers, caPem), 1);

  std::unique_ptr<http::Server> server;
  if (flags.getInt("port") > 0) {
    auto started = http::startHealthEndpoint(flags.get("bind-address"), flags.getInt("port"));
    if (!started) {
      std::fprintf(stderr, "shepherd-controller-manager: %s\n", started.error().message.c_str());
      return 1;
    }
    server = std::move(started.value());
  }

  // Caches fill while we wait to lead, so a new leader starts at once.
  informers.start();
  while (!informers.waitForSync(10000))
    LOG_WARN("controller-manager: waiting for the API server to sync caches");
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  std::string identity = std::string(host) + "_" + ids::uuid4();
  LOG_INFO("shepherd-controller-manager (" << identity << ") has synced");

  std::atomic<bool> started{false}, lost{false}, exiting{false};
  auto startControllers = [&] {
    for (auto& [c, workers] : running) {
      c->run(workers);
      LOG_INFO("controller-manager: started " << c->name() << " (" << workers << " workers)");
    }
    started = true;
  };
  std::unique_ptr<client::LeaderElector> elector;
  if (flags.getBool("leader-elect")) {
    client::LeaderElectionConfig lc = client::leaderElectionConfigFromFlags(flags);
    lc.identity = identity;
    lc.on_started_leading = startControllers;
    lc.on_stopped_leading = [&lost, &exiting] {
      if (exiting.load()) return;
      lost = true;
      kill(getpid(), SIGTERM);  // as kube-controller-manager: a former leader exits and restarts clean
    };
    elector = std::make_unique<client::LeaderElector>(rest, lc);
    elector->start();
  } else {
    startControllers();
  }
  int sig = 0;
  sigwait(&set, &sig);
  exiting = true;
  LOG_INFO("shepherd-controller-manager stopping" << (lost.load() ? " (leadership lost)" : ""));
  for (auto& [c, workers] : running) c->stop();
  if (elector) elector->stop();
  informers.stop();
  if (server) server->stop(1);
  return lost.load() ? 1 : 0;
}
