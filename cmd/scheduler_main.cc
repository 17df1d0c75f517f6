// shepherd-scheduler: binds pending pods to nodes through the API server only.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "client/leader_election.h"
#include "common/flags.h"
#include "common/ids.h"
#include "common/log.h"
#include "common/signals.h"
#include "controllers/scheduler/scheduler.h"
#include "handlers/http/server.h"

using namespace shepherd;

int main(int argc, char** argv) {
  Flags flags;
  flags.define("kubeconfig", "",
               "Path to a kubeconfig with the API server's address and credentials (required).");
  flags.define("scheduler-name", "default-scheduler",
               "Pods whose spec.schedulerName equals this are scheduled here.");
  flags.define("leader-elect", "true", "Run only while holding the leader lease (several replicas may run).");
  flags.define("leader-elect-lease-duration", "15", "Seconds a lease is valid without renewal.");
  flags.define("leader-elect-renew-deadline", "10",
               "Seconds the leader keeps trying to renew before stepping down.");
  flags.define("leader-elect-retry-period", "2", "Seconds between acquire and renew attempts.");
  flags.define("leader-elect-resource-name", "",
               "Lease name (default: kube-scheduler, or the scheduler name).");
  flags.define("leader-elect-resource-namespace", "kube-system", "Namespace of the lease.");
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
    http::ServerOptions ho;
    ho.address = flags.get("bind-address");
    ho.port = flags.getInt("port");
    ho.worker_threads = 2;
    ho.io_threads = 1;
    server = std::make_unique<http::Server>(
        ho, [&sched](http::Request& req, std::shared_ptr<http::Responder> resp) {
          http::Response r;
          r.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
          if (req.path == "/metrics") {
            r.body = sched.metricsText();
          } else if (req.path == "/healthz" || req.path == "/livez" || req.path == "/readyz") {
            r.body = "ok";
          } else {
            r.status = 404;
            r.body = "not found";
          }
          resp->send(std::move(r));
        });
    auto port = server->start();
    if (!port) {
      std::fprintf(stderr, "shepherd-scheduler: %s\n", port.error().message.c_str());
      return 1;
    }
  }

  // Caches fill while we wait to lead, so a new leader starts at once.
  while (!sched.startInformers(10000))
    LOG_WARN("scheduler: waiting for the API server to sync pods and nodes");
  LOG_INFO("shepherd-scheduler " << so.scheduler_name << " (" << identity << ") has synced");

  std::unique_ptr<client::LeaderElector> elector;
  std::atomic<bool> lost{false};
  std::atomic<bool> exiting{false};
  if (flags.getBool("leader-elect")) {
    client::LeaderElectionConfig lc;
    lc.ns = flags.get("leader-elect-resource-namespace");
    lc.name = flags.get("leader-elect-resource-name");
    if (lc.name.empty())
      lc.name = so.scheduler_name == "default-scheduler" ? "kube-scheduler" : so.scheduler_name;
    lc.identity = identity;
    lc.lease_duration = std::chrono::seconds(flags.getInt("leader-elect-lease-duration"));
    lc.renew_deadline = std::chrono::seconds(flags.getInt("leader-elect-renew-deadline"));
    lc.retry_period = std::chrono::seconds(flags.getInt("leader-elect-retry-period"));
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
