// What it costs to talk to etcd 3.4 through its v3 JSON gRPC-gateway (HTTP/1.1, libcurl,
// base64 bytes, int64 as strings) versus native gRPC (grpc++, HTTP/2, protobuf), against
// one single-member etcd on loopback.
//
//   etcd_transport_bench [--connections=1,16,64] [--seconds=5] [--transports=gateway,grpc]
//
// For each concurrency level and each transport, N threads (each with its own connection)
// run two closed-loop cells of --seconds each: PUT of a 1 KiB value to a fresh key
// /bench/<transport>/<thread>/<i>, then Range (linearizable GET) of one existing key per
// thread. Every answer is decoded and checked as a client would (the gateway's JSON parsed
// and base64-decoded, the protobuf parsed). One line per cell:
//   transport=grpc op=put conns=64 ops_per_s=... p50_ms=... p99_ms=...
//       client_cpu_us_per_op=... etcd_cpu_us_per_op=... ops=... failed=...
// client CPU is this whole process (getrusage RUSAGE_SELF, including gRPC's own threads);
// etcd CPU is utime+stime from /proc/<pid>/stat. Both are divided by the cell's requests.
//
// Transports:
//   gateway      one libcurl easy handle (one keep-alive HTTP/1.1 connection) per thread
//   grpc         one grpc::Channel per thread, each with its own subchannel pool so that it
//                really is one HTTP/2 connection per thread (channels with equal arguments
//                otherwise share a connection through gRPC's global subchannel pool)
//   grpc-shared  (optional) one grpc::Channel shared by all threads: every call multiplexed
//                on a single HTTP/2 connection, as an etcd client library would do
//
// Before measuring, gateway and grpc each write a value with binary bytes, read it back and
// read the other's; the program exits 1 on any mismatch.
// Any failed request in a cell makes the exit status 1 as well.
#include <curl/curl.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <latch>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "bench/servers.h"
#include "common/base64.h"
#include "common/json.h"
#include "etcd_rpc.grpc.pb.h"

using namespace shepherd;
using namespace shepherd::bench;

