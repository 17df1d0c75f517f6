// The servers a benchmark measures, started on loopback in a fresh temporary directory:
// Shepherd's API server (durable SQLite store) and, as the reference, a single-member etcd
// (Debian's etcd-server) with its own data directory on the same disk.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "tests/support/etcd_process.h"

namespace shepherd::bench {

// A fresh temporary directory, removed with the object.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class EtcdServer;

// With SHEPHERD_BENCH_STORAGE=etcd in the environment, the API server keeps its objects in
// an etcd of its own (a single member in DIR/backend) instead of the embedded store.
class ApiServer {
 public:
  // extra_flags are appended to the defaults (plain HTTP on loopback, AlwaysAllow).
  ApiServer(const std::string& bin_dir, const std::string& dir, std::vector<std::string> extra_flags = {});
  // Stops (SIGTERM) and starts the server again on the same data; returns milliseconds
  // from the start of the new process to /readyz answering 200.
  double restart();
  int port() const { return port_; }
  pid_t pid() const { return process_ ? process_->pid() : -1; }
  bool ok() const { return port_ > 0; }
  void stop() { process_.reset(); }
  // "etcd" or "sqlite".
  const char* storage() const { return backend_ ? "etcd" : "sqlite"; }
  // Creates namespace `ns`; false unless the server answered 201.
  bool createNamespace(const std::string& ns) const;

 private:
  double start();
  std::string bin_, dir_;
  std::vector<std::string> flags_;
  std::unique_ptr<EtcdServer> backend_;  // declared first: stopped after the API server
  std::unique_ptr<Process> process_;
  int port_ = 0;
};

// The reference etcd: tests/support's launcher (the one for tests and benchmarks) with the
// benchmarks' settings (an 8 GiB quota), its data and log under dir.
class EtcdServer {
 public:
  explicit EtcdServer(const std::string& dir);
  int port() const { return etcd_.port(); }
  pid_t pid() const { return etcd_.pid(); }
  bool ok() const { return etcd_.running(); }

 private:
  testsupport::EtcdProcess etcd_;
};

// "etcd" when SHEPHERD_BENCH_STORAGE=etcd, else "sqlite".
std::string benchStorage();

// A TCP port that was free a moment ago (bound to port 0, then closed).
int freePort();
// GET target until it answers 200; false after timeout_ms.
bool waitForHttp200(int port, const std::string& target, int timeout_ms);

}  // namespace shepherd::bench
