// What `shepherd up` runs, as data: every component's command line and when it may start.
// Pure (no processes), so the plan is unit tested.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace shepherd::launcher {

struct UpOptions {
  std::string data_dir;  // absolute
  std::string bin_dir;   // where the programs are
  int port = 6443;       // the first API server's; a second one (--etcd) gets port + 1
  bool with_node = true;
  std::string node_name, kubelet_port, containerd_socket;
  bool with_etcd = false;    // three etcd members on loopback and two API servers
  int etcd_port = 2379;      // member i: clients on etcd_port + 2i, peers on etcd_port + 2i + 1
  std::string etcd_servers;  // an external etcd (exclusive with with_etcd)
  std::string etcd_prefix = "/registry";
};

struct Component {
  std::string name;
  std::vector<std::string> argv;
  bool needs_api = false;   // started once the API server is ready (it needs the kubeconfig)
  bool needs_etcd = false;  // started once the first etcd member answers (--etcd)
  // Supervision state.
  pid_t pid = -1;
  int restarts = 0;
  std::chrono::steady_clock::time_point started;
  std::optional<std::chrono::steady_clock::time_point> restart_at;  // exited: started again then

  // Not running and not waiting to be restarted.
  bool neverStarted() const { return pid <= 0 && !restart_at; }
};

struct ClusterPlan {
  std::vector<Component> components;  // in start order
  std::string etcd_servers;           // what the API servers use (empty: embedded store)
  std::string server_urls;            // every API server, comma-separated (components fail over)
  std::string pki_dir;
};

ClusterPlan planCluster(const UpOptions& o);

}  // namespace shepherd::launcher
