// Watch fan-out benchmark against a real shepherd-apiserver (plain HTTP on loopback).
//   watch_bench BIN_DIR [watchers=1000] [writes_per_s=1000] [seconds=10] [mode=all|node]
// mode all:  every watcher watches all pods of the namespace, so each write is delivered
//            to every watcher (watchers x writes/s events per second).
// mode node: watcher k watches pods with spec.nodeName=node-k (the kubelet pattern); pod i
//            is created on node-(i mod watchers), so each write reaches one watcher.
// Pods (~1.5 KB as sent) are created at a steady rate; the latency of a delivery is the
// time from the create's response to the watcher reading the event (0 if the event
// arrived first). Missed deliveries (not seen 10 s after the last write) are counted.
#include <atomic>
#include <boost/asio.hpp>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "bench/bench_util.h"
#include "bench/http_load.h"
#include "bench/pod_manifest.h"
#include "bench/servers.h"

using namespace shepherd;
using namespace shepherd::bench;
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

struct Watcher {
  std::string target;
  std::atomic<bool> ready{false};  // response headers seen (read by the main thread)
  bool failed = false;
  uint64_t bytes = 0;
  std::vector<std::pair<int64_t, Clock::time_point>> seen;  // pod index, when read
};

std::atomic<int64_t> deliveredCount{0};  // progress for the main thread

// Finds `"name":"w-<digits>"` in a stream that arrives in pieces, scanning each piece in
// place; only a short tail is carried over to catch a match split between two pieces.
class NameScanner {
 public:
  template <class Fn>
  void feed(const char* data, size_t n, Fn&& found) {
    std::string_view in(data, n);
    if (!carry_.empty()) {
      // Matches that start in the carried tail and end in this piece.
      std::string joined = carry_ + std::string(in.substr(0, kTail));
      size_t pos = 0;
      while ((pos = joined.find(kPattern, pos)) != std::string::npos && pos < carry_.size()) {
        size_t end = joined.find('"', pos + kPattern.size());
        if (end != std::string::npos && end >= carry_.size())
          found(std::atoll(joined.c_str() + pos + kPattern.size()));
        pos += 1;
      }
    }
    // Matches complete within this piece.
    size_t pos = 0;
    while ((pos = in.find(kPattern, pos)) != std::string_view::npos) {
      size_t end = in.find('"', pos + kPattern.size());
      if (end == std::string_view::npos) break;
      found(std::strtoll(in.data() + pos + kPattern.size(), nullptr, 10));
      pos = end;
    }
    carry_.assign(in.substr(n > kTail ? n - kTail : 0));
  }

 private:
  static constexpr std::string_view kPattern = "\"name\":\"w-";
  static constexpr size_t kTail = 40;  // longer than the pattern and a pod number
  std::string carry_;
};

