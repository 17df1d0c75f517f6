// The Job controller's status tracking (upstream's trackJobStatusAndRemoveFinalizers):
// finished pods go into status.uncountedTerminatedPods first, then their tracking
// finalizers are removed, then they move into the counters; the terminal condition is
// written only once nothing is left uncounted or terminating.
#include <algorithm>
#include <atomic>

#include "controllers/job/job_controller.h"
#include "controllers/job/job_sync_context.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/parallel.h"

namespace shepherd::controllers::job {

namespace {

// Pods whose finalizer is gone move from the uncounted lists into the counters.
bool cleanUncounted(JobStatus& st, const std::set<std::string>& with_finalizer) {
  bool changed = false;
  for (auto [list, counter] :
       {std::pair{&st.uncounted_succeeded, &st.succeeded}, std::pair{&st.uncounted_failed, &st.failed}}) {
    auto keep = std::stable_partition(list->begin(), list->end(),
                                      [&](const std::string& uid) { return with_finalizer.count(uid) > 0; });
    int64_t gone = std::distance(keep, list->end());
    if (gone == 0) continue;
    *counter += gone;
    list->erase(keep, list->end());
    changed = true;
  }
  return changed;
}

}  // namespace

Status JobController::updateStatus(SyncContext& ctx) {
  json::Document body;
  body.CopyFrom(ctx.job, body.GetAllocator());
  json::set(body, "status", ctx.status.toJson(body.GetAllocator()), body.GetAllocator());
  auto r = client_.put(jobPath(namespaceOf(ctx.job), nameOf(ctx.job)) + "/status", json::serialize(body));
  if (!r) return r.error();
  // Later writes of this sync go on from the new version.
  json::setString(json::ensureObject(ctx.job, "metadata", ctx.job.GetAllocator()), "resourceVersion",
                  json::getStringPath(*r, {"metadata", "resourceVersion"}), ctx.job.GetAllocator());
  return okStatus();
}

std::vector<bool> JobController::removeTrackingFinalizers(const std::string& key,
                                                          const std::vector<client::Object>& pods,
                                                          Status& first_error) {
  std::vector<std::string> uids;
  for (auto& p : pods) uids.push_back(uidOf(*p));
  expectFinalizersRemoved(key, uids);
  std::vector<char> ok(pods.size(), 0);
  first_error = parallelFor(static_cast<int>(pods.size()), [&](int i) -> Status {
    const json::Value& pod = *pods[static_cast<size_t>(i)];
    auto r = client_.patch(podPath(namespaceOf(pod), nameOf(pod)), removeFinalizerPatch(),
                           "application/strategic-merge-patch+json");
    if (!r) {
      // No update of the pod will show the removal: stop waiting for it.
      finalizerRemovalObserved(key, uidOf(pod));
      if (r.error().code != 404) return r.error();
    }
    ok[static_cast<size_t>(i)] = 1;
    return okStatus();
  });
  return std::vector<bool>(ok.begin(), ok.end());
}

Status JobController::flushUncountedAndRemoveFinalizers(SyncContext& ctx,
                                                        const std::vector<client::Object>& to_remove,
                                                        std::set<std::string>& uids_with_finalizer,
                                                        bool& needs_flush) {
  if (needs_flush) {
    if (auto st = updateStatus(ctx); !st) return st.error();
    MutexLock g(backoff_mu_);
    backoff_[ctx.key] = ctx.new_backoff;
    needs_flush = false;
  }
  Status rmError = okStatus();
  if (!to_remove.empty()) {
    std::vector<bool> removed = removeTrackingFinalizers(ctx.key, to_remove, rmError);
    for (size_t i = 0; i < to_remove.size(); ++i)
      if (removed[i]) uids_with_finalizer.erase(uidOf(*to_remove[i]));
  }
  // Some removals may have failed: record the progress made.
  if (cleanUncounted(ctx.status, uids_with_finalizer)) needs_flush = true;
  if (!rmError && needs_flush)
    if (auto st = updateStatus(ctx); !st) return st.error();
  return rmError;
}

Status JobController::trackStatusAndRemoveFinalizers(SyncContext& ctx, bool needs_flush) {
  bool indexed = ctx.indexed();
  if (indexed)
    std::stable_sort(ctx.pods.begin(), ctx.pods.end(), [](const client::Object& a, const client::Object& b) {
      return completionIndex(*a) < completionIndex(*b);
    });
  std::set<std::string> withFinalizer;
  for (auto& p : ctx.pods)
    if (hasTrackingFinalizer(*p) && !ctx.expected_rm.count(uidOf(*p))) withFinalizer.insert(uidOf(*p));
  if (cleanUncounted(ctx.status, withFinalizer)) needs_flush = true;
  const json::Value* pfp = json::find(ctx.spec(), "podFailurePolicy");
  if (pfp && pfp->IsNull()) pfp = nullptr;
  bool jobDeleting = json::findPath(ctx.job, {"metadata", "deletionTimestamp"}) != nullptr;
  std::vector<client::Object> toRemove;
  std::set<int> newSucceededIdx;
  bool reachedMax = false;
  for (auto& pod : ctx.pods) {
    std::string uid = uidOf(*pod);
    if (!hasTrackingFinalizer(*pod) || ctx.expected_rm.count(uid)) continue;  // done in an earlier sync
    bool considerFailed = ctx.podFailed(*pod);
    bool succeededPod = json::getStringPath(*pod, {"status", "phase"}) == "Succeeded";
    int ix = completionIndex(*pod);
    // A failed pod may keep its finalizer until its index has a replacement (per-index
    // failure counts pass from pod to pod through annotations).
    bool canRemove = jobDeleting || ctx.finished || succeededPod;
    if (!canRemove && considerFailed) {
      auto it = ctx.delayed_deletion.find(ix);
      canRemove = !(ctx.backoffPerIndex() && ix != kUnknownIndex && it != ctx.delayed_deletion.end() &&
                    uidOf(*it->second) == uid);
    }
    if (!canRemove) continue;
    toRemove.push_back(pod);
    if (succeededPod && !ctx.uncounted_failed.count(uid)) {
      if (indexed) {
        if (ctx.validIndex(ix) && !ctx.prev_succeeded_idx.has(ix)) {
          newSucceededIdx.insert(ix);
          needs_flush = true;
        }
      } else if (!ctx.uncounted_succeeded.count(uid)) {
        needs_flush = true;
        ctx.status.uncounted_succeeded.push_back(uid);
      }
    } else if (considerFailed || (ctx.finished && ctx.finished->type != "SuccessCriteriaMet")) {
      // Once the Job is finished, every pod not yet terminated counts as failed.
      if (!ctx.uncounted_failed.count(uid) && (!indexed || ctx.validIndex(ix)) &&
          (!pfp || matchPodFailurePolicy(pfp, *pod).count_failed)) {
        needs_flush = true;
        ctx.status.uncounted_failed.push_back(uid);
      }
    }
    if (newSucceededIdx.size() + ctx.status.uncounted_succeeded.size() + ctx.status.uncounted_failed.size() >=
        static_cast<size_t>(kMaxUncountedPods)) {
      // Keep the status small and this sync short; the next sync goes on.
      reachedMax = true;
      break;
    }
  }
  if (indexed) {
    ctx.succeeded_idx = ctx.succeeded_idx.with(newSucceededIdx);
    std::string s = ctx.succeeded_idx.str();
    if (s != ctx.status.completed_indexes) needs_flush = true;
    ctx.status.succeeded = ctx.succeeded_idx.total();
    ctx.status.completed_indexes = s;
    std::optional<std::string> failedStr;
    if (ctx.failed_idx) failedStr = ctx.failed_idx->str();
    if (failedStr != ctx.status.failed_indexes) {
      ctx.status.failed_indexes = failedStr;
      needs_flush = true;
    }
  }
  if (ctx.finished && ctx.finished->type == "FailureTarget") {
    // The interim condition goes out before the finalizers (and so the pods) go.
    ctx.status.conditions.push_back(*ctx.finished);
    needs_flush = true;
    ctx.finished = makeCondition(clock_, "Failed", ctx.finished->reason, ctx.finished->message);
  }
  if (ctx.finished && ctx.finished->type == "SuccessCriteriaMet") {
    if (!ctx.hasCondition("SuccessCriteriaMet")) {
      ctx.status.conditions.push_back(*ctx.finished);
      needs_flush = true;
    }
    ctx.finished = makeCondition(clock_, "Complete", ctx.finished->reason, ctx.finished->message);
  }
  if (auto st = flushUncountedAndRemoveFinalizers(ctx, toRemove, withFinalizer, needs_flush); !st)
    return st.error();
  bool finishedNow = !reachedMax && enactFinished(ctx);
  if (finishedNow) needs_flush = true;
  if (needs_flush) {
    if (auto st = updateStatus(ctx); !st) return st.error();
    if (finishedNow) recordFinished(ctx);
  }
  return okStatus();
}

bool JobController::enactFinished(SyncContext& ctx) {
  if (!ctx.finished) return false;
  if (!ctx.status.uncounted_succeeded.empty() || !ctx.status.uncounted_failed.empty()) return false;
  if (ctx.terminating > 0) return false;  // terminal only once no pod is still terminating
  std::string now = clock::rfc3339(clock_.now());
  ctx.ensureCondition(ctx.finished->type, ctx.finished->status, ctx.finished->reason, ctx.finished->message,
                      now);
  if (ctx.finished->type == "Complete") ctx.status.completion_time = now;
  return true;
}

void JobController::recordFinished(const SyncContext& ctx) {
  if (ctx.finished->type == "Complete") {
    auto completions = json::getInt(ctx.spec(), "completions");
    if (completions && ctx.status.succeeded > *completions)
      events_.event(ctx.job, "batch/v1", "Job", "Warning", "TooManySucceededPods",
                    "Too many succeeded pods running after completion count reached");
    events_.event(ctx.job, "batch/v1", "Job", "Normal", "Completed", "Job completed");
    return;
  }
  events_.event(ctx.job, "batch/v1", "Job", "Warning", ctx.finished->reason, ctx.finished->message);
}

}  // namespace shepherd::controllers::job
