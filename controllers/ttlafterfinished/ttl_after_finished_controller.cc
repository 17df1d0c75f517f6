#include "controllers/ttlafterfinished/ttl_after_finished_controller.h"

#include "common/log.h"
#include "controllers/manager/job_state.h"
#include "controllers/manager/object_meta.h"

namespace shepherd::controllers {

namespace {

std::string jobPath(const json::Value& job) {
  return "/apis/batch/v1/namespaces/" + client::urlEncode(namespaceOf(job)) + "/jobs/" +
         client::urlEncode(nameOf(job));
}

bool needsCleanup(const json::Value& job) {
  return !json::findPath(job, {"metadata", "deletionTimestamp"}) &&
         json::getInt(*json::find(job, "spec"), "ttlSecondsAfterFinished") && finishedJobCondition(job);
}

}  // namespace

TtlAfterFinishedController::TtlAfterFinishedController(client::Client& c, client::SharedInformers& informers,
                                                       const clock::Clock& clk)
    : Controller("ttl-after-finished"),
      client_(c),
      jobs_(informers.get(client::allObjects("batch", "v1", "jobs"))),
      clock_(clk) {
  client::EventHandlers h;
  h.on_add = [this](const client::Object& o) {
    if (json::find(*o, "spec") && needsCleanup(*o)) queue_.add(client::objectKey(*o));
  };
  h.on_update = [this](const client::Object&, const client::Object& o) {
    if (json::find(*o, "spec") && needsCleanup(*o)) queue_.add(client::objectKey(*o));
  };
  jobs_.addHandlers(std::move(h));
}

std::optional<std::chrono::milliseconds> TtlAfterFinishedController::timeLeft(const json::Value& job) const {
  if (!json::find(job, "spec") || !needsCleanup(job)) return std::nullopt;
  auto at = jobFinishedAt(job);
  if (!at) {
    LOG_WARN("ttl-after-finished: unable to find the time when the Job " << client::objectKey(job)
                                                                         << " finished");
    return std::nullopt;
  }
  auto now = clock_.now();
  if (*at > now)
    LOG_WARN("ttl-after-finished: Job " << client::objectKey(job)
                                        << " finished in the future (clock skew?); its clean-up waits");
  auto expire =
      *at + std::chrono::seconds(*json::getInt(*json::find(job, "spec"), "ttlSecondsAfterFinished"));
  return std::chrono::duration_cast<std::chrono::milliseconds>(expire - now);
}

Result<SyncResult> TtlAfterFinishedController::sync(const std::string& key) {
  client::Object job = jobs_.get(key);
  if (!job) return SyncResult{};
  auto left = timeLeft(*job);
  if (!left) return SyncResult{};
  if (left->count() > 0) return SyncResult{*left};
  // The cached TTL may be stale: decide on a live read.
  auto fresh = client_.get(jobPath(*job));
  if (!fresh)
    return fresh.error().code == 404 ? Result<SyncResult>(SyncResult{}) : Result<SyncResult>(fresh.error());
  left = timeLeft(*fresh);
  if (!left) return SyncResult{};
  if (left->count() > 0) return SyncResult{*left};
  auto r = client_.del(jobPath(*fresh),
                       R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground",)"
                       R"("preconditions":{"uid":")" +
                           uidOf(*fresh) + "\"}}");
  if (!r && r.error().code != 404 && r.error().code != 409) return r.error();
  return SyncResult{};
}

}  // namespace shepherd::controllers