asio::awaitable<void> watchLoop(tcp::endpoint ep, Watcher& w, const bool& stop) {
  try {
    tcp::socket sock(co_await asio::this_coro::executor);
    co_await sock.async_connect(ep, asio::use_awaitable);
    std::string req = httpGet(w.target);
    co_await asio::async_write(sock, asio::buffer(req), asio::use_awaitable);
    std::vector<char> buf(64 * 1024);
    NameScanner scanner;
    std::string head;
    while (!stop) {
      size_t n = co_await sock.async_read_some(asio::buffer(buf), asio::use_awaitable);
      auto at = Clock::now();
      w.bytes += n;
      if (!w.ready) {
        head.append(buf.data(), n);
        if (head.find("\r\n\r\n") == std::string::npos) continue;
        if (head.rfind("HTTP/1.1 200", 0) != 0) {
          w.failed = true;
          co_return;
        }
        w.ready = true;
        scanner.feed(head.data(), head.size(), [&](int64_t i) {
          w.seen.emplace_back(i, at);
          deliveredCount++;
        });
        continue;
      }
      scanner.feed(buf.data(), n, [&](int64_t i) {
        w.seen.emplace_back(i, at);
        deliveredCount++;
      });
    }
  } catch (const std::exception&) {
    if (!stop) w.failed = true;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines as they happen
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s BIN_DIR [watchers] [writes_per_s] [seconds] [all|node]\n", argv[0]);
    return 2;
  }
  std::string bin = argv[1];
  int watchers = argc > 2 ? std::atoi(argv[2]) : 1000;
  int rate = argc > 3 ? std::atoi(argv[3]) : 1000;
  int seconds = argc > 4 ? std::atoi(argv[4]) : 10;
  std::string mode = argc > 5 ? argv[5] : "all";
  bool byNode = mode == "node";
  int64_t writes = static_cast<int64_t>(rate) * seconds;

  TempDir dir;
  ApiServer api(bin, dir.path(),
                {"--watch-cache-size=100000", "--max-watches-per-user=" + std::to_string(watchers + 100)});
  if (!api.ok() || !api.createNamespace("bench")) return 1;

  std::vector<Watcher> ws(static_cast<size_t>(watchers));
  for (int k = 0; k < watchers; ++k)
    ws[static_cast<size_t>(k)].target =
        byNode
            ? "/api/v1/namespaces/bench/pods?watch=1&fieldSelector=spec.nodeName%3Dnode-" + std::to_string(k)
            : "/api/v1/namespaces/bench/pods?watch=1";
  bool stop = false;
  asio::io_context io(1);
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(api.port()));
  for (auto& w : ws) asio::co_spawn(io, watchLoop(ep, w, stop), asio::detached);
  auto guard = asio::make_work_guard(io);
  std::thread reader([&] { io.run(); });

  // All watches established before the first write.
  auto deadline = Clock::now() + std::chrono::seconds(60);
  auto countReady = [&] {
    int r = 0;
    for (auto& w : ws) r += w.ready ? 1 : 0;
    return r;
  };
  int ready = 0;
  while ((ready = countReady()) < watchers && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::printf("storage: %s\n", benchStorage().c_str());
  std::printf("%d/%d watches open (%s)\n", ready, watchers,
              byNode ? "one node's pods each" : "all pods each");

  std::vector<Clock::time_point> answered(static_cast<size_t>(writes));
  std::vector<char> ok(static_cast<size_t>(writes), 0);
  LoadOptions o;
  o.port = api.port();
  o.connections = 32;
  o.requests = writes;
  o.rate = rate;
  double cpu0 = cpuSeconds(api.pid());
  auto load = runLoad(
      o,
      [&](int64_t i) {
        std::string node = byNode ? "node-" + std::to_string(i % watchers) : "";
        return httpPost("/api/v1/namespaces/bench/pods", podManifest("w-" + std::to_string(i), "bench",
                                                                     "app-" + std::to_string(i % 10), node));
      },
      [&](int64_t i, int status, Clock::time_point at) {
        answered[static_cast<size_t>(i)] = at;
        ok[static_cast<size_t>(i)] = status == 201;
      });
  std::printf("writes: %s\n", load.summary().c_str());

  // Wait for deliveries to drain (at most 10 s after the last write).
  int64_t expected = 0;
  for (int64_t i = 0; i < writes; ++i) expected += ok[static_cast<size_t>(i)] ? (byNode ? 1 : watchers) : 0;
  auto drainEnd = Clock::now() + std::chrono::seconds(10);
  while (deliveredCount.load() < expected && Clock::now() < drainEnd)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  double serverCpu = cpuSeconds(api.pid()) - cpu0;
  long serverRss = rssKb(api.pid());
  stop = true;
  io.stop();
  reader.join();

  std::vector<double> lat;
  lat.reserve(static_cast<size_t>(expected));
  uint64_t bytes = 0;
  int failed = 0;
  for (auto& w : ws) {
    bytes += w.bytes;
    failed += w.failed ? 1 : 0;
    for (auto& [i, at] : w.seen)
      if (i >= 0 && i < writes && ok[static_cast<size_t>(i)])
        lat.push_back(std::max(0.0, ms(at - answered[static_cast<size_t>(i)])));
  }
  int64_t missed = expected - static_cast<int64_t>(lat.size());
  std::printf(
      "deliveries: %zu of %lld expected (missed %lld), watchers failed %d, %.1f MB read by watchers\n",
      lat.size(), static_cast<long long>(expected), static_cast<long long>(missed), failed,
      static_cast<double>(bytes) / 1e6);
  std::printf(
      "delivery latency: p50 %.1f ms, p99 %.1f ms, max %.1f ms; server cpu %.1f s over the run, rss %ld "
      "MiB\n",
      percentile(lat, 50), percentile(lat, 99), percentile(lat, 100), serverCpu, serverRss / 1024);
  std::printf("SUMMARY watch: %d watchers (%s), %d writes/s for %d s: p50 %.1f ms p99 %.1f ms, missed %lld\n",
              watchers, mode.c_str(), rate, seconds, percentile(lat, 50), percentile(lat, 99),
              static_cast<long long>(missed));
  return 0;
}
