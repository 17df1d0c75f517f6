// DaemonSet controller, as upstream's (pkg/controller/daemon): one daemon pod on every node
// that should run it (node_fit), pinned there through required node affinity on
// metadata.name so the scheduler binds it; failed pods replaced with back-off, extra ones
// pruned, pods on nodes that may no longer run them deleted; RollingUpdate with
// maxUnavailable or maxSurge and OnDelete (daemonset_rollout.cc); ControllerRevisions for
// history (controller-revision-hash), cleaned up to revisionHistoryLimit; status counts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "controllers/manager/controller.h"
#include "controllers/manager/expectations.h"

namespace shepherd::controllers::daemon {

inline constexpr const char* kTemplateGenerationLabel = "pod-template-generation";
inline constexpr const char* kTemplateGenerationAnnotation = "deprecated.daemonset.template.generation";

// Thread-safety: as Controller; expectations_ has its own lock, backoff_mu_ guards the
// failed-pod back-off.
class DaemonSetController : public Controller {
 public:
  // At most this many creations or deletions per sync (upstream's burstReplicas).
  static constexpr int kBurstReplicas = 250;
  DaemonSetController(client::Client& c, client::SharedInformers& informers, client::EventRecorder& events,
                      const clock::Clock& clk = clock::realClock());

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  struct Sync;
  using NodePods = std::map<std::string, std::vector<client::Object>>;
  void onPodAdd(const client::Object& pod);
  void onPodUpdate(const client::Object& old_pod, const client::Object& pod);
  void onPodDelete(const client::Object& pod);
  void onNodeChange(const client::Object& old_node, const client::Object& node);
  void enqueueMatching(const json::Value& obj);
  client::Object resolveControllerRef(const json::Value& obj) const;

  Result<NodePods> nodesToDaemonPods(Sync& s, bool include_deleted_terminal);
  Status manage(Sync& s);
  void podsShouldBeOnNode(Sync& s, const json::Value& node, NodePods& pods, std::vector<std::string>& create,
                          std::vector<std::string>& del);
  Status syncNodes(Sync& s, const std::vector<std::string>& pods_to_delete,
                   const std::vector<std::string>& create);
  Status updateStatus(Sync& s, bool update_observed_generation);
  // daemonset_rollout.cc
  Status constructHistory(Sync& s);
  Status cleanupHistory(Sync& s);
  Status rollingUpdate(Sync& s);
  // Whether a failed pod on this node must wait before it is deleted again.
  bool inFailedBackoff(const std::string& key, std::chrono::milliseconds& delay);

  client::Client& client_;
  client::Informer& daemonsets_;
  client::Informer& pods_;
  client::Informer& nodes_;
  client::Informer& revisions_;
  client::EventRecorder& events_;
  const clock::Clock& clock_;
  Expectations expectations_;
  struct Backoff {
    std::chrono::milliseconds delay{0};
    std::chrono::steady_clock::time_point last;
  };
  Mutex backoff_mu_;
  std::map<std::string, Backoff> backoff_ GUARDED_BY(backoff_mu_);
};

}  // namespace shepherd::controllers::daemon