namespace {

constexpr size_t kValueBytes = 1024;
constexpr long kTimeoutMs = 10000;

// A client of one connection (or one share of a connection); used by one thread at a time.
class Client {
 public:
  virtual ~Client() = default;
  // false with `error` set unless etcd acknowledged the put with a revision.
  virtual bool put(const std::string& key, const std::string& value, std::string& error) = 0;
  // false with `error` set unless the key exists; its value in `value`.
  virtual bool get(const std::string& key, std::string& value, std::string& error) = 0;
};

// ---- JSON gateway over libcurl ----

size_t collect(char* ptr, size_t size, size_t n, void* userdata) {
  static_cast<std::string*>(userdata)->append(ptr, size * n);
  return size * n;
}

// int64 fields arrive as JSON strings ("42") in the gateway's answers.
int64_t int64Of(const json::Value* v) {
  if (!v) return 0;
  if (v->IsInt64()) return v->GetInt64();
  if (!v->IsString()) return 0;
  return std::atoll(v->GetString());
}

class GatewayClient : public Client {
 public:
  explicit GatewayClient(int port)
      : put_url_("http://127.0.0.1:" + std::to_string(port) + "/v3/kv/put"),
        range_url_("http://127.0.0.1:" + std::to_string(port) + "/v3/kv/range") {
    curl_ = curl_easy_init();
    headers_ = curl_slist_append(headers_, "Content-Type: application/json");
    headers_ = curl_slist_append(headers_, "Expect:");  // no 100-continue round trip
    if (!curl_) return;
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_);
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, kTimeoutMs);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &answer_);
  }
  ~GatewayClient() override {
    if (curl_) curl_easy_cleanup(curl_);
    curl_slist_free_all(headers_);
  }
  GatewayClient(const GatewayClient&) = delete;
  GatewayClient& operator=(const GatewayClient&) = delete;

  bool put(const std::string& key, const std::string& value, std::string& error) override {
    body_ = R"({"key":")" + base64Encode(key) + R"(","value":")" + base64Encode(value) + R"("})";
    if (!post(put_url_, error)) return false;
    if (int64Of(json::findPath(doc_, {"header", "revision"})) <= 0) {
      error = "put answer without header.revision: " + answer_.substr(0, 200);
      return false;
    }
    return true;
  }

  bool get(const std::string& key, std::string& value, std::string& error) override {
    body_ = R"({"key":")" + base64Encode(key) + R"("})";
    if (!post(range_url_, error)) return false;
    const json::Value* kvs = json::find(doc_, "kvs");
    if (!kvs || !kvs->IsArray() || kvs->Size() != 1u) {
      error = "range answer without exactly one kv: " + answer_.substr(0, 200);
      return false;
    }
    auto v = base64Decode(json::getString(*kvs->Begin(), "value"));
    if (!v) {
      error = "range answer with a malformed value";
      return false;
    }
    value = std::move(*v);
    return true;
  }

 private:
  // POSTs body_ to url; true with doc_ parsed from a 200 answer.
  bool post(const std::string& url, std::string& error) {
    if (!curl_) {
      error = "curl_easy_init failed";
      return false;
    }
    answer_.clear();
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body_.data());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_.size()));
    CURLcode rc = curl_easy_perform(curl_);
    if (rc != CURLE_OK) {
      error = std::string("curl: ") + curl_easy_strerror(rc);
      return false;
    }
    long status = 0;
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
      error = "HTTP " + std::to_string(status) + ": " + answer_.substr(0, 200);
      return false;
    }
    pool_.Clear();  // the previous answer's DOM; doc_ keeps no pointer into it past Parse
    doc_.Parse(answer_.data(), answer_.size());
    if (doc_.HasParseError() || !doc_.IsObject()) {
      error = "unparsable answer: " + answer_.substr(0, 200);
      return false;
    }
    return true;
  }

  std::string put_url_, range_url_;
  CURL* curl_ = nullptr;
  curl_slist* headers_ = nullptr;
  std::string body_, answer_;
  // The parsed answer lives in a fixed buffer reused by every request (a 1 KiB value's
  // range answer fits), so parsing does not allocate a fresh memory pool each time.
  alignas(std::max_align_t) char pool_buffer_[16 * 1024];
  rapidjson::MemoryPoolAllocator<> pool_{pool_buffer_, sizeof pool_buffer_};
  json::Document doc_{&pool_};
};

// ---- native gRPC ----

std::shared_ptr<grpc::Channel> makeChannel(int port, bool own_connection) {
  grpc::ChannelArguments args;
  if (own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(),
                                   args);
}

class GrpcClient : public Client {
 public:
  explicit GrpcClient(std::shared_ptr<grpc::Channel> channel)
      : channel_(std::move(channel)), stub_(etcdserverpb::KV::NewStub(channel_)) {}

  bool connect() {
    return channel_->WaitForConnected(std::chrono::system_clock::now() +
                                      std::chrono::milliseconds(kTimeoutMs));
  }

  bool put(const std::string& key, const std::string& value, std::string& error) override {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(kTimeoutMs));
    etcdserverpb::PutRequest req;
    req.set_key(key);
    req.set_value(value);
    etcdserverpb::PutResponse resp;
    grpc::Status st = stub_->Put(&ctx, req, &resp);
    if (!st.ok()) {
      error = "gRPC " + std::to_string(static_cast<int>(st.error_code())) + ": " + st.error_message();
      return false;
    }
    if (resp.header().revision() <= 0) {
      error = "put answer without header.revision";
      return false;
    }
    return true;
  }

  bool get(const std::string& key, std::string& value, std::string& error) override {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(kTimeoutMs));
    etcdserverpb::RangeRequest req;
    req.set_key(key);
    etcdserverpb::RangeResponse resp;
    grpc::Status st = stub_->Range(&ctx, req, &resp);
    if (!st.ok()) {
      error = "gRPC " + std::to_string(static_cast<int>(st.error_code())) + ": " + st.error_message();
      return false;
    }
    if (resp.kvs_size() != 1) {
      error = "range answer with " + std::to_string(resp.kvs_size()) + " kvs";
      return false;
    }
    value = resp.kvs(0).value();
    return true;
  }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<etcdserverpb::KV::Stub> stub_;
};

