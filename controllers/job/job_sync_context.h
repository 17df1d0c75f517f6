// One sync of one Job (upstream's syncJobCtx): the Job's copy and status being rebuilt,
// its pods, what has finished, and the judgement of whether the Job is done. Built and
// used by one worker only.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "client/informer.h"
#include "common/clock.h"
#include "controllers/job/indexed_job.h"
#include "controllers/job/job_controller.h"
#include "controllers/job/job_policies.h"

namespace shepherd::controllers::job {

bool hasTrackingFinalizer(const json::Value& pod);
// Complete=True or Failed=True.
bool jobFinished(const json::Value& job);
// spec.managedBy names a controller other than this one.
bool managedElsewhere(const json::Value& job);
std::string podPath(const std::string& ns, const std::string& name);
std::string jobPath(const std::string& ns, const std::string& name);
// The strategic merge patch that removes the tracking finalizer.
std::string removeFinalizerPatch();
JobCondition makeCondition(const clock::Clock& clk, const std::string& type, const std::string& reason,
                           const std::string& message, const std::string& status = "True");

struct JobController::SyncContext {
  SyncContext(std::string key, const json::Value& job, const clock::Clock& clk);

  const json::Value& spec() const;
  bool indexed() const;
  bool backoffPerIndex() const;
  // podReplacementPolicy Failed (always so with a pod failure policy): terminating pods
  // are not replaced until they have failed.
  bool onlyReplaceFailed() const;
  // Failed, or (unless only failed pods are replaced) deleted before it succeeded.
  bool podFailed(const json::Value& pod) const;
  bool validIndex(int ix) const;

  // The claimed pods; `expected_rm` the UIDs whose finalizer removal is still pending.
  void setPods(std::vector<client::Object> claimed, std::set<std::string> expected_rm);
  // The pods that finished since the status last counted them; the counters and the
  // back-off record with them.
  void countFinished();
  // Whether the Job has failed or met its success criteria (sets `finished`), and when
  // to look again for activeDeadlineSeconds.
  void judge(std::optional<std::chrono::milliseconds>& requeue);
  // Indexes not to create pods for: succeeded, active, failed (and terminating when only
  // failed pods are replaced).
  OrderedIntervals takenIndexes() const;
  // Re-creation delay of an index from its last failed pod (backoffLimitPerIndex).
  std::chrono::milliseconds indexBackoff(int ix) const;
  void addIndexFailureCounts(int ix, json::Value& annotations, json::Allocator& a) const;
  // ensureJobConditionStatus: true when the list changed.
  bool ensureCondition(const std::string& type, const std::string& status, const std::string& reason,
                       const std::string& message, const std::string& now);
  bool hasCondition(const std::string& type) const;

  std::string key;
  json::Document job;
  JobStatus status;
  const clock::Clock& clk;
  std::vector<client::Object> pods, active;
  std::optional<JobCondition> finished;
  int64_t succeeded = 0, failed = 0, terminating = 0, ready = 0;
  OrderedIntervals prev_succeeded_idx, succeeded_idx;
  std::optional<OrderedIntervals> failed_idx;
  BackoffRecord backoff, new_backoff;
  std::set<std::string> expected_rm, uncounted_succeeded, uncounted_failed;
  std::map<int, client::Object> delayed_deletion;  // per index, the failed pod kept until replaced

 private:
  std::vector<client::Object> validFinished(const std::set<std::string>& uncounted, bool want_succeeded) const;
  void judgeIndexes();
};

}  // namespace shepherd::controllers::job
