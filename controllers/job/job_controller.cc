#include "controllers/job/job_controller.h"

#include <algorithm>
#include <atomic>

#include "common/log.h"
#include "controllers/job/job_sync_context.h"
#include "controllers/manager/controller_ref.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/parallel.h"
#include "controllers/manager/pod_state.h"
#include "meta/selectors.h"

namespace shepherd::controllers::job {

namespace {

constexpr const char* kOrphanPrefix = "pod:";  // ':' is not allowed in a namespace name
constexpr auto kSyncBatchPeriod = std::chrono::seconds(1);

Result<meta::LabelSelector> selectorOf(const json::Value& job) {
  const json::Value* sel = json::findPath(job, {"spec", "selector"});
  if (!sel) return ApiError::badRequest("spec.selector is missing");
  return meta::LabelSelector::fromJson(*sel);
}

std::string podGenerateName(const std::string& job, int index) {
  std::string suffix = "-" + std::to_string(index) + "-";
  std::string prefix = job + suffix;
  constexpr size_t kMaxGeneratedNameLength = 58;
  if (prefix.size() > kMaxGeneratedNameLength)
    prefix = prefix.substr(0, kMaxGeneratedNameLength - suffix.size()) + suffix;
  return prefix;
}

void addIndexEnv(json::Value& spec, json::Allocator& a) {
  for (const char* list : {"initContainers", "containers"}) {
    json::Value* cs = json::find(spec, list);
    if (!cs || !cs->IsArray()) continue;
    for (auto& c : cs->GetArray()) {
      json::Value* env = json::find(c, "env");
      if (!env || !env->IsArray()) {
        json::set(c, "env", json::Value(rapidjson::kArrayType), a);
        env = json::find(c, "env");
      }
      bool has = false;
      for (auto& e : env->GetArray()) has = has || json::getString(e, "name") == "JOB_COMPLETION_INDEX";
      if (has) continue;
      json::Value fieldRef(rapidjson::kObjectType), valueFrom(rapidjson::kObjectType),
          e(rapidjson::kObjectType);
      json::setString(fieldRef, "fieldPath",
                      std::string("metadata.labels['") + kCompletionIndexAnnotation + "']", a);
      json::set(valueFrom, "fieldRef", std::move(fieldRef), a);
      json::setString(e, "name", "JOB_COMPLETION_INDEX", a);
      json::set(e, "valueFrom", std::move(valueFrom), a);
      env->PushBack(std::move(e), a);
    }
  }
}

}  // namespace

JobController::JobController(client::Client& c, client::SharedInformers& informers,
                             client::EventRecorder& events, const clock::Clock& clk)
    : Controller("job"),
      client_(c),
      jobs_(informers.get(client::allObjects("batch", "v1", "jobs"))),
      pods_(informers.get(client::allObjects("", "v1", "pods"))),
      events_(events),
      clock_(clk),
      expectations_(std::chrono::minutes(5), clk) {
  indexByNamespace(pods_);
  indexByNamespace(jobs_);
  client::EventHandlers jh;
  jh.on_add = [this](const client::Object& o) { queue_.add(client::objectKey(*o)); };
  jh.on_update = [this](const client::Object& old, const client::Object& o) { onJobUpdate(old, o); };
  jh.on_delete = [this](const client::Object& o) { onJobDelete(o); };
  jobs_.addHandlers(std::move(jh));
  client::EventHandlers ph;
  ph.on_add = [this](const client::Object& o) { onPodAdd(o); };
  ph.on_update = [this](const client::Object& old, const client::Object& o) { onPodUpdate(old, o); };
  ph.on_delete = [this](const client::Object& o) { onPodDelete(o, true); };
  pods_.addHandlers(std::move(ph));
}

client::Object JobController::resolveControllerRef(const json::Value& pod) const {
  const json::Value* ref = controllerRef(pod);
  if (!ref || json::getString(*ref, "kind") != "Job") return nullptr;
  client::Object job = jobs_.get(namespaceOf(pod) + "/" + std::string(json::getString(*ref, "name")));
  if (!job || uidOf(*job) != json::getString(*ref, "uid")) return nullptr;
  return job;
}

void JobController::enqueueBatched(const json::Value& job) {
  queue_.addAfter(client::objectKey(job), kSyncBatchPeriod);
}

void JobController::enqueueOrphan(const json::Value& pod) {
  queue_.add(kOrphanPrefix + client::objectKey(pod));
}

void JobController::enqueueMatching(const json::Value& pod) {
  const json::Value* labels = json::findPath(pod, {"metadata", "labels"});
  for (auto& job : jobs_.byIndex(kNamespaceIndex, namespaceOf(pod))) {
    auto sel = selectorOf(*job);
    if (sel && !sel->empty() && sel->matchesLabels(labels)) enqueueBatched(*job);
  }
}

void JobController::onPodAdd(const client::Object& pod) {
  if (json::findPath(*pod, {"metadata", "deletionTimestamp"})) {
    onPodDelete(pod, false);  // seen for the first time on its way out (e.g. after a restart)
    return;
  }
  if (controllerRef(*pod)) {
    client::Object job = resolveControllerRef(*pod);
    if (!job) return;
    expectations_.creationObserved(client::objectKey(*job));
    enqueueBatched(*job);
    return;
  }
  if (hasTrackingFinalizer(*pod)) enqueueOrphan(*pod);
  enqueueMatching(*pod);
}

void JobController::onPodUpdate(const client::Object& old_pod, const client::Object& pod) {
  if (json::getStringPath(*old_pod, {"metadata", "resourceVersion"}) ==
      json::getStringPath(*pod, {"metadata", "resourceVersion"}))
    return;
  if (json::findPath(*pod, {"metadata", "deletionTimestamp"})) {
    // A graceful deletion: the Job may replace the pod at once (TerminatingOrFailed).
    onPodDelete(pod, false);
    return;
  }
  bool finalizerRemoved = !hasTrackingFinalizer(*pod);
  const json::Value* curRef = controllerRef(*pod);
  const json::Value* oldRef = controllerRef(*old_pod);
  bool refChanged = (curRef == nullptr) != (oldRef == nullptr) || (curRef && *curRef != *oldRef);
  std::string uid = uidOf(*pod);
  if (refChanged && oldRef)
    if (client::Object job = resolveControllerRef(*old_pod)) {
      if (finalizerRemoved) finalizerRemovalObserved(client::objectKey(*job), uid);
      enqueueBatched(*job);
    }
  if (curRef) {
    client::Object job = resolveControllerRef(*pod);
    if (!job) return;
    if (finalizerRemoved) finalizerRemovalObserved(client::objectKey(*job), uid);
    enqueueBatched(*job);
    return;
  }
  if (hasTrackingFinalizer(*pod)) enqueueOrphan(*pod);
  const json::Value* oldLabels = json::findPath(*old_pod, {"metadata", "labels"});
  const json::Value* labels = json::findPath(*pod, {"metadata", "labels"});
  bool labelsChanged = (oldLabels == nullptr) != (labels == nullptr) || (labels && *labels != *oldLabels);
  if (labelsChanged || refChanged) enqueueMatching(*pod);
}

void JobController::onPodDelete(const client::Object& pod, bool final) {
  bool hasFinalizer = hasTrackingFinalizer(*pod);
  if (!controllerRef(*pod)) {
    if (hasFinalizer) enqueueOrphan(*pod);  // the GC may have removed the reference
    return;
  }
  client::Object job = resolveControllerRef(*pod);
  if (!job || jobFinished(*job)) {
    if (hasFinalizer) enqueueOrphan(*pod);  // syncJob will not remove this finalizer
    return;
  }
  std::string key = client::objectKey(*job);
  expectations_.deletionObserved(key, client::objectKey(*pod));
  if (final || !hasFinalizer) finalizerRemovalObserved(key, uidOf(*pod));
  enqueueBatched(*job);
}

void JobController::onJobUpdate(const client::Object& old_job, const client::Object& job) {
  std::string key = client::objectKey(*job);
  const json::Value* g1 = json::findPath(*old_job, {"metadata", "generation"});
  const json::Value* g2 = json::findPath(*job, {"metadata", "generation"});
  bool specChanged = (g1 == nullptr) != (g2 == nullptr) || (g1 && *g1 != *g2);
  if (specChanged)
    queue_.add(key);
  else
    enqueueBatched(*job);                             // a status update, typically after pod events
  if (jobFinished(*job)) cleanupPodFinalizers(*job);  // a backup: the Job finishes without finalizers
  std::string_view start = json::getStringPath(*job, {"status", "startTime"});
  auto ads = json::getInt(*json::find(*job, "spec"), "activeDeadlineSeconds");
  auto oldAds = json::getInt(*json::find(*old_job, "spec"), "activeDeadlineSeconds");
  if (!start.empty() && ads && (!oldAds || *oldAds != *ads))
    if (auto t = clock::parseRfc3339(start)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*t + std::chrono::seconds(*ads) -
                                                                        clock_.now());
      queue_.addAfter(key, std::max(left, std::chrono::milliseconds(0)));
    }
}