// ---- the clients of one cell ----

enum class Transport { Gateway, Grpc, GrpcShared };

const char* transportName(Transport t) {
  switch (t) {
    case Transport::Gateway:
      return "gateway";
    case Transport::Grpc:
      return "grpc";
    case Transport::GrpcShared:
      return "grpc-shared";
  }
  return "?";
}

// n clients of transport t, connected; empty (with a message printed) on failure.
std::vector<std::unique_ptr<Client>> makeClients(Transport t, int port, int n) {
  std::vector<std::unique_ptr<Client>> out;
  std::shared_ptr<grpc::Channel> shared;
  if (t == Transport::GrpcShared) shared = makeChannel(port, false);
  for (int i = 0; i < n; ++i) {
    if (t == Transport::Gateway) {
      out.push_back(std::make_unique<GatewayClient>(port));
      continue;
    }
    auto c = std::make_unique<GrpcClient>(shared ? shared : makeChannel(port, true));
    if (!c->connect()) {
      std::fprintf(stderr, "%s: channel %d did not connect\n", transportName(t), i);
      return {};
    }
    out.push_back(std::move(c));
  }
  return out;
}

// A value of kValueBytes bytes that differs per `seed`; with binary bytes (0..255) when asked.
std::string makeValue(int seed, bool binary) {
  std::string v(kValueBytes, '\0');
  uint32_t x = 2463534242u + static_cast<uint32_t>(seed) * 2654435761u;
  for (char& c : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = binary ? static_cast<char>(x & 0xff) : static_cast<char>('a' + x % 26);
  }
  return v;
}

// Writes a binary value with `c` and reads it back; true when equal.
bool roundTrip(Client& c, const std::string& key, const std::string& value, const char* what) {
  std::string error, got;
  if (!c.put(key, value, error)) {
    std::fprintf(stderr, "check %s: put %s failed: %s\n", what, key.c_str(), error.c_str());
    return false;
  }
  if (!c.get(key, got, error)) {
    std::fprintf(stderr, "check %s: get %s failed: %s\n", what, key.c_str(), error.c_str());
    return false;
  }
  if (got != value) {
    std::fprintf(stderr, "check %s: %s read back %zu bytes differing from the %zu written\n", what,
                 key.c_str(), got.size(), value.size());
    return false;
  }
  return true;
}

// Reads key with `c`; true when it holds `value` (the other transport wrote it).
bool readsBack(Client& c, const std::string& key, const std::string& value, const char* what) {
  std::string error, got;
  if (!c.get(key, got, error)) {
    std::fprintf(stderr, "check %s: get %s failed: %s\n", what, key.c_str(), error.c_str());
    return false;
  }
  if (got != value) {
    std::fprintf(stderr, "check %s: %s does not hold the value the other transport wrote\n", what,
                 key.c_str());
    return false;
  }
  return true;
}

// ---- measuring a cell ----

double rusageSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

struct ThreadResult {
  std::vector<double> latencies_ms;  // of successful requests
  int64_t failed = 0;
  std::string first_error;
};

enum class Op { Put, Range };

