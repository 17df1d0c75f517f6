// Disruption controller, as upstream's (pkg/controller/disruption): keeps each
// PodDisruptionBudget's status true to its pods - how many are healthy (Ready, not being
// deleted, not just evicted), how many must be (minAvailable, or the controllers' scale
// less maxUnavailable), how many disruptions are allowed, the evictions still expected
// (status.disruptedPods, forgotten after two minutes) and the DisruptionAllowed condition;
// if that cannot be worked out, it allows none (SyncFailed). It also resets to False a
// DisruptionTarget condition left on a pod that was never deleted (after two minutes).
//
// One work queue holds both kinds of key: "pdb/<ns>/<name>" and "pod/<ns>/<name>".
#pragma once

#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "common/clock.h"
#include "controllers/disruption/pod_controllers.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers::disruption {

// Thread-safety: as Controller.
class DisruptionController : public Controller {
 public:
  // stalePodDisruptionTimeout.
  static constexpr std::chrono::minutes kStaleDisruptionTimeout{2};
  DisruptionController(client::Client& c, client::SharedInformers& informers, client::EventRecorder& events,
                       const clock::Clock& clk = clock::realClock());

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  Result<SyncResult> syncBudget(const std::string& key);
  Result<SyncResult> syncStalePod(const std::string& key);
  // trySync: the status the pods call for, written when it differs; `recheck` is set when
  // an expected eviction expires later.
  Status trySync(const json::Value& budget, std::optional<std::chrono::milliseconds>& recheck);
  Status writeStatus(const json::Value& budget);
  std::vector<client::Object> podsFor(const json::Value& budget) const;
  // getPdbForPod: the first budget (by name) selecting the pod, with an event when several do.
  client::Object budgetFor(const json::Value& pod);
  void onPod(const client::Object& pod, bool deleted);
  // How long until the pod's DisruptionTarget condition is stale, or nullopt when it has none
  // that can go stale.
  std::optional<std::chrono::milliseconds> staleConditionIn(const json::Value& pod) const;

  client::Client& client_;
  client::Informer& budgets_;
  client::Informer& pods_;
  PodControllers controllers_;
  client::EventRecorder& events_;
  const clock::Clock& clock_;
};

}  // namespace shepherd::controllers::disruption
