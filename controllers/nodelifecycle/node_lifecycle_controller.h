// Node lifecycle controller, as upstream's node-lifecycle and taint-eviction controllers:
// a node whose kubelet has posted neither a status heartbeat nor a Lease renewal for the
// grace period (40 s) gets Ready (and the pressure conditions) Unknown, the
// node.kubernetes.io/unreachable taints (NoSchedule, NoExecute) and its pods Ready=False;
// a node reporting Ready=False gets the not-ready taints. Pods on a node with NoExecute
// taints are deleted when they do not tolerate them, or once their tolerationSeconds
// (counted from the taint's timeAdded) have passed. The taints go when the node is back.
// "Heard from" is judged by this process's clock (when it saw the heartbeat change), so
// clock skew between node and controller does not matter.
#pragma once

#include <chrono>
#include <map>
#include <thread>

#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "common/mutex.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers {

struct NodeLifecycleOptions {
  std::chrono::milliseconds monitor_period{5000};
  std::chrono::milliseconds grace_period{40000};
};

// Thread-safety: as Controller; mu_ guards the heartbeat table (heard_).
class NodeLifecycleController : public Controller {
 public:
  NodeLifecycleController(client::Client& c, client::SharedInformers& informers,
                          client::EventRecorder& events, NodeLifecycleOptions opts);
  ~NodeLifecycleController() override;
  // run() also starts the monitor that looks at every node each monitor period.
  void run(int workers) override;
  void stop() override;

 protected:
  Result<SyncResult> sync(const std::string& node) override;

 private:
  struct Heard {
    std::string heartbeat, lease_renew;  // the last values seen
    std::chrono::steady_clock::time_point at;
  };
  // When we last heard from the node (a new heartbeat or Lease renewal).
  std::chrono::steady_clock::time_point lastHeard(const json::Value& node);
  Status markUnknown(const json::Value& node);
  Status setTaints(const json::Value& node, const std::string& ready);
  Status markPodsNotReady(const std::string& node);
  // Evicts what is due; the time of the next eviction that is not due yet (0: none).
  std::chrono::milliseconds evictPods(const json::Value& node);

  client::Client& client_;
  client::Informer& nodes_;
  client::Informer& leases_;
  client::Informer& pods_;
  client::EventRecorder& events_;
  NodeLifecycleOptions opts_;
  Mutex mu_;
  std::map<std::string, Heard> heard_ GUARDED_BY(mu_);
  std::atomic<bool> stopping_{false};
  std::thread monitor_;
};

}  // namespace shepherd::controllers
