#include "controllers/namespace/namespace_controller.h"

#include "common/log.h"

namespace shepherd::controllers {

namespace {
constexpr const char* kFinalizer = "kubernetes";
}

NamespaceController::NamespaceController(client::Client& c, client::SharedInformers& informers)
    : Controller("namespace"), client_(c), deleter_(c) {
  client::EventHandlers h;
  auto enqueue = [this](const client::Object& obj) {
    if (json::findPath(*obj, {"metadata", "deletionTimestamp"}))
      queue_.add(std::string(json::getStringPath(*obj, {"metadata", "name"})));
  };
  h.on_add = enqueue;
  h.on_update = [enqueue](const client::Object&, const client::Object& obj) { enqueue(obj); };
  informers.get(client::allObjects("", "v1", "namespaces")).addHandlers(std::move(h));
}

Result<SyncResult> NamespaceController::sync(const std::string& name) {
  // Other controllers edit a terminating namespace too: work from its latest state.
  auto got = client_.get("/api/v1/namespaces/" + client::urlEncode(name));
  if (!got) {
    if (got.error().code == 404) return SyncResult{};
    return got.error();
  }
  const json::Value& ns = *got;
  std::string_view deleted = json::getStringPath(ns, {"metadata", "deletionTimestamp"});
  if (deleted.empty()) return SyncResult{};
  bool ours = false;
  if (const json::Value* f = json::findPath(ns, {"spec", "finalizers"}); f && f->IsArray())
    for (auto& x : f->GetArray())
      if (x.IsString() && json::view(x) == kFinalizer) ours = true;
  if (!ours) return SyncResult{};  // finalized already; the API server removes it
  auto deletedAt = clock::parseRfc3339(deleted);
  ContentDeletionReport report = deleter_.deleteAll(name, deletedAt ? *deletedAt : clock::now());
  auto updated = updateConditions(ns, report);
  if (!updated) return updated.error().code == 404 ? Result<SyncResult>(SyncResult{}) : updated.error();
  if (!report.deletion_failures.empty() || !report.discovery_failures.empty()) {
    std::string why = report.deletion_failures.empty() ? report.discovery_failures.front()
                                                       : report.deletion_failures.front();
    return ApiError::internal("namespace " + name + ": " + why);
  }
  if (!report.remaining.empty()) {
    // As upstream: look again after half the estimate (at least a second).
    auto after = std::chrono::milliseconds(std::max<int64_t>(1000, report.estimate_seconds * 500));
    return SyncResult{after};
  }
  if (auto st = finalize(*updated); !st && st.error().code != 404) return st.error();
  LOG_INFO("namespace controller: namespace " << name << " is empty and finalized");
  return SyncResult{};
}

Result<json::Document> NamespaceController::updateConditions(const json::Value& ns,
                                                             const ContentDeletionReport& report) {
  json::Document doc;
  doc.CopyFrom(ns, doc.GetAllocator());
  auto& a = doc.GetAllocator();
  json::Value& status = json::ensureObject(doc, "status", a);
  const json::Value* old = json::find(status, "conditions");
  json::Value conditions = namespaceConditions(report, old, clock::rfc3339(clock::now()), a);
  if (old && *old == conditions && json::getString(status, "phase") == "Terminating") return doc;
  json::set(status, "conditions", std::move(conditions), a);
  json::setString(status, "phase", "Terminating", a);
  std::string name(json::getStringPath(ns, {"metadata", "name"}));
  return client_.put("/api/v1/namespaces/" + client::urlEncode(name) + "/status", json::serialize(doc));
}

Status NamespaceController::finalize(const json::Value& ns) {
  json::Document doc;
  doc.CopyFrom(ns, doc.GetAllocator());
  auto& a = doc.GetAllocator();
  json::Value kept(rapidjson::kArrayType);
  if (json::Value* f = json::findPath(doc, {"spec", "finalizers"}); f && f->IsArray())
    for (auto& x : f->GetArray())
      if (!(x.IsString() && json::view(x) == kFinalizer)) kept.PushBack(json::Value(x, a), a);
  json::set(json::ensureObject(doc, "spec", a), "finalizers", std::move(kept), a);
  std::string name(json::getStringPath(ns, {"metadata", "name"}));
  auto r = client_.put("/api/v1/namespaces/" + client::urlEncode(name) + "/finalize", json::serialize(doc));
  if (!r) return r.error();
  return okStatus();
}

}  // namespace shepherd::controllers
