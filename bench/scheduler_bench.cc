// Scheduler benchmark (the real API server and shepherd-scheduler on loopback):
// N Node objects, then M pods.
//   phase 1 (throughput): M pods created while no scheduler runs; the scheduler starts
//                         and binds them all: pods bound per second.
//   phase 2 (latency):    the scheduler runs; M more pods arrive at a steady rate R
//                         (below the throughput, so latency is not queueing); time from
//                         each create's response to the binding seen on a watch: p50/p99.
// Usage: scheduler_bench BIN_DIR [nodes=5000] [pods=10000] [create_threads=32] [rate=1000]
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>

#include "bench_util.h"
#include "client/rest_client.h"
#include "common/json.h"

using namespace shepherd;
using namespace shepherd::bench;

namespace {

std::string nodeJson(int i) {
  std::string name = "bench-node-" + std::to_string(i);
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"(","labels":{"kubernetes.io/hostname":")" + name + R"(","zone":"z)" + std::to_string(i % 10) +
         R"("}},"status":{"allocatable":{"cpu":"32","memory":"128Gi","pods":"110"},"capacity":{"cpu":"32","memory":"128Gi","pods":"110"},)"
         R"("conditions":[{"type":"Ready","status":"True"}]}})";
}

std::string podJson(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"("},"spec":{"containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]}})";
}

