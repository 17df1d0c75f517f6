// API benchmarks against a real shepherd-apiserver (durable SQLite store, plain HTTP on
// loopback), with raw etcd as the reference for writes.
//   api_bench BIN_DIR writes [pods_per_level=20000] [levels=1,16,64,256]
//       pod creates (realistic ~1.5 KB JSON) at each concurrency, then the same value
//       sizes as etcd v3 puts through its JSON gateway at the same concurrency.
//   api_bench BIN_DIR reads [pods=10000]
//       GET one pod at 64 connections; LIST all pods as JSON and as Table; LIST with a
//       label selector and with a spec.nodeName field selector.
#include <cstdlib>

#include "bench/bench_util.h"
#include "bench/http_load.h"
#include "bench/pod_manifest.h"
#include "bench/servers.h"
#include "common/base64.h"

using namespace shepherd;
using namespace shepherd::bench;

namespace {

// Creates pods named prefix-i (i < count) at `connections`; returns the load result.
LoadResult createPods(int port, const std::string& ns, const std::string& prefix, int64_t count,
                      int connections, double max_seconds, bool with_nodes = false) {
  LoadOptions o;
  o.port = port;
  o.connections = connections;
  o.requests = count;
  o.max_seconds = max_seconds;
  std::string target = "/api/v1/namespaces/" + ns + "/pods";
  return runLoad(o, [&](int64_t i) {
    std::string node = with_nodes ? "node-" + std::to_string(i % 100) : "";
    return httpPost(target,
                    podManifest(prefix + "-" + std::to_string(i), ns, "app-" + std::to_string(i % 10), node));
  });
}

LoadResult etcdPuts(int port, int64_t count, int connections, double max_seconds, const std::string& prefix) {
  LoadOptions o;
  o.port = port;
  o.connections = connections;
  o.requests = count;
  o.max_seconds = max_seconds;
  return runLoad(o, [&](int64_t i) {
    std::string name = prefix + "-" + std::to_string(i);
    std::string key = "/registry/pods/bench/" + name;
    std::string body = R"({"key":")" + base64Encode(key) + R"(","value":")" +
                       base64Encode(podManifest(name, "bench", "app-" + std::to_string(i % 10))) + R"("})";
    return httpPost("/v3/kv/put", body);
  });
}

int writes(const std::string& bin, int64_t per_level, const std::vector<int>& levels) {
  std::printf("storage: %s\n", benchStorage().c_str());
  std::printf("pod JSON as sent: %zu bytes\n", podManifest("p-0-00000", "bench", "app-0").size());
  std::vector<std::pair<int, double>> shepherd_rates, etcd_rates;
  {
    TempDir dir;
    ApiServer api(bin, dir.path());
    if (!api.ok() || !api.createNamespace("bench")) return 1;
    for (int c : levels) {
      // One connection at a time waits for every fsync: fewer requests keep it short.
      int64_t n = c == 1 ? std::min<int64_t>(per_level, 2000) : per_level;
      double cpu0 = cpuSeconds(api.pid()), self0 = cpuSeconds(getpid());
      auto r = createPods(api.port(), "bench", "p" + std::to_string(c), n, c, 60);
      std::printf("shepherd creates  conns=%3d  %s  server %.0f us/req, load generator %.0f us/req\n", c,
                  r.summary().c_str(),
                  (cpuSeconds(api.pid()) - cpu0) * 1e6 / std::max<int64_t>(r.answered, 1),
                  (cpuSeconds(getpid()) - self0) * 1e6 / std::max<int64_t>(r.answered, 1));
      shepherd_rates.push_back({c, r.perSecond()});
    }
    std::printf("api server: cpu %.1f s, rss %ld MiB\n", cpuSeconds(api.pid()), rssKb(api.pid()) / 1024);
  }
  {
    TempDir dir;
    EtcdServer etcd(dir.path());
    if (!etcd.ok()) return 1;
    for (int c : levels) {
      int64_t n = c == 1 ? std::min<int64_t>(per_level, 2000) : per_level;
      double cpu0 = cpuSeconds(etcd.pid());
      auto r = etcdPuts(etcd.port(), n, c, 60, "p" + std::to_string(c));
      std::printf("etcd puts         conns=%3d  %s  server %.0f us/req\n", c, r.summary().c_str(),
                  (cpuSeconds(etcd.pid()) - cpu0) * 1e6 / std::max<int64_t>(r.answered, 1));
      etcd_rates.push_back({c, r.perSecond()});
    }
    std::printf("etcd: cpu %.1f s, rss %ld MiB\n", cpuSeconds(etcd.pid()), rssKb(etcd.pid()) / 1024);
  }
  std::string line = "SUMMARY writes:";
  for (size_t i = 0; i < levels.size(); ++i) {
    char part[160];
    std::snprintf(part, sizeof part, " c%d %.0f/s (etcd %.0f/s, ratio %.2f);", levels[i],
                  shepherd_rates[i].second, etcd_rates[i].second,
                  etcd_rates[i].second > 0 ? shepherd_rates[i].second / etcd_rates[i].second : 0);
    line += part;
  }
  std::printf("%s\n", line.c_str());
  return 0;
}

