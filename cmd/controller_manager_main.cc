// shepherd-controller-manager: the level-triggered controllers that keep the cluster's
// objects consistent (garbage collection, namespace lifecycle, node lifecycle and taint
// eviction, pod garbage collection, Deployments, ReplicaSets, Endpoints, EndpointSlices,
// ServiceAccounts, the root CA ConfigMap), run while this process holds the
// kube-controller-manager lease. The controllers are described in controllers/app.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>

#include "client/kubeconfig.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "client/shared_informers.h"
#include "common/flags.h"
#include "common/ids.h"
#include "common/log.h"
#include "common/signals.h"
#include "controllers/app/controller_descriptors.h"
#include "net/http/health_endpoint.h"
#include "pki/certificate_authority.h"

using namespace shepherd;

namespace {

int fail(const ApiError& e) {
  std::fprintf(stderr, "shepherd-controller-manager: %s\n", e.message.c_str());
  return e.code == 400 ? 2 : 1;
}

// The CA root-ca-cert-publisher publishes (--root-ca-file, made when missing).
Result<std::string> rootCa(const Flags& flags) {
  std::string file = flags.get("root-ca-file");
  if (file.empty()) return ApiError::badRequest("root-ca-cert-publisher needs --root-ca-file");
  auto ca = pki::ensureCertificateAuthority(file, file + ".key", "shepherd-ca");
  if (!ca) return ApiError::internal(ca.error().message);
  return ca.value();
}

// Makes every enabled controller, in the descriptors' order.
Result<std::vector<controllers::RunningController>> makeControllers(const std::set<std::string>& enabled,
                                                                    controllers::ControllerContext& ctx) {
  std::vector<controllers::RunningController> made;
  for (const auto& d : controllers::controllerDescriptors()) {
    if (!enabled.count(d.name)) continue;
    auto r = d.make(ctx);
    if (!r) return r.error();
    if (!r->controller) break;  // asked to stop
    made.push_back(std::move(*r));
  }
  return made;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  flags.define("kubeconfig", "",
               "Path to a kubeconfig with the API server's address and credentials (required).");
  controllers::defineControllerFlags(flags);
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
  if (!cfg) return fail(ApiError::internal(cfg.error().message));
  cfg->user_agent = "shepherd-controller-manager/v0.1";
  std::set<std::string> enabled = controllers::enabledControllers(flags.get("controllers"));
  std::set<std::string> known;
  for (const auto& d : controllers::controllerDescriptors()) known.insert(d.name);
  for (auto& c : enabled)
    if (!known.count(c)) return fail(ApiError::badRequest("unknown controller " + c));
  std::string caPem;
  if (enabled.count("root-ca-cert-publisher")) {
    auto ca = rootCa(flags);
    if (!ca) return fail(ca.error());
    caPem = *ca;
  }
  sigset_t set = blockTerminationSignals();

  client::RestClient rest(cfg.value());
  client::SharedInformers informers(rest);
  bool stopped = false;  // asked to stop while the controllers were being made
  controllers::ControllerContext ctx{rest, informers, flags, caPem, [&set, &stopped](std::chrono::seconds d) {
                                       timespec t{static_cast<time_t>(d.count()), 0};
                                       stopped = sigtimedwait(&set, nullptr, &t) > 0;
                                       return !stopped;
                                     }};
  auto running = makeControllers(enabled, ctx);
  if (!running) return fail(running.error());
  if (stopped) return 0;
  std::unique_ptr<http::Server> server;
  if (flags.getInt("port") > 0) {
    auto started = http::startHealthEndpoint(flags.get("bind-address"), flags.getInt("port"));
    if (!started) return fail(ApiError::internal(started.error().message));
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

  std::atomic<bool> lost{false}, exiting{false};
  auto startControllers = [&running] {
    for (auto& r : *running) {
      r.controller->run(r.workers);
      LOG_INFO("controller-manager: started " << r.controller->name() << " (" << r.workers << " workers)");
    }
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
  for (auto& r : *running) r.controller->stop();
  if (elector) elector->stop();
  informers.stop();
  if (server) server->stop(1);
  return lost.load() ? 1 : 0;
}