// Runs one cell: clients.size() threads, each issuing `op` back to back for `seconds`.
// next_i[t] is thread t's next put key index (kept across cells so keys stay unique).
// Returns the number of failed requests.
int64_t runCell(Transport t, Op op, std::vector<std::unique_ptr<Client>>& clients,
                std::vector<int64_t>& next_i, const std::vector<std::string>& read_values, double seconds,
                pid_t etcd_pid) {
  const size_t n = clients.size();
  const std::string value = makeValue(7, false);
  const std::string prefix = std::string("/bench/") + transportName(t) + "/";
  std::vector<ThreadResult> results(n);
  std::latch start(1);
  std::vector<std::thread> threads;
  threads.reserve(n);
  const auto span = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Clock::time_point t0;

  for (size_t k = 0; k < n; ++k) {
    threads.emplace_back([&, k] {
      ThreadResult& r = results[k];
      try {
        r.latencies_ms.reserve(op == Op::Put ? 20000 : 100000);
        Client& c = *clients[k];
        const std::string thread_prefix = prefix + std::to_string(k) + "/";
        const std::string read_key = prefix + "read/" + std::to_string(k);
        std::string error, got;
        start.wait();
        const Clock::time_point deadline = t0 + span;
        while (true) {
          auto a = Clock::now();
          if (a >= deadline) break;
          bool ok;
          if (op == Op::Put) {
            ok = c.put(thread_prefix + std::to_string(next_i[k]++), value, error);
          } else {
            ok = c.get(read_key, got, error);
            if (ok && got != read_values[k]) {
              ok = false;
              error = "range answer with a value differing from the one written";
            }
          }
          if (ok) {
            r.latencies_ms.push_back(ms(Clock::now() - a));
          } else {
            if (r.failed++ == 0) r.first_error = error;
          }
        }
      } catch (const std::exception& e) {
        if (r.failed++ == 0) r.first_error = std::string("exception: ") + e.what();
      } catch (...) {
        if (r.failed++ == 0) r.first_error = "unknown exception";
      }
    });
  }

  double etcd0 = cpuSeconds(etcd_pid), self0 = rusageSeconds();
  t0 = Clock::now();
  start.count_down();  // the threads read t0 only after this
  for (auto& th : threads) th.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  double etcd_cpu = cpuSeconds(etcd_pid) - etcd0, self_cpu = rusageSeconds() - self0;

  std::vector<double> all;
  int64_t failed = 0;
  std::string first_error;
  for (auto& r : results) {
    all.insert(all.end(), r.latencies_ms.begin(), r.latencies_ms.end());
    failed += r.failed;
    if (first_error.empty()) first_error = r.first_error;
  }
  const int64_t ok = static_cast<int64_t>(all.size());
  const double requests = static_cast<double>(std::max<int64_t>(ok + failed, 1));
  std::printf(
      "transport=%s op=%s conns=%zu ops_per_s=%.0f p50_ms=%.3f p99_ms=%.3f client_cpu_us_per_op=%.1f "
      "etcd_cpu_us_per_op=%.1f ops=%lld failed=%lld\n",
      transportName(t), op == Op::Put ? "put" : "range", n, static_cast<double>(ok) / std::max(elapsed, 1e-9),
      percentile(all, 50), percentile(all, 99), self_cpu * 1e6 / requests, etcd_cpu * 1e6 / requests,
      static_cast<long long>(ok), static_cast<long long>(failed));
  if (failed > 0) std::fprintf(stderr, "  first failure: %s\n", first_error.c_str());
  return failed;
}

// ---- arguments ----

struct Options {
  std::vector<int> connections = {1, 16, 64};
  double seconds = 5;
  std::vector<Transport> transports = {Transport::Gateway, Transport::Grpc};
};

bool parseTransports(const std::string& list, std::vector<Transport>& out) {
  out.clear();
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string_view item(list.data() + start, comma - start);
    if (item == "gateway")
      out.push_back(Transport::Gateway);
    else if (item == "grpc")
      out.push_back(Transport::Grpc);
    else if (item == "grpc-shared")
      out.push_back(Transport::GrpcShared);
    else if (!item.empty())
      return false;
    start = comma + 1;
  }
  return !out.empty();
}

bool parseArgs(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](std::string_view flag) -> const char* {
      return a.substr(0, flag.size()) == flag ? argv[i] + flag.size() : nullptr;
    };
    if (const char* v = value("--connections=")) {
      o.connections.clear();
      try {
        for (int64_t c : parseIntList(v)) {
          if (c < 1 || c > 4096) return false;
          o.connections.push_back(static_cast<int>(c));
        }
      } catch (const std::exception&) {
        return false;
      }
      if (o.connections.empty()) return false;
    } else if (const char* s = value("--seconds=")) {
      o.seconds = std::atof(s);
      if (!(o.seconds > 0)) return false;
    } else if (const char* t = value("--transports=")) {
      if (!parseTransports(t, o.transports)) return false;
    } else {
      return false;
    }
  }
  return true;
}

