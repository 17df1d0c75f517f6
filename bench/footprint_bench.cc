// Footprint benchmark: the API server's memory as pods accumulate, and its restart time.
//   footprint_bench BIN_DIR [milestones=10000,100000,150000]
// Pods (~1.5 KB as sent, ~4.8 KB as served with defaults and managedFields) are created
// at 64 connections; at 0 and at each milestone the server's RSS is read from /proc and
// compared with the serialized size of the stored objects (the sum of the create
// responses, which are the objects as served). Then the server is stopped (SIGTERM) and
// started again on the same data: time from exec to /readyz answering 200, and RSS.
#include <cstdlib>
#include <filesystem>

#include "bench/bench_util.h"
#include "bench/http_load.h"
#include "bench/pod_manifest.h"
#include "bench/servers.h"

using namespace shepherd;
using namespace shepherd::bench;

namespace {

uint64_t dirBytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines as they happen
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s BIN_DIR [milestones]\n", argv[0]);
    return 2;
  }
  std::string bin = argv[1];
  std::vector<int64_t> milestones = parseIntList(argc > 2 ? argv[2] : "10000,100000,150000");
  TempDir dir;
  ApiServer api(bin, dir.path());
  if (!api.ok() || !api.createNamespace("bench")) return 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  long rss0 = rssKb(api.pid());
  std::printf("0 pods: rss %.1f MiB\n", static_cast<double>(rss0) / 1024);

  int64_t created = 0;
  uint64_t servedBytes = 0;
  double lastRatio = 0, lastRssMiB = 0, lastSerializedMiB = 0;
  for (int64_t target : milestones) {
    LoadOptions o;
    o.port = api.port();
    o.connections = 64;
    o.requests = target - created;
    int64_t base = created;
    auto r = runLoad(o, [&](int64_t i) {
      return httpPost("/api/v1/namespaces/bench/pods",
                      podManifest("f-" + std::to_string(base + i), "bench", "app-" + std::to_string((base + i) % 10)));
    });
    created += r.count(201);
    servedBytes += r.response_bytes;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    long rss = rssKb(api.pid());
    double serializedMiB = static_cast<double>(servedBytes) / 1048576;
    double rssMiB = static_cast<double>(rss) / 1024;
    double budget = 2 * serializedMiB + 64;
    std::printf(
        "%lld pods (created at %.0f/s): rss %.1f MiB; serialized objects %.1f MiB (%.0f bytes/pod); rss per pod %.0f bytes; "
        "target 2 x serialized + 64 MiB = %.1f MiB: %s; store on disk %.1f MiB\n",
        static_cast<long long>(created), r.perSecond(), rssMiB, serializedMiB,
        static_cast<double>(servedBytes) / static_cast<double>(std::max<int64_t>(created, 1)),
        (rssMiB - static_cast<double>(rss0) / 1024) * 1048576 / static_cast<double>(std::max<int64_t>(created, 1)), budget,
        rssMiB <= budget ? "met" : "missed", static_cast<double>(dirBytes(dir.path() + "/data")) / 1048576);
    lastRatio = rssMiB / std::max(serializedMiB, 1e-9);
    lastRssMiB = rssMiB;
    lastSerializedMiB = serializedMiB;
  }

  double readyMs = api.restart();
  if (readyMs < 0) return 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  long rssAfter = rssKb(api.pid());
  // The restarted server serves every pod.
  LoadOptions o;
  o.port = api.port();
  o.requests = 1;
  auto count = runLoad(o, [](int64_t) { return httpGet("/api/v1/namespaces/bench/pods?limit=1"); });
  std::printf("restart with %lld pods: ready in %.0f ms, rss %.1f MiB (list answered %d)\n", static_cast<long long>(created),
              readyMs, static_cast<double>(rssAfter) / 1024, count.count(200) == 1 ? 200 : 0);
  std::printf("SUMMARY footprint: %lld pods: rss %.0f MiB for %.0f MiB serialized (%.2fx); restart to ready %.0f ms\n",
              static_cast<long long>(created), lastRssMiB, lastSerializedMiB, lastRatio, readyMs);
  return 0;
}