void JobController::onJobDelete(const client::Object& job) {
  queue_.add(client::objectKey(*job));
  cleanupPodFinalizers(*job);
}

void JobController::cleanupPodFinalizers(const json::Value& job) {
  std::string uid = uidOf(job);
  for (auto& pod : pods_.byIndex(kNamespaceIndex, namespaceOf(job))) {
    const json::Value* ref = controllerRef(*pod);
    if (ref && json::getString(*ref, "uid") == uid && hasTrackingFinalizer(*pod)) enqueueOrphan(*pod);
  }
}

Result<SyncResult> JobController::sync(const std::string& key) {
  if (key.rfind(kOrphanPrefix, 0) == 0) {
    if (auto st = syncOrphanPod(key.substr(std::string_view(kOrphanPrefix).size())); !st) return st.error();
    return SyncResult{};
  }
  return syncJob(key);
}

Status JobController::syncOrphanPod(const std::string& pod_key) {
  client::Object pod = pods_.get(pod_key);
  if (!pod) return okStatus();
  if (const json::Value* ref = controllerRef(*pod)) {
    // Another kind's pod: not ours to touch.
    if (json::getString(*ref, "kind") != "Job" || json::getString(*ref, "apiVersion") != "batch/v1")
      return okStatus();
    client::Object job = resolveControllerRef(*pod);
    if (job && managedElsewhere(*job)) return okStatus();
    if (job && !jobFinished(*job)) return okStatus();  // adopted meanwhile
  }
  if (!hasTrackingFinalizer(*pod)) return okStatus();
  auto r = client_.patch(podPath(namespaceOf(*pod), nameOf(*pod)), removeFinalizerPatch(),
                         "application/strategic-merge-patch+json");
  if (!r && r.error().code != 404) return r.error();
  return okStatus();
}

