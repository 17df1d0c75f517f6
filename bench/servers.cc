#include "bench/servers.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>

#include "bench/http_load.h"
#include "common/free_port.h"

namespace shepherd::bench {

TempDir::TempDir() {
  char tmpl[] = "/tmp/shepherd-bench-XXXXXX";
  const char* made = mkdtemp(tmpl);
  path_ = made ? made : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

int freePort() {
  return freeLoopbackPort();
}

bool waitForHttp200(int port, const std::string& target, int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    LoadOptions o;
    o.port = port;
    o.requests = 1;
    o.quiet = true;
    auto r = runLoad(o, [&](int64_t) { return httpGet(target); });
    if (r.count(200) == 1) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

std::string benchStorage() {
  const char* s = std::getenv("SHEPHERD_BENCH_STORAGE");
  return s && std::string(s) == "etcd" ? "etcd" : "sqlite";
}

ApiServer::ApiServer(const std::string& bin_dir, const std::string& dir, std::vector<std::string> extra_flags)
    : bin_(bin_dir), dir_(dir), flags_(std::move(extra_flags)) {
  if (benchStorage() == "etcd") {
    std::filesystem::create_directories(dir_ + "/backend");
    backend_ = std::make_unique<EtcdServer>(dir_ + "/backend");
    if (!backend_->ok()) return;
    flags_.push_back("--etcd-servers=http://127.0.0.1:" + std::to_string(backend_->port()));
  }
  start();
}

double ApiServer::start() {
  port_ = freePort();
  std::vector<std::string> argv = {bin_ + "/shepherd-apiserver", "--data-dir=" + dir_ + "/data",
                                   "--port=" + std::to_string(port_), "--plain-http",
                                   "--authorization-mode=AlwaysAllow",
                                   // 256 concurrent writers must not meet the default limits
                                   "--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000"};
  argv.insert(argv.end(), flags_.begin(), flags_.end());
  auto t0 = Clock::now();
  process_ = std::make_unique<Process>(argv, dir_ + "/apiserver.log");
  if (!waitForHttp200(port_, "/readyz", 120000)) {
    std::fprintf(stderr, "API server did not become ready (see %s/apiserver.log)\n", dir_.c_str());
    port_ = 0;
    return -1;
  }
  return ms(Clock::now() - t0);
}

bool ApiServer::createNamespace(const std::string& ns) const {
  LoadOptions o;
  o.port = port_;
  o.requests = 1;
  auto r = runLoad(o, [&](int64_t) {
    return httpPost("/api/v1/namespaces",
                    R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + R"("}})");
  });
  return r.count(201) == 1;
}

double ApiServer::restart() {
  process_.reset();
  return start();
}

EtcdServer::EtcdServer(const std::string& dir) {
  testsupport::EtcdProcessOptions o;
  o.dir = dir;
  o.name = "bench";
  o.progress_notify_interval_ms = 0;
  o.extra_flags = {"--quota-backend-bytes=8589934592"};
  std::string error = etcd_.start(o);
  if (!error.empty()) std::fprintf(stderr, "%s\n", error.c_str());
}

}  // namespace shepherd::bench
