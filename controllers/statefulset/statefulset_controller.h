// StatefulSet controller, as upstream's (pkg/controller/statefulset): pods <set>-<ordinal>
// with stable identities and claims (stateful_pod), created in ordinal order and each
// only once the one before is Running and Ready (OrderedReady), or all at once
// (Parallel); scale-down from the highest ordinal; RollingUpdate from the highest ordinal
// down to the partition, one pod at a time, or OnDelete; current and update revisions as
// ControllerRevisions (a rollback reuses the old one); claims owned per the retention
// policy (claims are read live: there are few, and only sets with claim templates have
// any). No expectations: fixed names make a duplicate create fail.
#pragma once

#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "common/clock.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers::statefulset {

// Thread-safety: as Controller.
class StatefulSetController : public Controller {
 public:
  // Parallel pod management creates and deletes in batches of at most this many.
  static constexpr int kMaxBatchSize = 500;
  StatefulSetController(client::Client& c, client::SharedInformers& informers, client::EventRecorder& events,
                        const clock::Clock& clk = clock::realClock());

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  struct Sync;
  void onPodAdd(const client::Object& pod);
  void onPodUpdate(const client::Object& old_pod, const client::Object& pod);
  void onPodDelete(const client::Object& pod);
  void enqueueMatching(const json::Value& pod);
  client::Object resolveControllerRef(const json::Value& pod) const;

  // statefulset_control.cc
  Status updateStatefulSet(Sync& s);
  Status resolveRevisions(Sync& s);
  Status processReplica(Sync& s, int64_t index, bool& stop);
  Status createPod(Sync& s, json::Document& pod);
  Status deletePod(Sync& s, const json::Value& pod);
  Status updatePod(Sync& s, const json::Value& pod, bool condemned);
  Status fixClaims(Sync& s, const json::Value& pod, bool condemned);
  Status writeStatus(Sync& s);
  Status truncateHistory(Sync& s);

  client::Client& client_;
  client::Informer& sets_;
  client::Informer& pods_;
  client::Informer& revisions_;
  client::EventRecorder& events_;
  const clock::Clock& clock_;
};

}  // namespace shepherd::controllers::statefulset