Result<std::vector<client::Object>> JobController::podsForJob(const json::Value& job) {
  auto selector = selectorOf(job);
  if (!selector) return selector.error();
  std::string ns = namespaceOf(job);
  Owner owner{&job, "batch/v1", "Job", jobPath(ns, nameOf(job)), kTrackingFinalizer};
  auto claimed = claimObjects(client_, owner, *selector, pods_.byIndex(kNamespaceIndex, ns),
                              [&ns](const json::Value& pod) { return podPath(ns, nameOf(pod)); });
  return claimed;
}

Result<SyncResult> JobController::syncJob(const std::string& key) {
  client::Object shared = jobs_.get(key);
  if (!shared) {
    forgetJob(key);
    return SyncResult{};
  }
  if (managedElsewhere(*shared)) return SyncResult{};
  if (jobFinished(*shared)) {
    MutexLock g(backoff_mu_);
    backoff_.erase(key);
    return SyncResult{};
  }
  std::string_view mode = json::getStringPath(*shared, {"spec", "completionMode"});
  if (!mode.empty() && mode != "NonIndexed" && mode != "Indexed") {
    events_.event(*shared, "batch/v1", "Job", "Warning", "UnknownCompletionMode",
                  "Skipped Job sync because completion mode is unknown");
    return SyncResult{};
  }
  SyncContext ctx(key, *shared, clock_);
  // Expectations before the pods: a pod created after this check waits for the next sync.
  bool satisfied = expectations_.satisfied(key);
  auto pods = podsForJob(ctx.job);
  if (!pods) return pods.error();
  ctx.setPods(std::move(*pods), expectedFinalizerRemovals(key));
  {
    MutexLock g(backoff_mu_);
    ctx.backoff = backoff_[key];
  }
  ctx.countFinished();
  std::optional<std::chrono::milliseconds> requeue;
  ctx.judge(requeue);
  int64_t active = static_cast<int64_t>(ctx.active.size());
  bool suspendChanged = false;
  Status manageError = okStatus();
  if (ctx.finished) {
    int64_t deleted = 0, deletedReady = 0;
    manageError = deletePods(ctx, ctx.active, true, deleted, deletedReady);
    // Not finished yet while pods remain or the cache may lack some.
    if (deleted != active || !satisfied) ctx.finished.reset();
    active -= deleted;
    ctx.terminating += deleted;
    ctx.ready -= deletedReady;
  } else {
    bool managed = false;
    if (satisfied && !json::findPath(ctx.job, {"metadata", "deletionTimestamp"})) {
      auto m = manageJob(ctx, requeue);
      if (m)
        active = *m;
      else
        manageError = m.error();
      managed = true;
    }
    auto completions = json::getInt(ctx.spec(), "completions");
    bool complete =
        completions ? ctx.succeeded >= *completions && active == 0 : ctx.succeeded > 0 && active == 0;
    if (complete) {
      ctx.finished = makeCondition(clock_, "SuccessCriteriaMet", "CompletionsReached",
                                   "Reached expected number of succeeded pods");
    } else if (managed) {
      std::string now = clock::rfc3339(clock_.now());
      if (json::getBool(ctx.spec(), "suspend")) {
        if (ctx.ensureCondition("Suspended", "True", "JobSuspended", "Job suspended", now)) {
          suspendChanged = true;
          events_.event(ctx.job, "batch/v1", "Job", "Normal", "Suspended", "Job suspended");
        }
      } else if (ctx.ensureCondition("Suspended", "False", "JobResumed", "Job resumed", now)) {
        suspendChanged = true;
        events_.event(ctx.job, "batch/v1", "Job", "Normal", "Resumed", "Job resumed");
        // activeDeadlineSeconds counts from the resume, as from a start.
        ctx.status.start_time = now;
      }
    }
  }
  bool needsUpdate = suspendChanged || active != ctx.status.active || ctx.status.ready != ctx.ready ||
                     ctx.status.terminating != ctx.terminating;
  ctx.status.active = active;
  ctx.status.ready = ctx.ready;
  ctx.status.terminating = ctx.terminating;
  if (auto st = trackStatusAndRemoveFinalizers(ctx, needsUpdate); !st) return st.error();
  if (!manageError) return manageError.error();
  return SyncResult{requeue.value_or(std::chrono::milliseconds(0))};
}

