// Job controller, as upstream's (pkg/controller/job): runs each Job's pods to completion.
// Pods carry the batch.kubernetes.io/job-tracking finalizer until the controller has
// counted them (first into status.uncountedTerminatedPods, then into succeeded/failed),
// so no pod is counted twice or lost across restarts; NonIndexed and Indexed completion,
// parallelism, backoffLimit and backoffLimitPerIndex with exponential re-creation delay,
// activeDeadlineSeconds, podFailurePolicy, successPolicy, podReplacementPolicy, suspend
// and resume; terminal conditions set in two steps (FailureTarget or SuccessCriteriaMet,
// then Failed or Complete once no pod is terminating). Orphaned pods lose the finalizer.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "controllers/job/indexed_job.h"
#include "controllers/job/job_policies.h"
#include "controllers/manager/controller.h"
#include "controllers/manager/expectations.h"

namespace shepherd::controllers::job {

inline constexpr const char* kTrackingFinalizer = "batch.kubernetes.io/job-tracking";

struct JobCondition {
  std::string type, status, reason, message, last_probe, last_transition;
};

// The fields of a Job's status the controller owns, read from and written back to JSON
// (other fields of the stored status are kept as they are).
struct JobStatus {
  std::vector<JobCondition> conditions;
  std::string start_time, completion_time;
  int64_t active = 0, succeeded = 0, failed = 0;
  std::optional<int64_t> terminating, ready;
  std::string completed_indexes;
  std::optional<std::string> failed_indexes;
  std::vector<std::string> uncounted_succeeded, uncounted_failed;

  static JobStatus fromJson(const json::Value* status);
  json::Value toJson(json::Allocator& a) const;
};

// Thread-safety: as Controller; the handlers and workers share expectations_ (its own
// lock), finalizer_mu_ and backoff_mu_.
class JobController : public Controller {
 public:
  // At most this many pods created or deleted per sync (upstream's MaxPodCreateDeletePerSync).
  static constexpr int kMaxPodCreateDeletePerSync = 500;
  // At most this many UIDs in status.uncountedTerminatedPods at once.
  static constexpr int kMaxUncountedPods = 500;
  JobController(client::Client& c, client::SharedInformers& informers, client::EventRecorder& events,
                const clock::Clock& clk = clock::realClock());

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  struct SyncContext;
  // Informer handlers.
  void onPodAdd(const client::Object& pod);
  void onPodUpdate(const client::Object& old_pod, const client::Object& pod);
  void onPodDelete(const client::Object& pod, bool final);
  void onJobUpdate(const client::Object& old_job, const client::Object& job);
  void onJobDelete(const client::Object& job);
  client::Object resolveControllerRef(const json::Value& pod) const;
  void enqueueMatching(const json::Value& pod);
  void enqueueBatched(const json::Value& job);
  void enqueueOrphan(const json::Value& pod);
  void cleanupPodFinalizers(const json::Value& job);

  Result<SyncResult> syncJob(const std::string& key);
  Status syncOrphanPod(const std::string& pod_key);
  Result<std::vector<client::Object>> podsForJob(const json::Value& job);
  // manageJob: creates or deletes pods; returns the active count after it.
  Result<int64_t> manageJob(SyncContext& ctx, std::optional<std::chrono::milliseconds>& requeue);
  Status createPods(SyncContext& ctx, int n, const std::vector<int>& indexes, int64_t& active);
  // Deletes pods (removing the tracking finalizer first unless `keep_finalizers`);
  // counts the deleted ones and the ready ones among them.
  Status deletePods(SyncContext& ctx, const std::vector<client::Object>& pods, bool keep_finalizers,
                    int64_t& deleted, int64_t& deleted_ready);
  std::vector<client::Object> activePodsForRemoval(const SyncContext& ctx, int rm_at_least) const;

  // Status tracking (job_tracking.cc).
  Status trackStatusAndRemoveFinalizers(SyncContext& ctx, bool needs_flush);
  Status flushUncountedAndRemoveFinalizers(SyncContext& ctx, const std::vector<client::Object>& to_remove,
                                           std::set<std::string>& uids_with_finalizer, bool& needs_flush);
  Status updateStatus(SyncContext& ctx);
  std::vector<bool> removeTrackingFinalizers(const std::string& key, const std::vector<client::Object>& pods,
                                             Status& first_error);
  bool enactFinished(SyncContext& ctx);
  void recordFinished(const SyncContext& ctx);

  // Finalizer expectations: UIDs whose finalizer removal this controller asked for and
  // has not yet seen.
  void expectFinalizersRemoved(const std::string& key, const std::vector<std::string>& uids);
  void finalizerRemovalObserved(const std::string& key, const std::string& uid);
  std::set<std::string> expectedFinalizerRemovals(const std::string& key);
  void forgetJob(const std::string& key);

  client::Client& client_;
  client::Informer& jobs_;
  client::Informer& pods_;
  client::EventRecorder& events_;
  const clock::Clock& clock_;
  Expectations expectations_;
  Mutex finalizer_mu_;
  std::map<std::string, std::set<std::string>> finalizer_removals_ GUARDED_BY(finalizer_mu_);
  Mutex backoff_mu_;
  std::map<std::string, BackoffRecord> backoff_ GUARDED_BY(backoff_mu_);
};

}  // namespace shepherd::controllers::job
