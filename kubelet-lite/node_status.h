// The Node side of kubelet-lite: registers this machine as a Node (labels, addresses,
// capacity and allocatable from the machine, runtime version), renews the node's Lease in
// kube-node-lease every 10 s, and writes node conditions when they change and at least
// every minute.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "client/client.h"

namespace shepherd::kubelet {

// The node's directory for local-path volumes (controllers/localpath), set by kubelet-lite.
inline constexpr const char* kLocalStoragePathAnnotation = "shepherd.io/local-storage-path";

struct NodeConfig {
  std::string name;
  std::string internal_ip = "127.0.0.1";
  int kubelet_port = 10250;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string runtime_version;  // "containerd://1.6.20" or "fake://"
  int64_t max_pods = 110;
  // Overrides of what the machine reports (for fake nodes in scale tests).
  std::string cpu, memory, ephemeral_storage;
  int lease_seconds = 40;
  int renew_interval_seconds = 10;
  int status_interval_seconds = 60;
};

struct MachineResources {
  int64_t cpus = 1;
  int64_t memory_bytes = 0;
  int64_t ephemeral_bytes = 0;
};
MachineResources detectMachine(const std::string& root_dir);

// Thread-safety: start/stop from one thread; setCondition from any.
class NodeAgent {
 public:
  NodeAgent(client::Client& client, NodeConfig cfg, MachineResources machine);
  ~NodeAgent();
  // Creates or refreshes the Node object; false (with a log) if the API is unreachable.
  bool registerNode();
  void start();  // heartbeats
  void stop();
  // Ready=True/False etc. A change is written at once.
  void setReady(bool ready, const std::string& reason, const std::string& message);
  const NodeConfig& config() const { return cfg_; }

 private:
  void loop();
  bool renewLease();
  // Whether the API shows another Ready status than ours (e.g. the node lifecycle
  // controller marked it Unknown while we were away): then the status is written now.
  bool apiReadyDiffers();
  bool writeStatus();
  std::string statusJson();

  client::Client& client_;
  NodeConfig cfg_;
  MachineResources machine_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool dirty_ = true;
  bool ready_ = true;
  std::string ready_reason_ = "KubeletReady";
  std::string ready_message_ = "kubelet-lite is posting ready status";
  std::string ready_since_;
  std::string node_uid_;  // set by registerNode, before the heartbeat thread starts
  std::thread thread_;
};

}  // namespace shepherd::kubelet
