// The scheduler's VolumeBinding plugin, as upstream's (pkg/scheduler/framework/plugins/
// volumebinding): a pod's claims must exist, not be being deleted, and be bound unless
// their class waits for the first consumer; a node fits when the bound volumes' node
// affinity admits it and each waiting claim has an Available volume there or a class that
// can provision one. After the node is chosen (PreBind) a waiting claim gets its volume's
// claimRef (pre-bound, the binder completes it) or the volume.kubernetes.io/selected-node
// annotation (for the provisioner), and the pod is bound only once every claim is.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "client/informer.h"

namespace shepherd::scheduler {

// What PreFilter found out about a pod's claims.
struct PodClaims {
  bool any = false;                           // the pod has claim (or ephemeral) volumes
  std::string unresolvable;                   // why no node can do (PreFilter's failure), or ""
  std::vector<client::Object> bound_volumes;  // volumes of fully bound claims
  bool missing_volume = false;                // a bound claim's volume does not exist
  std::vector<client::Object> delayed;        // unbound WaitForFirstConsumer claims
  std::vector<std::string> claim_keys;        // every claim, as "ns/name"
};

// Thread-safety: the informers are safe to read from any thread; start/stop from one.
class VolumeBinding {
 public:
  explicit VolumeBinding(client::Client& client);
  void start();
  bool waitForSync(int timeout_ms);
  void stop();

  PodClaims preFilter(const json::Value& pod) const;
  // Why the pod's volumes cannot be on `node` (upstream's reasons, in its order), or none.
  std::vector<std::string> filter(const PodClaims& claims, const json::Value& node) const;
  // PreBind on the chosen node: an error message if the volumes cannot be bound in time.
  std::string preBind(const PodClaims& claims, const json::Value& node, std::chrono::seconds timeout,
                      const std::atomic<bool>& stopping);

 private:
  std::vector<const json::Value*> volumesOfClass(const std::string& cls,
                                                 std::vector<client::Object>& keep) const;
  bool canProvision(const json::Value& claim) const;

  client::Client& client_;
  client::Informer claims_;
  client::Informer volumes_;
  client::Informer classes_;
};

}  // namespace shepherd::scheduler