void parallel(int threads, int total, const std::function<void(int)>& fn) {
  std::atomic<int> next{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      for (int i = next++; i < total; i = next++) fn(i);
    });
  for (auto& t : ts) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s BIN_DIR [nodes] [pods] [create_threads]\n", argv[0]);
    return 2;
  }
  std::string bin = argv[1];
  int nodes = argc > 2 ? std::atoi(argv[2]) : 5000;
  int pods = argc > 3 ? std::atoi(argv[3]) : 10000;
  int threads = argc > 4 ? std::atoi(argv[4]) : 32;
  int rate = argc > 5 ? std::atoi(argv[5]) : 1000;
  char tmpl[] = "/tmp/shepherd-bench-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  Process api({bin + "/shepherd-apiserver", "--data-dir=" + dir + "/data", "--port=0", "--plain-http", "--authorization-mode=AlwaysAllow",
               "--port-file=" + dir + "/port", "--watch-cache-size=100000"},
              dir + "/apiserver.log");
  int port = waitForPortFile(dir + "/port");
  if (!port) {
    std::fprintf(stderr, "API server did not start (see %s/apiserver.log)\n", dir.c_str());
    return 1;
  }
  std::string kubeconfig = writeKubeconfig(dir, port);
  client::ClientConfig cfg;
  cfg.servers = {"http://127.0.0.1:" + std::to_string(port)};
  client::RestClient rest(cfg);

  auto t0 = Clock::now();
  std::atomic<int> failures{0};
  parallel(threads, nodes, [&](int i) {
    if (!rest.post("/api/v1/nodes", nodeJson(i)).ok()) failures++;
  });
  std::printf("created %d nodes in %.1f s (%d failures)\n", nodes, ms(Clock::now() - t0) / 1000,
              failures.load());

  // Watch every pod for its binding.
  std::mutex mu;
  std::unordered_map<std::string, Clock::time_point> created, bound;
  std::atomic<bool> stop{false};
  auto list = rest.get("/api/v1/pods?limit=1");
  std::string rv(json::getStringPath(*list, {"metadata", "resourceVersion"}));
  std::thread watcher([&] {
    while (!stop.load()) {
      auto st = rest.stream(
          "/api/v1/pods?watch=true&resourceVersion=" + rv,
          [&](std::string_view line) {
            auto at = Clock::now();
            json::Document ev;
            ev.Parse(line.data(), line.size());
            const json::Value* o = json::find(ev, "object");
            if (!o) return true;
            rv = json::getStringPath(*o, {"metadata", "resourceVersion"});
            if (!json::getStringPath(*o, {"spec", "nodeName"}).empty()) {
              std::lock_guard<std::mutex> g(mu);
              bound.emplace(std::string(json::getStringPath(*o, {"metadata", "name"})), at);
            }
            return !stop.load();
          },
          &stop, 60);
      (void)st;
    }
  });

  // Phase 1: a backlog of pods, then the scheduler.
  t0 = Clock::now();
  parallel(threads, pods, [&](int i) {
    std::string name = "backlog-" + std::to_string(i);
    if (!rest.post("/api/v1/namespaces/default/pods", podJson(name)).ok()) failures++;
  });
  std::printf("created %d pending pods in %.1f s (%.0f creates/s)\n", pods, ms(Clock::now() - t0) / 1000,
              pods / (ms(Clock::now() - t0) / 1000));
  auto schedStart = Clock::now();
  Process sched({bin + "/shepherd-scheduler", "--kubeconfig=" + kubeconfig, "--leader-elect=false"},
                dir + "/scheduler.log");
  auto allBound = [&](const std::string& prefix, int n) {
    std::lock_guard<std::mutex> g(mu);
    int c = 0;
    for (auto& [k, v] : bound)
      if (k.rfind(prefix, 0) == 0) ++c;
    return c >= n;
  };
  auto deadline = Clock::now() + std::chrono::minutes(5);
  while (!allBound("backlog-", pods) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Clock::time_point firstBind = Clock::time_point::max(), lastBind{};
  {
    std::lock_guard<std::mutex> g(mu);
    for (auto& [k, v] : bound)
      if (k.rfind("backlog-", 0) == 0) {
        firstBind = std::min(firstBind, v);
        lastBind = std::max(lastBind, v);
      }
  }
  int boundBacklog = 0;
  {
    std::lock_guard<std::mutex> g(mu);
    for (auto& [k, v] : bound)
      if (k.rfind("backlog-", 0) == 0) ++boundBacklog;
  }
  double backlogSeconds = ms(lastBind - firstBind) / 1000;
  std::printf(
      "phase 1: %d/%d pods bound; first binding %.2f s after the scheduler started; %.0f pods/s "
      "(first to last binding, %.2f s)\n",
      boundBacklog, pods, ms(firstBind - schedStart) / 1000, boundBacklog / std::max(backlogSeconds, 1e-9),
      backlogSeconds);

  // Phase 2: pods arrive while the scheduler runs.
  int phase2 = pods;
  auto p2start = Clock::now();
  parallel(threads, phase2, [&](int i) {
    // Pace: pod i is created at p2start + i/rate.
    std::this_thread::sleep_until(p2start +
                                  std::chrono::microseconds(static_cast<int64_t>(i) * 1000000 / rate));
    std::string name = "live-" + std::to_string(i);
    auto r = rest.post("/api/v1/namespaces/default/pods", podJson(name));
    auto at = Clock::now();
    if (!r.ok()) {
      failures++;
      return;
    }
    std::lock_guard<std::mutex> g(mu);
    created.emplace(name, at);
  });
  auto createdAll = Clock::now();
  deadline = Clock::now() + std::chrono::minutes(5);
  while (!allBound("live-", phase2) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::vector<double> lat;
  Clock::time_point lastLive{};
  {
    std::lock_guard<std::mutex> g(mu);
    for (auto& [k, c] : created) {
      auto b = bound.find(k);
      if (b == bound.end()) continue;
      // The watch can report the binding before the creating thread recorded its response.
      lat.push_back(std::max(0.0, ms(b->second - c)));
      lastLive = std::max(lastLive, b->second);
    }
  }
  double p2seconds = ms(lastLive - p2start) / 1000;
  std::printf(
      "phase 2: %zu/%d pods bound; created at %.0f pods/s (target %d); bound at %.0f pods/s; "
      "creation->binding "
      "p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
      lat.size(), phase2, phase2 / (ms(createdAll - p2start) / 1000), rate,
      lat.size() / std::max(p2seconds, 1e-9), percentile(lat, 50), percentile(lat, 99), percentile(lat, 100));
  std::printf("scheduler: cpu %.1f s, rss %ld MiB; api server: cpu %.1f s, rss %ld MiB; failures %d\n",
              cpuSeconds(sched.pid()), rssKb(sched.pid()) / 1024, cpuSeconds(api.pid()),
              rssKb(api.pid()) / 1024, failures.load());
  std::printf(
      "SUMMARY scheduler: %d nodes, %d pods: backlog %.0f pods/s; at %d pods/s creation->binding p50 %.1f ms "
      "p99 %.1f ms\n",
      nodes, pods, boundBacklog / std::max(backlogSeconds, 1e-9), rate, percentile(lat, 50),
      percentile(lat, 99));
  stop = true;
  (void)rest.post("/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"stop-watch"}})");
  watcher.join();
  sched.stop();
  api.stop();
  std::system(("rm -rf " + dir).c_str());
  return 0;
}