// The check that both transports really write and read etcd, and the same data: each
// writes a value with binary bytes, reads it back, and reads the other's.
bool checkTransports(int port) {
  const std::string gateway_key = "/bench/check/gateway", grpc_key = "/bench/check/grpc";
  const std::string gateway_value = makeValue(1, true), grpc_value = makeValue(2, true);
  GatewayClient gateway(port);
  GrpcClient grpc(makeChannel(port, true));
  if (!grpc.connect()) {
    std::fprintf(stderr, "check grpc: channel did not connect\n");
    return false;
  }
  bool ok = roundTrip(gateway, gateway_key, gateway_value, "gateway") &&
            roundTrip(grpc, grpc_key, grpc_value, "grpc") &&
            readsBack(grpc, gateway_key, gateway_value, "grpc reads gateway's value") &&
            readsBack(gateway, grpc_key, grpc_value, "gateway reads grpc's value");
  if (ok) std::printf("check: values put through each transport are read back equal, also by the other\n");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines as they happen
  Options o;
  if (!parseArgs(argc, argv, o)) {
    std::fprintf(
        stderr, "usage: %s [--connections=1,16,64] [--seconds=5] [--transports=gateway,grpc[,grpc-shared]]\n",
        argv[0]);
    return 2;
  }
  curl_global_init(CURL_GLOBAL_ALL);
  int status = 0;
  {
    TempDir dir;
    if (dir.path().empty()) {
      std::fprintf(stderr, "cannot create a temporary directory\n");
      return 1;
    }
    EtcdServer etcd(dir.path());
    if (!etcd.ok()) return 1;
    std::printf(
        "etcd pid %d on 127.0.0.1:%d (gRPC and gateway on the same port); %zu-byte values, %.1f s per cell\n",
        static_cast<int>(etcd.pid()), etcd.port(), kValueBytes, o.seconds);
    if (!checkTransports(etcd.port())) return 1;

    int64_t failed = 0;
    std::vector<std::vector<int64_t>> next_i(o.transports.size());
    // Concurrency outside, transports inside: both transports meet a store of about the
    // same size at each level.
    for (int c : o.connections) {
      for (size_t ti = 0; ti < o.transports.size(); ++ti) {
        Transport t = o.transports[ti];
        auto clients = makeClients(t, etcd.port(), c);
        if (clients.empty()) return 1;
        next_i[ti].resize(std::max(next_i[ti].size(), static_cast<size_t>(c)), 0);

        // The keys the range cell reads, one per thread, written (and the connections
        // warmed up) before anything is measured.
        std::vector<std::string> read_values;
        for (int k = 0; k < c; ++k) {
          read_values.push_back(makeValue(100 + k, false));
          std::string error;
          std::string key = std::string("/bench/") + transportName(t) + "/read/" + std::to_string(k);
          if (!clients[static_cast<size_t>(k)]->put(key, read_values.back(), error)) {
            std::fprintf(stderr, "%s: writing %s failed: %s\n", transportName(t), key.c_str(), error.c_str());
            return 1;
          }
        }
        failed += runCell(t, Op::Put, clients, next_i[ti], read_values, o.seconds, etcd.pid());
        failed += runCell(t, Op::Range, clients, next_i[ti], read_values, o.seconds, etcd.pid());
      }
    }
    std::printf("etcd: cpu %.1f s, rss %ld MiB\n", cpuSeconds(etcd.pid()), rssKb(etcd.pid()) / 1024);
    if (failed > 0) {
      std::fprintf(stderr, "%lld requests failed\n", static_cast<long long>(failed));
      status = 1;
    }
  }
  curl_global_cleanup();
  return status;
}
