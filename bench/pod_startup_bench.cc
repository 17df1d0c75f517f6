// Pod start-up benchmark on a real node: the API server, shepherd-scheduler, a private
// containerd (scripts/containerd.sh) and kubelet-lite, all on this machine.
//   phase 1: one pod at a time (N times): time from the create request to the pod seen
//            Running on a watch; the pod is deleted and gone before the next one.
//   phase 2: N pods created at once (N threads): time from the first create to each pod
//            seen Running, and until all are.
// For each pod it also reports when the watch saw it bound (spec.nodeName set).
// Usage: pod_startup_bench BIN_DIR CONTAINERD_SH [pods=50]
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "bench_util.h"
#include "client/rest_client.h"
#include "common/json.h"

using namespace shepherd;
using namespace shepherd::bench;

namespace {

std::string podJson(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"("},"spec":{"terminationGracePeriodSeconds":2,"containers":[{"name":"c","image":"busybox",)"
         R"("command":["sh","-c","trap 'exit 0' TERM; sleep 3600 & wait"]}]}})";
}

// Times at which the watch saw each pod bound, Running, and deleted.
class PodWatch {
 public:
  void onEvent(std::string_view line) {
    json::Document ev;
    ev.Parse(line.data(), line.size());
    if (!ev.IsObject()) return;
    const json::Value* obj = json::find(ev, "object");
    if (!obj) return;
    std::string name(json::getStringPath(*obj, {"metadata", "name"}));
    auto now = Clock::now();
    std::lock_guard<std::mutex> g(mu_);
    if (json::getString(ev, "type") == "DELETED") {
      deleted_.insert(name);
    } else {
      if (!json::getStringPath(*obj, {"spec", "nodeName"}).empty()) bound_.emplace(name, now);
      if (json::getStringPath(*obj, {"status", "phase"}) == "Running") running_.emplace(name, now);
    }
    cv_.notify_all();
  }
  bool waitRunning(const std::string& name, int timeout_ms) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] { return running_.count(name) > 0; });
  }
  bool waitDeleted(const std::string& name, int timeout_ms) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] { return deleted_.count(name) > 0; });
  }
  Clock::time_point running(const std::string& n) {
    std::lock_guard<std::mutex> g(mu_);
    return running_.at(n);
  }
  Clock::time_point bound(const std::string& n) {
    std::lock_guard<std::mutex> g(mu_);
    return bound_.count(n) ? bound_.at(n) : Clock::time_point{};
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Clock::time_point> bound_, running_;
  std::set<std::string> deleted_;
};

void report(const char* what, const std::vector<double>& v) {
  std::printf("%s: median %.0f ms, p99 %.0f ms, min %.0f ms, max %.0f ms (n=%zu)\n", what, percentile(v, 50),
              percentile(v, 99), percentile(v, 0), percentile(v, 100), v.size());
}

