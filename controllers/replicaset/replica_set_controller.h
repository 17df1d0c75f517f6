// ReplicaSet controller, as upstream's: keeps spec.replicas active pods for each
// ReplicaSet (or ReplicationController: the same controller over another kind, as
// upstream's replication manager) — creates missing ones from the template in slow-start batches (1, 2, 4,
// ...), deletes surplus ones in upstream's preference order, adopts orphan pods its selector matches and
// releases pods that stop matching — guarded by expectations so a lagging cache never causes extra pods, and
// reports status (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas with minReadySeconds,
// observedGeneration, ReplicaFailure).
#pragma once

#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "controllers/manager/controller.h"
#include "controllers/manager/expectations.h"
#include "controllers/replicaset/replicated_kind.h"
#include "meta/selectors.h"

namespace shepherd::controllers {

// Thread-safety: as Controller; handlers only read caches, note expectations and queue.
class ReplicaSetController : public Controller {
 public:
  // At most this many creations or deletions per sync (upstream's burstReplicas).
  static constexpr int kBurstReplicas = 500;
  ReplicaSetController(client::Client& c, client::SharedInformers& informers, client::EventRecorder& events,
                       const ReplicatedKind& kind = replicaSetKind());

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  void onPodAdd(const client::Object& pod);
  void onPodUpdate(const client::Object& old_pod, const client::Object& pod);
  void onPodDelete(const client::Object& pod);
  // The ReplicaSet key a pod's controllerRef names, if it is one of ours.
  std::string ownerKey(const json::Value& pod) const;
  void enqueueMatching(const json::Value& pod);
  Result<std::vector<client::Object>> claimPods(const json::Value& rs, const meta::LabelSelector& selector);
  Status manageReplicas(const json::Value& rs, const std::string& key,
                        const std::vector<client::Object>& pods);
  Status createPods(const json::Value& rs, const std::string& key, int n);
  Status updateStatus(const json::Value& rs, const std::vector<client::Object>& pods,
                      const Status& manage_error);

  const ReplicatedKind& kind_;
  client::Client& client_;
  client::Informer& replicasets_;
  client::Informer& pods_;
  client::EventRecorder& events_;
  Expectations expectations_;
};

}  // namespace shepherd::controllers
