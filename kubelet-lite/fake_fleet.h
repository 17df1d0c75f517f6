// FakeFleet: many fake nodes in one kubelet-lite process, for cluster simulations
// (KWOK's shape). Each node is a real NodeAgent — registered Node, Lease renewed on its own
// schedule, status written as a kubelet does — while the pods bound to any of them are
// driven by one watch and a small worker pool instead of a thread per pod: after the
// start-up delay the pod is run in its node's FakeRuntime (sandbox and IP, init containers
// completed, containers running) and its status becomes Running; a pod being deleted is
// stopped and removed there and confirmed with the final grace-0 DELETE.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/client.h"
#include "client/informer.h"
#include "kubelet-lite/fake_runtime.h"
#include "kubelet-lite/node_status.h"

namespace shepherd::kubelet {

struct FakeFleetConfig {
  // Node i is named "<name_prefix>-<i>"; every other field of the template is shared.
  std::string name_prefix;
  int nodes = 1;
  NodeConfig node;  // name is ignored
  MachineResources machine;
  int startup_ms = 100;  // bound → Running
  int workers = 4;       // threads writing pod statuses and final deletes
};

// Thread-safety: start/stop from one thread; the informer's handler and the workers share
// the queue and the pod table under mu_.
class FakeFleet {
 public:
  FakeFleet(client::Client& client, FakeFleetConfig cfg);
  ~FakeFleet();
  // Registers every node (false if the API server refused or was unreachable), then starts
  // the pod watch and the heartbeats, spread over one renew interval.
  bool start(int sync_timeout_ms);
  void stop();
  size_t nodeCount() const { return agents_.size(); }

 private:
  enum class Action { kRun, kConfirmDelete };
  struct Due {
    std::chrono::steady_clock::time_point at;
    std::string key;
    Action action;
    bool operator>(const Due& o) const { return at > o.at; }
  };
  // What the fleet did to one pod incarnation (by key; uid tells incarnations apart).
  struct PodRecord {
    std::string uid;
    bool run_queued = false;
    bool delete_queued = false;
  };

  void onPod(const client::Object& obj);
  void work();
  void markRunning(const std::string& key);
  void confirmDelete(const std::string& key);
  void later(const std::string& key, Action action, std::chrono::milliseconds delay);
  // The node's runtime, or nullptr for a node outside the fleet.
  FakeRuntime* runtimeOf(const json::Value& pod);

  client::Client& client_;
  FakeFleetConfig cfg_;
  std::vector<std::unique_ptr<NodeAgent>> agents_;
  std::vector<std::unique_ptr<FakeRuntime>> runtimes_;  // one per node, as agents_
  std::unordered_map<std::string, size_t> node_index_;  // name -> position in agents_ (read-only after start)
  client::Informer pods_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  std::unordered_map<std::string, PodRecord> pods_done_;
  std::vector<std::thread> workers_;
  std::thread starter_;  // starts the heartbeats one by one
};

}  // namespace shepherd::kubelet
