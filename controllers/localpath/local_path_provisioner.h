// The built-in local-path provisioner, as k3s ships rancher/local-path-provisioner: the
// default StorageClass "local-path" (WaitForFirstConsumer, reclaim Delete, provisioner
// rancher.io/local-path, so manifests written for k3s apply unchanged), and for each claim
// handed to it (the binder's storage-provisioner annotation, the scheduler's selected node)
// a directory <node storage dir>/pvc-<uid>_<ns>_<name> made by a helper pod on that node,
// and a `local` PersistentVolume pinned to the node and pre-bound to the claim. A released
// volume of the class is removed the same way (a helper pod runs `rm -rf`), then deleted.
//
// The node's storage directory comes from its shepherd.io/local-storage-path annotation
// (kubelet-lite: <root-dir>/storage). Helper pods run the node's offline busybox in
// kube-system, one at a time per volume; a sync that waits on one is requeued every second.
// Keys: "class", "claim/<ns>/<name>", "volume/<name>".
#pragma once

#include <string>

#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "common/clock.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers::localpath {

inline constexpr const char* kProvisionerName = "rancher.io/local-path";
inline constexpr const char* kClassName = "local-path";
inline constexpr const char* kStoragePathAnnotation = "shepherd.io/local-storage-path";
inline constexpr const char* kHelperImage = "docker.io/library/busybox:1.36";
inline constexpr const char* kHelperNamespace = "kube-system";

// Thread-safety: as Controller.
class LocalPathProvisioner : public Controller {
 public:
  // How long a helper pod may take (cmdTimeoutSeconds).
  static constexpr std::chrono::seconds kHelperTimeout{120};
  LocalPathProvisioner(client::Client& c, client::SharedInformers& informers, client::EventRecorder& events,
                       const clock::Clock& clk = clock::realClock());

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  Status ensureClass();
  Result<SyncResult> provision(const json::Value& claim);
  Result<SyncResult> remove(const json::Value& volume);
  // Runs `script` on `node` with the volume's parent directory mounted; nullopt while the
  // helper pod still runs (the caller requeues), then its outcome (the pod is deleted).
  // `started` is set when this call created the pod.
  Result<std::optional<Status>> runHelper(const std::string& name, const std::string& node,
                                          const std::string& dir, const std::string& script,
                                          bool* started = nullptr);

  client::Client& client_;
  client::Informer& claims_;
  client::Informer& volumes_;
  client::Informer& nodes_;
  client::Informer& classes_;
  client::EventRecorder& events_;
  const clock::Clock& clock_;
};

}  // namespace shepherd::controllers::localpath