int reads(const std::string& bin, int pods) {
  TempDir dir;
  ApiServer api(bin, dir.path(), {"--watch-cache-size=100000"});
  if (!api.ok() || !api.createNamespace("bench")) return 1;
  auto load = createPods(api.port(), "bench", "r", pods, 64, 300, true);
  std::printf("loaded %lld pods (%s)\n", static_cast<long long>(load.answered), load.summary().c_str());

  LoadOptions o;
  o.port = api.port();
  o.connections = 64;
  o.requests = 300000;
  o.max_seconds = 10;
  double cpu0 = cpuSeconds(api.pid()), self0 = cpuSeconds(getpid());
  auto get = runLoad(
      o, [](int64_t i) { return httpGet("/api/v1/namespaces/bench/pods/r-" + std::to_string(i % 1000)); });
  std::printf("GET one pod      conns=64  %s  server %.0f us/req, load generator %.0f us/req\n",
              get.summary().c_str(),
              (cpuSeconds(api.pid()) - cpu0) * 1e6 / std::max<int64_t>(get.answered, 1),
              (cpuSeconds(getpid()) - self0) * 1e6 / std::max<int64_t>(get.answered, 1));

  auto listJson = sequentialGets(api.port(), "/api/v1/namespaces/bench/pods", "application/json", 20);
  std::printf("LIST %d pods JSON   %.1f ms median (%.1f MB per answer)  %s\n", pods,
              percentile(listJson.latencies_ms, 50),
              static_cast<double>(listJson.response_bytes) / std::max<int64_t>(listJson.answered, 1) / 1e6,
              listJson.summary().c_str());
  auto listTable = sequentialGets(api.port(), "/api/v1/namespaces/bench/pods",
                                  "application/json;as=Table;v=v1;g=meta.k8s.io,application/json", 20);
  std::printf("LIST %d pods Table  %.1f ms median  %s\n", pods, percentile(listTable.latencies_ms, 50),
              listTable.summary().c_str());
  auto listLabel = sequentialGets(api.port(), "/api/v1/namespaces/bench/pods?labelSelector=app%3Dapp-3",
                                  "application/json", 50);
  std::printf("LIST labelSelector app=app-3 (%d pods)  %.2f ms median  %s\n", pods / 10,
              percentile(listLabel.latencies_ms, 50), listLabel.summary().c_str());
  auto listField =
      sequentialGets(api.port(), "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-7", "application/json", 50);
  std::printf("LIST fieldSelector spec.nodeName=node-7 (%d pods)  %.2f ms median  %s\n", pods / 100,
              percentile(listField.latencies_ms, 50), listField.summary().c_str());
  std::printf(
      "SUMMARY reads: GET %.0f/s at 64 conns; LIST %d pods JSON %.1f ms, Table %.1f ms; label %.2f ms; field "
      "%.2f ms\n",
      get.perSecond(), pods, percentile(listJson.latencies_ms, 50), percentile(listTable.latencies_ms, 50),
      percentile(listLabel.latencies_ms, 50), percentile(listField.latencies_ms, 50));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines as they happen
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s BIN_DIR writes|reads [args]\n", argv[0]);
    return 2;
  }
  std::string bin = argv[1], what = argv[2];
  if (what == "writes") {
    std::vector<int> levels;
    for (int64_t c : parseIntList(argc > 4 ? argv[4] : "1,16,64,256")) levels.push_back(static_cast<int>(c));
    return writes(bin, argc > 3 ? std::atoll(argv[3]) : 20000, levels);
  }
  if (what == "reads") return reads(bin, argc > 3 ? std::atoi(argv[3]) : 10000);
  std::fprintf(stderr, "unknown benchmark %s\n", what.c_str());
  return 2;
}