Result<int64_t> JobController::manageJob(SyncContext& ctx,
                                         std::optional<std::chrono::milliseconds>& requeue) {
  int64_t active = static_cast<int64_t>(ctx.active.size());
  const json::Value& spec = ctx.spec();
  int64_t parallelism = json::getInt(spec, "parallelism").value_or(1);
  if (json::getBool(spec, "suspend")) {
    int64_t deleted = 0, deletedReady = 0;
    Status st =
        deletePods(ctx, activePodsForRemoval(ctx, static_cast<int>(active)), false, deleted, deletedReady);
    ctx.terminating += deleted;
    ctx.ready -= deletedReady;
    if (!st) return st.error();
    return active - deleted;
  }
  auto completions = json::getInt(spec, "completions");
  int64_t want;
  if (!completions)
    want = ctx.succeeded > 0 ? active : parallelism;  // the first success ends the work
  else
    want = std::clamp<int64_t>(*completions - ctx.succeeded, 0, parallelism);
  int rmAtLeast = static_cast<int>(std::max<int64_t>(active - want, 0));
  std::vector<client::Object> toDelete = activePodsForRemoval(ctx, rmAtLeast);
  if (toDelete.size() > kMaxPodCreateDeletePerSync) toDelete.resize(kMaxPodCreateDeletePerSync);
  if (!toDelete.empty()) {
    // Deletion first; creation waits for the next sync.
    int64_t deleted = 0, deletedReady = 0;
    Status st = deletePods(ctx, toDelete, false, deleted, deletedReady);
    ctx.terminating += deleted;
    ctx.ready -= deletedReady;
    if (!st) return st.error();
    return active - deleted;
  }
  int64_t terminating = ctx.onlyReplaceFailed() ? ctx.terminating : 0;
  int64_t diff = want - terminating - active;
  if (diff <= 0) return active;
  if (!ctx.backoffPerIndex()) {
    auto left =
        remainingBackoff(clock_, ctx.new_backoff.failures_after_last_success, ctx.new_backoff.last_failure);
    if (left.count() > 0) {
      requeue = std::max<std::chrono::milliseconds>(left, kSyncBatchPeriod);
      return active;
    }
  }
  diff = std::min<int64_t>(diff, kMaxPodCreateDeletePerSync);
  std::vector<int> indexes;
  if (ctx.indexed()) {
    indexes = firstPendingIndexes(ctx.takenIndexes(), static_cast<int>(diff), static_cast<int>(*completions));
    if (ctx.backoffPerIndex()) {
      std::vector<int> now;
      std::optional<std::chrono::milliseconds> soonest;
      for (int ix : indexes) {
        auto left = ctx.indexBackoff(ix);
        if (left.count() == 0)
          now.push_back(ix);
        else if (!soonest || left < *soonest)
          soonest = left;
      }
      if (now.empty() && soonest) {
        requeue = std::max<std::chrono::milliseconds>(*soonest, kSyncBatchPeriod);
        return active;
      }
      indexes = std::move(now);
    }
    diff = static_cast<int64_t>(indexes.size());
  }
  if (diff == 0) return active;
  Status st = createPods(ctx, static_cast<int>(diff), indexes, active);
  if (!st) return st.error();
  return active;
}

