// Cluster simulation (KWOK's shape) on loopback: the API server, shepherd-scheduler,
// shepherd-controller-manager and one kubelet-lite running N fake nodes (--fake-nodes;
// every node renews its Lease every 10 s). One Deployment of P replicas is created;
// the benchmark reports the time until all P pods are Running and ready (the
// Deployment's readyReplicas/availableReplicas), with progress every 10 s, then each
// process's CPU share and RSS over a steady-state window.
// Usage: cluster_sim_bench BIN_DIR [nodes=1000] [pods=100000] [steady_seconds=30]
#include <cstdlib>
#include <fstream>
#include <map>

#include "bench/servers.h"
#include "client/rest_client.h"
#include "common/json.h"

using namespace shepherd;
using namespace shepherd::bench;

namespace {

std::string deploymentJson(int replicas) {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"sim","namespace":"sim"},)"
         R"("spec":{"replicas":)" +
         std::to_string(replicas) +
         R"(,"selector":{"matchLabels":{"app":"sim"}},)"
         R"("template":{"metadata":{"labels":{"app":"sim"}},"spec":{"containers":[{"name":"c",)"
         R"("image":"registry.k8s.io/pause:3.9","resources":{"requests":{"cpu":"10m","memory":"16Mi"}}}]}}}})";
}

int64_t statusInt(const json::Value& obj, const char* field) {
  const json::Value* st = json::find(obj, "status");
  return st ? json::getInt(*st, field).value_or(0) : 0;
}

std::string tailOf(const std::string& path, size_t bytes) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s.size() > bytes ? s.substr(s.size() - bytes) : s;
}

