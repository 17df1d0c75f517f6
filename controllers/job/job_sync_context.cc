#include "controllers/job/job_sync_context.h"

#include <algorithm>

#include "controllers/manager/job_state.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/pod_state.h"

namespace shepherd::controllers::job {

namespace {

const json::Value& objectOr(const json::Value* v) {
  static const json::Value empty(rapidjson::kObjectType);
  return v && v->IsObject() ? *v : empty;
}

bool terminal(const json::Value& pod) {
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

bool terminatingPod(const json::Value& pod) {
  return json::findPath(pod, {"metadata", "deletionTimestamp"}) && !terminal(pod);
}

void keepEarliest(std::optional<std::chrono::milliseconds>& requeue, std::chrono::milliseconds d) {
  if (d.count() < 0) d = std::chrono::milliseconds(0);
  if (!requeue || d < *requeue) requeue = d;
}

std::optional<clock::TimePoint> timeOf(const std::string& s) {
  return s.empty() ? std::nullopt : clock::parseRfc3339(s);
}

}  // namespace

bool hasTrackingFinalizer(const json::Value& pod) {
  const json::Value* f = json::findPath(pod, {"metadata", "finalizers"});
  if (!f || !f->IsArray()) return false;
  for (auto& x : f->GetArray())
    if (x.IsString() && json::view(x) == kTrackingFinalizer) return true;
  return false;
}

bool jobFinished(const json::Value& job) {
  return finishedJobCondition(job) != nullptr;
}

bool managedElsewhere(const json::Value& job) {
  const json::Value* mb = json::findPath(job, {"spec", "managedBy"});
  return mb && mb->IsString() && json::view(*mb) != "kubernetes.io/job-controller";
}

std::string podPath(const std::string& ns, const std::string& name) {
  return "/api/v1/namespaces/" + client::urlEncode(ns) + "/pods/" + client::urlEncode(name);
}

std::string jobPath(const std::string& ns, const std::string& name) {
  return "/apis/batch/v1/namespaces/" + client::urlEncode(ns) + "/jobs/" + client::urlEncode(name);
}

std::string removeFinalizerPatch() {
  return std::string(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":[")") + kTrackingFinalizer +
         "\"]}}";
}

JobCondition makeCondition(const clock::Clock& clk, const std::string& type, const std::string& reason,
                           const std::string& message, const std::string& status) {
  std::string now = clock::rfc3339(clk.now());
  return JobCondition{type, status, reason, message, now, now};
}

JobStatus JobStatus::fromJson(const json::Value* status) {
  JobStatus s;
  const json::Value& st = objectOr(status);
  if (const json::Value* conds = json::find(st, "conditions"); conds && conds->IsArray())
    for (auto& c : conds->GetArray())
      s.conditions.push_back(
          {std::string(json::getString(c, "type")), std::string(json::getString(c, "status")),
           std::string(json::getString(c, "reason")), std::string(json::getString(c, "message")),
           std::string(json::getString(c, "lastProbeTime")),
           std::string(json::getString(c, "lastTransitionTime"))});
  s.start_time = json::getString(st, "startTime");
  s.completion_time = json::getString(st, "completionTime");
  s.active = json::getInt(st, "active").value_or(0);
  s.succeeded = json::getInt(st, "succeeded").value_or(0);
  s.failed = json::getInt(st, "failed").value_or(0);
  s.terminating = json::getInt(st, "terminating");
  s.ready = json::getInt(st, "ready");
  s.completed_indexes = json::getString(st, "completedIndexes");
  if (const json::Value* f = json::find(st, "failedIndexes"); f && f->IsString())
    s.failed_indexes = std::string(json::view(*f));
  for (auto [k, out] :
       {std::pair{"succeeded", &s.uncounted_succeeded}, std::pair{"failed", &s.uncounted_failed}})
    if (const json::Value* v = json::findPath(st, {"uncountedTerminatedPods", k}); v && v->IsArray())
      for (auto& u : v->GetArray())
        if (u.IsString()) out->emplace_back(json::view(u));
  return s;
}

json::Value JobStatus::toJson(json::Allocator& a) const {
  json::Value st(rapidjson::kObjectType);
  if (!conditions.empty()) {
    json::Value list(rapidjson::kArrayType);
    for (auto& c : conditions) {
      json::Value v(rapidjson::kObjectType);
      json::setString(v, "type", c.type, a);
      json::setString(v, "status", c.status, a);
      if (!c.last_probe.empty()) json::setString(v, "lastProbeTime", c.last_probe, a);
      if (!c.last_transition.empty()) json::setString(v, "lastTransitionTime", c.last_transition, a);
      if (!c.reason.empty()) json::setString(v, "reason", c.reason, a);
      if (!c.message.empty()) json::setString(v, "message", c.message, a);
      list.PushBack(std::move(v), a);
    }
    json::set(st, "conditions", std::move(list), a);
  }
  if (!start_time.empty()) json::setString(st, "startTime", start_time, a);
  if (!completion_time.empty()) json::setString(st, "completionTime", completion_time, a);
  if (active) json::set(st, "active", json::Value(active), a);
  if (succeeded) json::set(st, "succeeded", json::Value(succeeded), a);
  if (failed) json::set(st, "failed", json::Value(failed), a);
  if (terminating) json::set(st, "terminating", json::Value(*terminating), a);
  if (!completed_indexes.empty()) json::setString(st, "completedIndexes", completed_indexes, a);
  if (failed_indexes) json::setString(st, "failedIndexes", *failed_indexes, a);
  json::Value unc(rapidjson::kObjectType);
  for (auto [k, list] :
       {std::pair{"succeeded", &uncounted_succeeded}, std::pair{"failed", &uncounted_failed}})
    if (!list->empty()) {
      json::Value arr(rapidjson::kArrayType);
      for (auto& u : *list) arr.PushBack(json::str(u, a), a);
      json::set(unc, k, std::move(arr), a);
    }
  json::set(st, "uncountedTerminatedPods", std::move(unc), a);
  if (ready) json::set(st, "ready", json::Value(*ready), a);
  return st;
}

JobController::SyncContext::SyncContext(std::string k, const json::Value& shared, const clock::Clock& c)
    : key(std::move(k)), clk(c) {
  job.CopyFrom(shared, job.GetAllocator());
  status = JobStatus::fromJson(json::find(job, "status"));
  uncounted_succeeded.insert(status.uncounted_succeeded.begin(), status.uncounted_succeeded.end());
  uncounted_failed.insert(status.uncounted_failed.begin(), status.uncounted_failed.end());
}

const json::Value& JobController::SyncContext::spec() const {
  return objectOr(json::find(job, "spec"));
}

bool JobController::SyncContext::indexed() const {
  return json::getString(spec(), "completionMode") == "Indexed";
}

bool JobController::SyncContext::backoffPerIndex() const {
  return json::find(spec(), "backoffLimitPerIndex") != nullptr;
}

bool JobController::SyncContext::onlyReplaceFailed() const {
  const json::Value* pfp = json::find(spec(), "podFailurePolicy");
  return json::getString(spec(), "podReplacementPolicy") == "Failed" || (pfp && !pfp->IsNull());
}

bool JobController::SyncContext::podFailed(const json::Value& pod) const {
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  if (phase == "Failed") return true;
  if (onlyReplaceFailed()) return false;
  // Deleted pods count as failures: orphans never get the chance to reach Failed.
  return json::findPath(pod, {"metadata", "deletionTimestamp"}) && phase != "Succeeded";
}

bool JobController::SyncContext::validIndex(int ix) const {
  return ix != kUnknownIndex && ix < json::getInt(spec(), "completions").value_or(0);
}

void JobController::SyncContext::setPods(std::vector<client::Object> claimed, std::set<std::string> rm) {
  pods = std::move(claimed);
  expected_rm = std::move(rm);
  for (auto& p : pods) {
    if (podActive(*p)) {
      active.push_back(p);
      if (podReady(*p)) ++ready;
    }
    if (terminatingPod(*p)) ++terminating;
  }
}

std::vector<client::Object> JobController::SyncContext::validFinished(const std::set<std::string>& uncounted,
                                                                      bool want_succeeded) const {
  std::vector<client::Object> out;
  for (auto& p : pods) {
    std::string uid = uidOf(*p);
    // Pods without the finalizer, or already listed as uncounted, are counted already.
    if (!hasTrackingFinalizer(*p) || uncounted.count(uid) || expected_rm.count(uid)) continue;
    if (indexed() && !validIndex(completionIndex(*p))) continue;
    bool match = want_succeeded ? json::getStringPath(*p, {"status", "phase"}) == "Succeeded" : podFailed(*p);
    if (match) out.push_back(p);
  }
  return out;
}

void JobController::SyncContext::countFinished() {
  auto newSucceeded = validFinished(uncounted_succeeded, true);
  auto newFailed = validFinished(uncounted_failed, false);
  const json::Value* pfp = json::find(spec(), "podFailurePolicy");
  int64_t counted = 0;
  for (auto& p : newFailed)
    if (matchPodFailurePolicy(pfp, *p).count_failed) ++counted;
  succeeded = status.succeeded + static_cast<int64_t>(newSucceeded.size() + uncounted_succeeded.size());
  failed = status.failed + counted + static_cast<int64_t>(uncounted_failed.size());
  if (status.start_time.empty() && !json::getBool(spec(), "suspend"))
    status.start_time = clock::rfc3339(clk.now());
  new_backoff = nextBackoffRecord(backoff, std::move(newSucceeded), std::move(newFailed));
}

bool JobController::SyncContext::hasCondition(const std::string& type) const {
  for (auto& c : status.conditions)
    if (c.type == type && c.status == "True") return true;
  return false;
}

void JobController::SyncContext::judge(std::optional<std::chrono::milliseconds>& requeue) {
  const json::Value& s = spec();
  const json::Value* pfp = json::find(s, "podFailurePolicy");
  if (pfp && pfp->IsNull()) pfp = nullptr;
  for (auto& c : status.conditions)
    if (c.type == "SuccessCriteriaMet" && c.status == "True") finished = c;
  if (!finished) {
    for (auto& c : status.conditions)
      if (c.type == "FailureTarget" && c.status == "True")
        finished = makeCondition(clk, "Failed", c.reason, c.message);
    if (!finished && pfp)
      for (auto& p : pods) {
        if (!podFailed(*p)) continue;
        if (auto msg = matchPodFailurePolicy(pfp, *p).fail_job_message) {
          finished = makeCondition(clk, "FailureTarget", "PodFailurePolicy", *msg);
          break;
        }
      }
  }
  bool suspended = json::getBool(s, "suspend");
  if (!finished) {
    int64_t limit = json::getInt(s, "backoffLimit").value_or(6);
    bool pastOnFailure = false;
    if (json::getStringPath(s, {"template", "spec", "restartPolicy"}) == "OnFailure") {
      int64_t restarts = 0;
      for (auto& p : pods) {
        std::string_view phase = json::getStringPath(*p, {"status", "phase"});
        if (phase != "Running" && phase != "Pending") continue;
        for (const char* list : {"initContainerStatuses", "containerStatuses"})
          if (const json::Value* cs = json::findPath(*p, {"status", list}); cs && cs->IsArray())
            for (auto& c : cs->GetArray()) restarts += json::getInt(c, "restartCount").value_or(0);
      }
      pastOnFailure = limit == 0 ? restarts > 0 : restarts >= limit;
    }
    auto ads = json::getInt(s, "activeDeadlineSeconds");
    auto start = timeOf(status.start_time);
    if (failed > limit || pastOnFailure) {
      finished = makeCondition(clk, "FailureTarget", "BackoffLimitExceeded",
                               "Job has reached the specified backoff limit");
    } else if (ads && start && !suspended && clk.now() - *start >= std::chrono::seconds(*ads)) {
      finished = makeCondition(clk, "FailureTarget", "DeadlineExceeded",
                               "Job was active longer than specified deadline");
    } else if (ads && start && !suspended) {
      keepEarliest(requeue, std::chrono::duration_cast<std::chrono::milliseconds>(
                                *start + std::chrono::seconds(*ads) - clk.now()));
    }
  }
  if (indexed()) judgeIndexes();
}

void JobController::SyncContext::judgeIndexes() {
  const json::Value& s = spec();
  int completions = static_cast<int>(json::getInt(s, "completions").value_or(0));
  const json::Value* pfp = json::find(s, "podFailurePolicy");
  if (pfp && pfp->IsNull()) pfp = nullptr;
  prev_succeeded_idx = OrderedIntervals::parse(status.completed_indexes, completions);
  std::set<int> newSucceeded;
  for (auto& p : pods) {
    int ix = completionIndex(*p);
    if (json::getStringPath(*p, {"status", "phase"}) == "Succeeded" && validIndex(ix) &&
        hasTrackingFinalizer(*p))
      newSucceeded.insert(ix);
  }
  succeeded_idx = prev_succeeded_idx.with(newSucceeded);
  succeeded = succeeded_idx.total();
  if (backoffPerIndex()) {
    int64_t perIndex = json::getInt(s, "backoffLimitPerIndex").value_or(0);
    OrderedIntervals prevFailed;
    if (status.failed_indexes) prevFailed = OrderedIntervals::parse(*status.failed_indexes, completions);
    std::set<int> newFailed;
    for (auto& p : pods) {
      int ix = completionIndex(*p);
      if (!validIndex(ix) || !hasTrackingFinalizer(*p) || !podFailed(*p)) continue;
      PolicyMatch m = matchPodFailurePolicy(pfp, *p);
      if (m.action && *m.action == "FailIndex") {
        newFailed.insert(ix);
        continue;
      }
      if (m.count_failed && annotationCount(*p, kIndexFailureCountAnnotation) >= perIndex)
        newFailed.insert(ix);
    }
    failed_idx = prevFailed.with(newFailed);
    if (!finished) {
      auto maxFailed = json::getInt(s, "maxFailedIndexes");
      if (maxFailed && failed_idx->total() > *maxFailed)
        finished = makeCondition(clk, "FailureTarget", "MaxFailedIndexesExceeded",
                                 "Job has exceeded the specified maximal number of failed indexes");
      else if (failed_idx->total() > 0 && failed_idx->total() + succeeded_idx.total() >= completions)
        finished = makeCondition(clk, "FailureTarget", "FailedIndexes", "Job has failed indexes");
    }
    // Per index, the failed pod whose failure counts the replacement inherits.
    std::set<int> activeIdx = indexesOf(active);
    for (auto& p : pods) {
      std::string uid = uidOf(*p);
      if (!hasTrackingFinalizer(*p) || expected_rm.count(uid) || !podFailed(*p)) continue;
      int ix = completionIndex(*p);
      if (!validIndex(ix) || succeeded_idx.has(ix) || failed_idx->has(ix) || activeIdx.count(ix)) continue;
      auto abs = [](const json::Value& pod) {
        return annotationCount(pod, kIndexFailureCountAnnotation) +
               annotationCount(pod, kIndexIgnoredFailureCountAnnotation);
      };
      auto it = delayed_deletion.find(ix);
      if (it == delayed_deletion.end() ||
          (abs(*it->second) <= abs(*p) && !(finishedTime(*p) < finishedTime(*it->second))))
        delayed_deletion[ix] = p;
    }
  }
  if (!finished)
    if (auto msg = matchSuccessPolicy(json::find(s, "successPolicy"), completions, succeeded_idx))
      finished = makeCondition(clk, "SuccessCriteriaMet", "SuccessPolicy", *msg);
}

OrderedIntervals JobController::SyncContext::takenIndexes() const {
  OrderedIntervals taken = succeeded_idx.with(indexesOf(active));
  if (onlyReplaceFailed()) {
    std::vector<client::Object> term;
    for (auto& p : pods)
      if (terminatingPod(*p)) term.push_back(p);
    taken = taken.with(indexesOf(term));
  }
  if (failed_idx) taken = taken.merge(*failed_idx);
  return taken;
}

std::chrono::milliseconds JobController::SyncContext::indexBackoff(int ix) const {
  auto it = delayed_deletion.find(ix);
  if (it == delayed_deletion.end()) return std::chrono::milliseconds(0);
  const json::Value& pod = *it->second;
  int failures = annotationCount(pod, kIndexFailureCountAnnotation) +
                 annotationCount(pod, kIndexIgnoredFailureCountAnnotation) + 1;
  return remainingBackoff(clk, failures, finishedTime(pod));
}

void JobController::SyncContext::addIndexFailureCounts(int ix, json::Value& annotations,
                                                       json::Allocator& a) const {
  int failures = 0, ignored = 0;
  if (auto it = delayed_deletion.find(ix); it != delayed_deletion.end()) {
    const json::Value& pod = *it->second;
    failures = annotationCount(pod, kIndexFailureCountAnnotation);
    ignored = annotationCount(pod, kIndexIgnoredFailureCountAnnotation);
    const json::Value* pfp = json::find(spec(), "podFailurePolicy");
    if (pfp && !pfp->IsNull() && !matchPodFailurePolicy(pfp, pod).count_failed)
      ++ignored;
    else
      ++failures;
  }
  json::setString(annotations, kIndexFailureCountAnnotation, std::to_string(failures), a);
  if (ignored > 0)
    json::setString(annotations, kIndexIgnoredFailureCountAnnotation, std::to_string(ignored), a);
}

bool JobController::SyncContext::ensureCondition(const std::string& type, const std::string& st,
                                                 const std::string& reason, const std::string& message,
                                                 const std::string& now) {
  for (auto& c : status.conditions)
    if (c.type == type) {
      if (c.status == st && c.reason == reason && c.message == message) return false;
      c = JobCondition{type, st, reason, message, now, now};
      return true;
    }
  // Nothing to False is no change.
  if (st == "False") return false;
  status.conditions.push_back(JobCondition{type, st, reason, message, now, now});
  return true;
}

}  // namespace shepherd::controllers::job
