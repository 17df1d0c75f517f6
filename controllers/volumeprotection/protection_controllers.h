// The pvc-protection and pv-protection controllers, as upstream's (pkg/controller/volume/
// pvcprotection, pvprotection): the finalizers StorageObjectInUseProtection admission adds
// (kubernetes.io/pvc-protection, kubernetes.io/pv-protection) are added to objects that
// lack them and removed from objects being deleted once nothing needs them: a claim no
// scheduled pod names (checked against a live list of the namespace's pods before the
// finalizer goes), a volume that is not Bound.
#pragma once

#include <string>

#include "client/shared_informers.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers::volumeprotection {

inline constexpr const char* kClaimFinalizer = "kubernetes.io/pvc-protection";
inline constexpr const char* kVolumeFinalizer = "kubernetes.io/pv-protection";

// Thread-safety: as Controller.
class ClaimProtectionController : public Controller {
 public:
  ClaimProtectionController(client::Client& c, client::SharedInformers& informers);

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  void onPod(const json::Value& pod);
  Result<bool> inUse(const json::Value& claim);

  client::Client& client_;
  client::Informer& claims_;
  client::Informer& pods_;
};

// Thread-safety: as Controller.
class VolumeProtectionController : public Controller {
 public:
  VolumeProtectionController(client::Client& c, client::SharedInformers& informers);

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  client::Client& client_;
  client::Informer& volumes_;
};

// The claims a pod's volumes name (persistentVolumeClaim, and <pod>-<volume> for ephemeral).
std::vector<std::string> claimsOfPod(const json::Value& pod);

}  // namespace shepherd::controllers::volumeprotection