int run(const std::string& bin, const std::string& dir, int pods) {
  Process api({bin + "/shepherd-apiserver", "--data-dir=" + dir + "/data", "--port=0", "--plain-http", "--authorization-mode=AlwaysAllow",
               "--port-file=" + dir + "/port"},
              dir + "/apiserver.log");
  int port = waitForPortFile(dir + "/port");
  if (!port) {
    std::fprintf(stderr, "API server did not start (see %s/apiserver.log)\n", dir.c_str());
    return 1;
  }
  std::string kubeconfig = writeKubeconfig(dir, port);
  Process sched({bin + "/shepherd-scheduler", "--kubeconfig=" + kubeconfig, "--leader-elect=false"},
                dir + "/scheduler.log");
  Process kubelet({bin + "/kubelet-lite", "--kubeconfig=" + kubeconfig, "--hostname-override=bench-node",
                   "--port=0", "--container-runtime-endpoint=unix://" + dir + "/rt/containerd.sock",
                   "--root-dir=" + dir + "/kubelet"},
                  dir + "/kubelet.log");
  client::ClientConfig cfg;
  cfg.servers = {"http://127.0.0.1:" + std::to_string(port)};
  client::RestClient rest(cfg);
  // The node must be Ready before pods are timed.
  for (int i = 0;; ++i) {
    auto node = rest.get("/api/v1/nodes/bench-node");
    if (node.ok()) break;
    if (i > 300) {
      std::fprintf(stderr, "node did not register (see %s/kubelet.log)\n", dir.c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // scheduler caches see the node
  const std::string ns = "default";
  PodWatch watch;
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    while (!stop.load())
      (void)rest.stream(
          "/api/v1/namespaces/" + ns + "/pods?watch=1",
          [&](std::string_view line) {
            watch.onEvent(line);
            return true;
          },
          &stop);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string podsPath = "/api/v1/namespaces/" + ns + "/pods";

  // Phase 1: one at a time.
  std::vector<double> toRunning, toBound;
  for (int i = 0; i < pods; ++i) {
    std::string name = "one-" + std::to_string(i);
    auto t0 = Clock::now();
    if (!rest.post(podsPath, podJson(name)).ok()) {
      std::fprintf(stderr, "create %s failed\n", name.c_str());
      return 1;
    }
    if (!watch.waitRunning(name, 60000)) {
      std::fprintf(stderr, "%s not Running within 60 s (see %s)\n", name.c_str(), dir.c_str());
      return 1;
    }
    toRunning.push_back(ms(watch.running(name) - t0));
    toBound.push_back(ms(watch.bound(name) - t0));
    (void)rest.del(podsPath + "/" + name);
    if (!watch.waitDeleted(name, 60000)) {
      std::fprintf(stderr, "%s not deleted within 60 s\n", name.c_str());
      return 1;
    }
  }
  std::printf("=== one pod at a time (%d pods)\n", pods);
  report("create -> bound", toBound);
  report("create -> Running", toRunning);

  // Phase 2: all at once.
  std::vector<std::thread> creators;
  std::vector<Clock::time_point> created(pods);
  auto t0 = Clock::now();
  std::atomic<int> failures{0};
  for (int i = 0; i < pods; ++i)
    creators.emplace_back([&, i] {
      if (!rest.post(podsPath, podJson("many-" + std::to_string(i))).ok()) failures++;
      created[i] = Clock::now();
    });
  for (auto& t : creators) t.join();
  std::vector<double> burst;
  for (int i = 0; i < pods; ++i) {
    std::string name = "many-" + std::to_string(i);
    if (!watch.waitRunning(name, 120000)) {
      std::fprintf(stderr, "%s not Running within 120 s\n", name.c_str());
      return 1;
    }
    burst.push_back(ms(watch.running(name) - t0));
  }
  std::printf("=== %d pods created at once (%d create failures)\n", pods, failures.load());
  report("first create -> each Running", burst);
  std::printf("all %d Running after %.0f ms (%.1f pods/s)\n", pods, percentile(burst, 100),
              pods / (percentile(burst, 100) / 1000.0));
  std::printf("SUMMARY single median %.0f ms p99 %.0f ms; burst of %d all Running in %.0f ms\n",
              percentile(toRunning, 50), percentile(toRunning, 99), pods, percentile(burst, 100));
  std::printf("kubelet-lite: %.1f CPU s, RSS %ld KiB; apiserver RSS %ld KiB\n", cpuSeconds(kubelet.pid()),
              rssKb(kubelet.pid()), rssKb(api.pid()));
  // Clean up: pods away first so the node stops them through the CRI.
  (void)rest.del(podsPath);
  for (int i = 0; i < pods; ++i) watch.waitDeleted("many-" + std::to_string(i), 60000);
  stop = true;
  watcher.join();
  kubelet.stop();
  sched.stop();
  api.stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s BIN_DIR CONTAINERD_SH [pods=50]\n", argv[0]);
    return 2;
  }
  std::string bin = argv[1];
  std::string script = argv[2];
  int pods = argc > 3 ? std::atoi(argv[3]) : 50;
  char tmpl[] = "/tmp/shpb-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string rt = dir + "/rt";
  // A subnet and bridge for this run only.
  std::string subnet = "10.199.250.0/24", bridge = "shbench0";
  if (std::system((script + " start " + rt + " --subnet " + subnet + " --bridge " + bridge + " >" + dir +
                   "/containerd-script.log 2>&1")
                      .c_str()) != 0) {
    std::fprintf(stderr, "containerd did not start (see %s/containerd-script.log)\n", dir.c_str());
    if (std::system((script + " stop " + rt + " >>" + dir + "/containerd-script.log 2>&1").c_str()) != 0)
      std::fprintf(stderr, "containerd stop failed too\n");
    return 1;
  }
  int rc = run(bin, dir, pods);
  if (std::system((script + " stop " + rt + " >>" + dir + "/containerd-script.log 2>&1").c_str()) != 0)
    std::fprintf(stderr, "containerd stop failed (see %s/containerd-script.log)\n", dir.c_str());
  if (rc == 0 && std::system(("rm -rf " + dir).c_str()) != 0)
    std::fprintf(stderr, "cannot remove %s\n", dir.c_str());
  return rc;
}
