// The one etcd launcher of the C++ tests and benchmarks: a single-member etcd (Debian's
// etcd-server, 3.4.x) on free loopback ports, its data in a directory of its own, stopped
// by its PID (SIGTERM, then SIGKILL) when stopped or destroyed. The Python suites have
// the same in tests/harness/etcd_cluster.py.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace shepherd::testsupport {

struct EtcdProcessOptions {
  // Where etcd keeps its data and log. Empty: a fresh temporary directory, removed when
  // the process is stopped (also when it failed to start).
  std::string dir;
  std::string name = "t";
  // Progress notifications often enough for a test to see them; 0 leaves etcd's default.
  int progress_notify_interval_ms = 500;
  // Appended to the command line (e.g. "--quota-backend-bytes=...").
  std::vector<std::string> extra_flags;
  int startup_timeout_ms = 30000;
};

class EtcdProcess {
 public:
  EtcdProcess() = default;
  EtcdProcess(const EtcdProcess&) = delete;
  EtcdProcess& operator=(const EtcdProcess&) = delete;
  ~EtcdProcess() { stop(); }

  // Starts etcd and waits until it answers /health; returns "" or why it could not (with
  // the end of its log). A port taken between choosing and binding it is retried.
  std::string start(const EtcdProcessOptions& options = {});
  // Stops the process (by PID) and removes a temporary data directory. Idempotent.
  void stop();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int port() const { return client_port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(client_port_); }
  const std::string& dir() const { return dir_; }

 private:
  void stopProcess();
  pid_t pid_ = -1;
  int client_port_ = 0;
  std::string dir_;
  bool owns_dir_ = false;
};

// The etcd binary on PATH, or "".
std::string findEtcd();

}  // namespace shepherd::testsupport
