// Deployment controller, as upstream's: one ReplicaSet per pod template (named by the
// template's hash, labelled pod-template-hash), revisions in annotations, RollingUpdate
// within maxSurge/maxUnavailable and Recreate, proportional scaling of a rollout in
// flight, pause/resume, revisionHistoryLimit clean-up, and status with the Available and
// Progressing conditions (progressDeadlineSeconds). `kubectl rollout status|history|undo|
// restart|pause|resume` work on what it maintains.
#pragma once

#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "controllers/manager/controller.h"
#include "meta/selectors.h"

namespace shepherd::controllers {

// Thread-safety: as Controller; handlers only read caches and queue keys.
class DeploymentController : public Controller {
 public:
  DeploymentController(client::Client& c, client::SharedInformers& informers, client::EventRecorder& events);

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  struct ReplicaSets {
    client::Object new_rs;            // null when none matches the template (yet)
    std::vector<client::Object> old;  // the others, oldest first
    std::vector<client::Object> all() const;
  };
  void onReplicaSet(const client::Object& rs);
  void enqueueOwner(const json::Value& obj, const std::string& kind);
  Result<std::vector<client::Object>> claimReplicaSets(const json::Value& d,
                                                       const meta::LabelSelector& selector);
  Result<ReplicaSets> replicaSetsAndRevision(json::Document& d, const std::vector<client::Object>& owned,
                                             bool create);
  // Scales `rs` to `size` and refreshes its replica annotations; true if it changed.
  Result<bool> scaleReplicaSet(const json::Value& d, const client::Object& rs, int64_t size);
  Status scale(const json::Value& d, const ReplicaSets& sets);
  Result<bool> reconcileNewReplicaSet(const json::Value& d, const ReplicaSets& sets);
  Result<bool> reconcileOldReplicaSets(const json::Value& d, const ReplicaSets& sets);
  bool oldPodsRunning(const json::Value& d, const ReplicaSets& sets);
  void cleanup(const json::Value& d, const ReplicaSets& sets);
  Status patchStatus(const json::Value& d, const json::Value& status);
  json::Document calculateStatus(const json::Value& d, const ReplicaSets& sets);
  // Writes the rollout's status and says when to look again (0: only on change).
  Result<SyncResult> syncRolloutStatus(const json::Value& d, const ReplicaSets& sets);

  client::Client& client_;
  client::Informer& deployments_;
  client::Informer& replicasets_;
  client::Informer& pods_;
  client::EventRecorder& events_;
};

}  // namespace shepherd::controllers