Status JobController::createPods(SyncContext& ctx, int n, const std::vector<int>& indexes, int64_t& active) {
  const json::Value& job = ctx.job;
  std::string name = nameOf(job), ns = namespaceOf(job);
  json::Document tmpl;
  if (const json::Value* t = json::findPath(ctx.spec(), {"template"})) tmpl.CopyFrom(*t, tmpl.GetAllocator());
  if (!tmpl.IsObject()) tmpl.SetObject();
  auto& ta = tmpl.GetAllocator();
  json::Value& tspec = json::ensureObject(tmpl, "spec", ta);
  if (ctx.indexed()) addIndexEnv(tspec, ta);
  expectations_.expectCreations(ctx.key, n);
  active += n;
  auto podBody = [&](int i) {
    json::Document pod;
    pod.SetObject();
    auto& a = pod.GetAllocator();
    json::setString(pod, "apiVersion", "v1", a);
    json::setString(pod, "kind", "Pod", a);
    json::Value& md = json::ensureObject(pod, "metadata", a);
    for (const char* f : {"labels", "annotations"})
      if (const json::Value* v = json::findPath(tmpl, {"metadata", f}); v && v->IsObject())
        json::set(md, f, json::Value(*v, a), a);
    json::Value fins(rapidjson::kArrayType);
    bool has = false;
    if (const json::Value* f = json::findPath(tmpl, {"metadata", "finalizers"}); f && f->IsArray())
      for (auto& x : f->GetArray()) {
        has = has || (x.IsString() && json::view(x) == kTrackingFinalizer);
        fins.PushBack(json::Value(x, a), a);
      }
    if (!has) fins.PushBack(json::str(kTrackingFinalizer, a), a);
    json::set(md, "finalizers", std::move(fins), a);
    json::Value refs(rapidjson::kArrayType);
    refs.PushBack(controllerReference(Owner{&job, "batch/v1", "Job", "", ""}, a), a);
    json::set(md, "ownerReferences", std::move(refs), a);
    json::set(pod, "spec", json::Value(tspec, a), a);
    if (indexes.empty()) {
      json::setString(md, "generateName", name + "-", a);
    } else {
      int ix = indexes[static_cast<size_t>(i)];
      std::string ixs = std::to_string(ix);
      json::setString(json::ensureObject(md, "annotations", a), kCompletionIndexAnnotation, ixs, a);
      json::setString(json::ensureObject(md, "labels", a), kCompletionIndexAnnotation, ixs, a);
      json::setString(*json::find(pod, "spec"), "hostname", name + "-" + ixs, a);
      json::setString(md, "generateName", podGenerateName(name, ix), a);
      if (ctx.backoffPerIndex()) ctx.addIndexFailureCounts(ix, json::ensureObject(md, "annotations", a), a);
    }
    return json::serialize(pod);
  };
  auto terminating = [](const ApiError& e) {
    return e.code == 403 && e.message.find("being terminated") != std::string::npos;
  };
  std::string path = "/api/v1/namespaces/" + client::urlEncode(ns) + "/pods";
  BatchOutcome out = slowStartBatch(
      n,
      [&](int i) -> Status {
        auto r = client_.post(path, podBody(i));
        if (!r) return r.error();
        events_.event(job, "batch/v1", "Job", "Normal", "SuccessfulCreate", "Created pod: " + nameOf(*r));
        return okStatus();
      },
      terminating);
  // Pods never created will not be observed.
  for (int k = out.succeeded; k < n; ++k) expectations_.creationObserved(ctx.key);
  active -= n - out.succeeded;
  if (!out.first_error) {
    events_.event(job, "batch/v1", "Job", "Warning", "FailedCreate",
                  "Error creating: " + out.first_error.error().message);
    return out.first_error;
  }
  return okStatus();
}

