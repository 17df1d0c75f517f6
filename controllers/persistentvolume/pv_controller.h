// PersistentVolume binder, as upstream's persistentvolume-binder (pkg/controller/volume/
// persistentvolume): binds each unbound claim to the best available volume (or the one it
// or the volume names), in upstream's four writes - volume claimRef, volume phase, claim
// volumeName with its bind annotations, claim status; gives a class-less claim the default
// class; hands claims of a class with a provisioner to that provisioner (the
// storage-provisioner annotations; under WaitForFirstConsumer only once the scheduler
// chose a node); marks claims Lost and volumes Available, Bound or Released; and reclaims
// released volumes: Retain keeps them, Delete is the provisioner's for the volumes it
// made. Events come from "persistentvolume-controller".
//
// One work queue holds both kinds of key: "claim/<ns>/<name>" and "volume/<name>"; an
// unbound claim is looked at again every 15 s (--pvclaimbinder-sync-period).
#pragma once

#include <set>
#include <string>

#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "common/mutex.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers::persistentvolume {

// Thread-safety: as Controller; events_sent_ is guarded by mu_.
class PersistentVolumeController : public Controller {
 public:
  static constexpr std::chrono::seconds kResync{15};
  PersistentVolumeController(client::Client& c, client::SharedInformers& informers,
                             client::EventRecorder& events);

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  Result<SyncResult> syncClaim(const json::Value& claim);
  Result<SyncResult> syncUnboundClaim(const json::Value& claim);
  Result<SyncResult> syncBoundClaim(const json::Value& claim);
  Result<SyncResult> syncVolume(const json::Value& volume);
  // The four writes of a bind; each is skipped when it changes nothing.
  Status bind(const json::Value& volume, const json::Value& claim);
  Status setClaimPhase(const json::Value& claim, const std::string& phase);
  Status setVolumePhase(const json::Value& volume, const std::string& phase, const std::string& message = "");
  Status unbindVolume(const json::Value& volume);
  // Phase Released; the volume as stored after.
  Result<json::Document> releaseVolume(const json::Value& volume);
  Status reclaim(const json::Value& volume);
  Result<SyncResult> provision(const json::Value& claim, const json::Value& storage_class);
  client::Object defaultClass() const;
  // The claim a volume's claimRef names, read again from the server when the informer's
  // copy is missing or another object of that name (upstream's live lookup).
  Result<client::Object> claimOf(const json::Value& volume);
  void claimEvent(const json::Value& claim, const std::string& type, const std::string& reason,
                  const std::string& message);
  void volumeEvent(const json::Value& volume, const std::string& type, const std::string& reason,
                   const std::string& message);
  // Events repeated on every resync (waiting, no volume) are sent once per object and reason.
  bool firstTime(const json::Value& obj, const std::string& reason);

  client::Client& client_;
  client::Informer& claims_;
  client::Informer& volumes_;
  client::Informer& classes_;
  client::EventRecorder& events_;
  Mutex mu_;
  std::set<std::string> events_sent_ GUARDED_BY(mu_);  // "<uid>/<reason>"
};

}  // namespace shepherd::controllers::persistentvolume
