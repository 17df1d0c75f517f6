// Ephemeral volume controller, as upstream's (pkg/controller/volume/ephemeral): a pod's
// generic ephemeral volume gets its claim, <pod>-<volume>, made from the volume's
// volumeClaimTemplate and owned by the pod (controller, blockOwnerDeletion), so it goes
// with the pod (garbage collector). A claim of that name the pod does not own is reported
// (FailedBinding) and left alone; a deleted claim is made again while the pod exists.
#pragma once

#include <string>

#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers::ephemeral {

// Thread-safety: as Controller.
class EphemeralVolumeController : public Controller {
 public:
  EphemeralVolumeController(client::Client& c, client::SharedInformers& informers,
                            client::EventRecorder& events);

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  client::Client& client_;
  client::Informer& pods_;
  client::Informer& claims_;
  client::EventRecorder& events_;
};

}  // namespace shepherd::controllers::ephemeral