struct Watched {
  std::string name;
  pid_t pid;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s BIN_DIR [nodes] [pods] [steady_seconds]\n", argv[0]);
    return 2;
  }
  std::string bin = argv[1];
  int nodes = argc > 2 ? std::atoi(argv[2]) : 1000;
  int pods = argc > 3 ? std::atoi(argv[3]) : 100000;
  int steady = argc > 4 ? std::atoi(argv[4]) : 30;
  TempDir tmp;
  const std::string& dir = tmp.path();
  ApiServer api(bin, dir, {"--watch-cache-size=" + std::to_string(std::max(10000, pods * 2))});
  if (!api.ok()) {
    std::fprintf(stderr, "API server did not start (see %s/apiserver.log)\n", dir.c_str());
    return 1;
  }
  std::string kubeconfig = writeKubeconfig(dir, api.port());
  client::ClientConfig cfg;
  cfg.servers = {"http://127.0.0.1:" + std::to_string(api.port())};
  client::RestClient rest(cfg);

  auto t0 = Clock::now();
  Process kubelet({bin + "/kubelet-lite", "--kubeconfig=" + kubeconfig, "--runtime=fake",
                   "--fake-nodes=" + std::to_string(nodes), "--hostname-override=sim-node",
                   "--root-dir=" + dir + "/kubelet", "--cpu=32", "--memory=256Gi",
                   "--max-pods=" + std::to_string(std::max(110, 2 * pods / std::max(1, nodes))),
                   "--fake-startup-ms=100", "--resolv-conf="},
                  dir + "/kubelet.log");
  auto readyNodes = [&] {
    auto list = rest.get("/api/v1/nodes");
    int n = 0;
    if (!list) return n;
    if (const json::Value* items = json::find(*list, "items"); items && items->IsArray())
      for (auto& node : items->GetArray())
        if (const json::Value* conds = json::findPath(node, {"status", "conditions"});
            conds && conds->IsArray())
          for (auto& c : conds->GetArray())
            if (json::getString(c, "type") == "Ready" && json::getString(c, "status") == "True") ++n;
    return n;
  };
  auto deadline = Clock::now() + std::chrono::minutes(2);
  while (readyNodes() < nodes && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  int ready = readyNodes();
  std::printf("nodes: %d of %d Ready after %.1f s\n", ready, nodes, ms(Clock::now() - t0) / 1000);
  if (ready < nodes) return 1;

  Process sched({bin + "/shepherd-scheduler", "--kubeconfig=" + kubeconfig, "--leader-elect=false"},
                dir + "/scheduler.log");
  Process cm({bin + "/shepherd-controller-manager", "--kubeconfig=" + kubeconfig, "--leader-elect=false",
              "--controllers=*,-root-ca-cert-publisher"},
             dir + "/controller-manager.log");
  std::vector<Watched> procs = {{"apiserver", api.pid()},
                                {"scheduler", sched.pid()},
                                {"controller-manager", cm.pid()},
                                {"kubelet-lite (fake nodes)", kubelet.pid()}};
  if (!api.createNamespace("sim")) return 1;
  std::map<std::string, double> cpuStart;
  for (auto& p : procs) cpuStart[p.name] = cpuSeconds(p.pid);

  t0 = Clock::now();
  auto created = rest.post("/apis/apps/v1/namespaces/sim/deployments", deploymentJson(pods));
  if (!created) {
    std::fprintf(stderr, "deployment not created: %s\n", created.error().message.c_str());
    return 1;
  }
  // Converged when the Deployment reports every replica ready and available.
  deadline = Clock::now() + std::chrono::minutes(15);
  auto nextReport = Clock::now();
  double converged = -1;
  int64_t lastReady = -1, lastReplicas = -1;
  auto lastProgress = Clock::now();
  while (Clock::now() < deadline) {
    if (Clock::now() - lastProgress > std::chrono::seconds(60)) {
      std::printf("no progress for 60 s; the processes' logs end with:\n");
      for (const char* log : {"apiserver.log", "scheduler.log", "controller-manager.log", "kubelet.log"})
        std::printf("--- %s\n%s\n", log, tailOf(dir + "/" + log, 2000).c_str());
      break;
    }
    auto d = rest.get("/apis/apps/v1/namespaces/sim/deployments/sim");
    if (d) {
      int64_t replicas = statusInt(*d, "replicas"), readyR = statusInt(*d, "readyReplicas"),
              available = statusInt(*d, "availableReplicas");
      if (readyR != lastReady || replicas != lastReplicas) lastProgress = Clock::now();
      lastReady = readyR;
      lastReplicas = replicas;
      if (Clock::now() >= nextReport) {
        std::printf("  %5.0f s: replicas %lld, ready %lld, available %lld\n", ms(Clock::now() - t0) / 1000,
                    static_cast<long long>(replicas), static_cast<long long>(readyR),
                    static_cast<long long>(available));
        std::fflush(stdout);
        nextReport += std::chrono::seconds(10);
      }
      if (readyR == pods && available == pods) {
        converged = ms(Clock::now() - t0) / 1000;
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  double convergeSeconds = ms(Clock::now() - t0) / 1000;
  std::printf("converge: %d pods %s in %.1f s (%lld ready)\n", pods,
              converged >= 0 ? "Running and ready" : "NOT converged", convergeSeconds,
              static_cast<long long>(lastReady));
  for (auto& p : procs)
    std::printf("  during convergence: %-26s CPU %6.1f s (%.0f%% of one core)\n", p.name.c_str(),
                cpuSeconds(p.pid) - cpuStart[p.name],
                100 * (cpuSeconds(p.pid) - cpuStart[p.name]) / convergeSeconds);
  // Cross-check against the pods themselves: none may be anything but Running.
  auto notRunning = rest.get("/api/v1/namespaces/sim/pods?fieldSelector=status.phase%21%3DRunning&limit=10");
  size_t pending = 0;
  if (notRunning)
    if (const json::Value* items = json::find(*notRunning, "items"); items && items->IsArray())
      pending = items->Size();
  std::printf("pods not Running in namespace sim: %zu%s\n", pending, notRunning ? "" : " (LIST failed)");

  // Steady state: leases renew (N/10 per second), nothing else changes.
  for (auto& p : procs) cpuStart[p.name] = cpuSeconds(p.pid);
  std::this_thread::sleep_for(std::chrono::seconds(steady));
  double apiCpu = 0;
  long apiRss = 0;
  for (auto& p : procs) {
    double share = 100 * (cpuSeconds(p.pid) - cpuStart[p.name]) / steady;
    long rss = rssKb(p.pid);
    if (p.name == "apiserver") apiCpu = share, apiRss = rss;
    std::printf("  steady state (%d s): %-26s CPU %5.1f%% of one core, RSS %6.0f MiB\n", steady,
                p.name.c_str(), share, static_cast<double>(rss) / 1024);
  }
  std::printf(
      "SUMMARY cluster_sim nodes=%d pods=%d converged=%s seconds=%.1f not_running=%zu apiserver_cpu=%.1f%% "
      "apiserver_rss_mib=%.0f\n",
      nodes, pods, converged >= 0 ? "yes" : "no", convergeSeconds, pending, apiCpu,
      static_cast<double>(apiRss) / 1024);
  return converged >= 0 && pending == 0 ? 0 : 1;
}
