// shepherd-scheduler: binds pending pods to nodes through the API server only.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "client/kubeconfig.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "common/flags.h"
#include "common/ids.h"
#include "common/log.h"
#include "common/signals.h"
#include "net/http/health_endpoint.h"
#include "scheduler/scheduler.h"

using namespace shepherd;

int main(int argc, char** argv) {
  Flags flags;
  flags.define("kubeconfig", "",
               "Path to a kubeconfig with the API server's address and credentials (required).");
  flags.define("scheduler-name", "default-scheduler",
               "Pods whose spec.schedulerName equals this are scheduled here.");
  client::defineLeaderElectionFlags(flags, "");  // default: kube-scheduler, or the scheduler name
  flags.define("bind-address", "127.0.0.1", "Address of the health and metrics endpoint.");
  flags.define("port", "0", "Port of /healthz and /metrics (0: disabled).");
  flags.define("parallelism", "16", "Concurrent bind requests.");
  flags.define("percentage-of-nodes-to-score", "0",
               "Feasible nodes to find before scoring, in percent (0: adaptive).");
  flags.define("v", "0", "Log verbosity.");
  flags.define("help", "false", "Show this help.", true);
  if (int rc = flags.parseMain(argc, argv, "shepherd-scheduler",
                               "shepherd-scheduler --kubeconfig FILE [flags]", {"kubeconfig"});
      rc >= 0)
    return rc;
  auto cfg = client::loadKubeconfig(flags.get("kubeconfig"));
  if (!cfg) {
    std::fprintf(stderr, "shepherd-scheduler: %s\n", cfg.error().message.c_str());
    return 1;
  }
  cfg->user_agent = "shepherd-scheduler/v0.1";
  sigset_t set = blockTerminationSignals();

  client::RestClient rest(cfg.value());
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  std::string identity = std::string(host) + "_" + ids::uuid4();
  scheduler::SchedulerOptions so;
  so.scheduler_name = flags.get("scheduler-name");
  so.instance = so.scheduler_name + "-" + host;
  so.bind_workers = std::max(1, flags.getInt("parallelism"));
  so.percentage_of_nodes_to_score = flags.getInt("percentage-of-nodes-to-score");
  scheduler::Scheduler sched(rest, so);

  std::unique_ptr<http::Server> server;
  if (flags.getInt("port") > 0) {
    auto started = http::startHealthEndpoint(flags.get("bind-address"), flags.getInt("port"),
                                             [&sched] { return sched.metricsText(); });
    if (!started) {
      std::fprintf(stderr, "shepherd-scheduler: %s\n", started.error().message.c_str());
      return 1;
    }
    server = std::move(started.value());
  }

  // Caches fill while we wait to lead, so a new leader starts at once.
  while (!sched.startInformers(10000))
    LOG_WARN("scheduler: waiting for the API server to sync pods and nodes");
  LOG_INFO("shepherd-scheduler " << so.scheduler_name << " (" << identity << ") has synced");

  std::unique_ptr<client::LeaderElector> elector;
  std::atomic<bool> lost{false};
  std::atomic<bool> exiting{false};
  if (flags.getBool("leader-elect")) {
    client::LeaderElectionConfig lc = client::leaderElectionConfigFromFlags(flags);
    if (lc.name.empty())
      lc.name = so.scheduler_name == "default-scheduler" ? "kube-scheduler" : so.scheduler_name;
    lc.identity = identity;
    lc.on_started_leading = [&sched] { sched.run(); };
    lc.on_stopped_leading = [&lost, &exiting] {
      if (exiting.load()) return;
      lost = true;
      kill(getpid(), SIGTERM);  // like kube-scheduler: a former leader exits and restarts clean
    };
    elector = std::make_unique<client::LeaderElector>(rest, lc);
    elector->start();
  } else {
    sched.run();
  }
  int sig = 0;
  sigwait(&set, &sig);
  exiting = true;
  LOG_INFO("shepherd-scheduler stopping" << (lost.load() ? " (leadership lost)" : ""));
  sched.stop();
  if (elector) elector->stop();  // releases the lease so another replica takes over at once
  sched.stopInformers();
  if (server) server->stop(1);
  return lost.load() ? 1 : 0;
}