Status JobController::deletePods(SyncContext& ctx, const std::vector<client::Object>& pods,
                                 bool keep_finalizers, int64_t& deleted, int64_t& deleted_ready) {
  if (pods.empty()) return okStatus();
  if (!keep_finalizers) {
    std::set<std::string> keys;
    for (auto& p : pods) keys.insert(client::objectKey(*p));
    expectations_.expectDeletions(ctx.key, keys);
  }
  std::atomic<int64_t> ok{0}, ready{0};
  Status st = parallelFor(static_cast<int>(pods.size()), [&](int i) -> Status {
    const json::Value& pod = *pods[static_cast<size_t>(i)];
    std::string path = podPath(namespaceOf(pod), nameOf(pod));
    auto fail = [&](const ApiError& e) -> Status {
      if (!keep_finalizers) expectations_.deletionObserved(ctx.key, client::objectKey(pod));
      if (e.code == 404) {
        ++ok;
        return okStatus();
      }
      return e;
    };
    if (!keep_finalizers && hasTrackingFinalizer(pod)) {
      auto r = client_.patch(path, removeFinalizerPatch(), "application/strategic-merge-patch+json");
      if (!r) return fail(r.error());
    }
    auto r = client_.del(path);
    if (!r) return fail(r.error());
    ++ok;
    if (podReady(pod)) ++ready;
    events_.event(ctx.job, "batch/v1", "Job", "Normal", "SuccessfulDelete", "Deleted pod: " + nameOf(pod));
    return okStatus();
  });
  deleted = ok.load();
  deleted_ready = ready.load();
  return st;
}

std::vector<client::Object> JobController::activePodsForRemoval(const SyncContext& ctx,
                                                                int rm_at_least) const {
  std::vector<client::Object> rm, left;
  if (ctx.indexed()) {
    // Pods without a valid index, past completions, or repeating an index go first.
    int completions = static_cast<int>(json::getInt(ctx.spec(), "completions").value_or(0));
    std::map<int, std::vector<client::Object>> byIndex;
    for (auto& p : ctx.active) {
      int ix = completionIndex(*p);
      if (ix == kUnknownIndex || ix >= completions)
        rm.push_back(p);
      else
        byIndex[ix].push_back(p);
    }
    for (auto& [ix, same] : byIndex) {
      if (same.size() > 1) sortForDeletion(same);
      for (size_t i = 0; i + 1 < same.size(); ++i) rm.push_back(same[i]);
      left.push_back(same.back());
    }
  } else {
    left = ctx.active;
  }
  if (static_cast<int>(rm.size()) < rm_at_least) {
    sortForDeletion(left);
    size_t more = std::min(left.size(), static_cast<size_t>(rm_at_least) - rm.size());
    rm.insert(rm.end(), left.begin(), left.begin() + static_cast<long>(more));
  }
  return rm;
}

void JobController::expectFinalizersRemoved(const std::string& key, const std::vector<std::string>& uids) {
  MutexLock g(finalizer_mu_);
  finalizer_removals_[key].insert(uids.begin(), uids.end());
}

void JobController::finalizerRemovalObserved(const std::string& key, const std::string& uid) {
  MutexLock g(finalizer_mu_);
  auto it = finalizer_removals_.find(key);
  if (it == finalizer_removals_.end()) return;
  it->second.erase(uid);
  if (it->second.empty()) finalizer_removals_.erase(it);
}

std::set<std::string> JobController::expectedFinalizerRemovals(const std::string& key) {
  MutexLock g(finalizer_mu_);
  auto it = finalizer_removals_.find(key);
  return it == finalizer_removals_.end() ? std::set<std::string>{} : it->second;
}

void JobController::forgetJob(const std::string& key) {
  expectations_.remove(key);
  {
    MutexLock g(finalizer_mu_);
    finalizer_removals_.erase(key);
  }
  MutexLock g(backoff_mu_);
  backoff_.erase(key);
}

}  // namespace shepherd::controllers::job
