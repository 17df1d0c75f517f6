// Store: deletion (graceful deletion, finalizers, the garbage collector's orphan and
// foregroundDeletion finalizers from DeleteOptions) and DeleteOptions parsing.
#include <algorithm>

#include "common/clock.h"
#include "common/log.h"
#include "registry/registry.h"
#include "registry/store.h"

namespace shepherd::registry {

Result<ObjectPtr> Store::finishDeletion(const std::string& key, const ObjectPtr& current, bool dry_run) {
  if (dry_run) return current;
  auto del = storage_.remove(key, current->mod_revision);
  if (!del.ok()) {
    if (del.code == storage::Code::Conflict) return conflict(current->name);
    if (del.code == storage::Code::NotFound) return notFound(current->name);
    return ApiError::internal("storage error: " + del.message);
  }
  if (hooks_.after_delete) {
    json::Document d;
    d.Parse(current->json.data(), current->json.size());
    hooks_.after_delete(d);
  }
  return current;
}

namespace {

constexpr std::string_view kOrphanFinalizer = "orphan";
constexpr std::string_view kForegroundFinalizer = "foregroundDeletion";

}  // namespace

bool applyGarbageCollectionFinalizers(json::Document& obj, const DeleteOptions& opts,
                                      bool orphan_by_default) {
  auto& a = obj.GetAllocator();
  json::Value& m = json::ensureObject(obj, "metadata", obj.GetAllocator());
  std::vector<std::string> old;
  if (const json::Value* f = json::find(m, "finalizers"); f && f->IsArray())
    for (auto& x : f->GetArray())
      if (x.IsString()) old.emplace_back(json::view(x));
  auto has = [&](std::string_view f) { return std::find(old.begin(), old.end(), f) != old.end(); };
  // As upstream: an explicit policy decides; otherwise a finalizer already on the object
  // does; otherwise the kind's default (for most kinds dependents are deleted in the
  // background).
  bool orphan = false, foreground = false;
  if (opts.orphan_dependents) {
    orphan = *opts.orphan_dependents;
  } else if (!opts.propagation_policy.empty()) {
    orphan = opts.propagation_policy == "Orphan";
    foreground = opts.propagation_policy == "Foreground";
  } else {
    orphan = has(kOrphanFinalizer) || (orphan_by_default && !has(kForegroundFinalizer));
    foreground = !orphan && has(kForegroundFinalizer);
  }
  std::vector<std::string> next;
  for (auto& f : old)
    if (f != kOrphanFinalizer && f != kForegroundFinalizer) next.push_back(f);
  if (orphan) next.emplace_back(kOrphanFinalizer);
  if (foreground) next.emplace_back(kForegroundFinalizer);
  std::vector<std::string> a1 = old, a2 = next;
  std::sort(a1.begin(), a1.end());
  std::sort(a2.begin(), a2.end());
  a1.erase(std::unique(a1.begin(), a1.end()), a1.end());
  a2.erase(std::unique(a2.begin(), a2.end()), a2.end());
  if (a1 == a2) return false;
  json::Value list(rapidjson::kArrayType);
  for (auto& f : next) list.PushBack(json::str(f, a), a);
  json::set(m, "finalizers", std::move(list), a);
  return true;
}

Result<DeleteOutcome> Store::remove(const std::string& ns, const std::string& name,
                                    const DeleteOptions& opts) {
  std::string key = resource_->key(ns, name);
  const apis::Strategy& strategy = *resource_->strategy;
  for (int attempt = 0; attempt < kMaxUpdateAttempts; ++attempt) {
    ObjectPtr cur = cache_.get(key);
    if (!cur) return notFound(name);
    json::Document d;
    d.Parse(cur->json.data(), cur->json.size());
    auto& a = d.GetAllocator();
    json::Value& m = json::ensureObject(d, "metadata", d.GetAllocator());
    if (!opts.precondition_uid.empty() && opts.precondition_uid != json::getString(m, "uid"))
      return ApiError::conflict(resource_->group, resource_->plural, name,
                                "Precondition failed: UID in precondition: " + opts.precondition_uid +
                                    ", UID in object meta: " + std::string(json::getString(m, "uid")));
    if (!opts.precondition_resource_version.empty() &&
        opts.precondition_resource_version != std::to_string(cur->mod_revision))
      return ApiError::conflict(
          resource_->group, resource_->plural, name,
          "Precondition failed: ResourceVersion in precondition: " + opts.precondition_resource_version +
              ", ResourceVersion in object meta: " + std::to_string(cur->mod_revision));

    if (auto st = opts.admission.admit(admission::Operation::Delete, d, &d); !st) return st.error();
    if (auto st = opts.admission.validate(admission::Operation::Delete, d, &d); !st) return st.error();
    // Once a graceful deletion is pending, DeleteOptions no longer change the finalizers.
    auto pendingGrace = json::getInt(m, "deletionGracePeriodSeconds");
    bool pendingGraceful = json::find(m, "deletionTimestamp") && pendingGrace && *pendingGrace > 0;
    bool finalizersChanged =
        !pendingGraceful &&
        applyGarbageCollectionFinalizers(d, opts, resource_->strategy->orphansDependentsByDefault());
    int64_t grace = strategy.gracePeriod(d, opts.grace_period_seconds);
    bool finalizers = strategy.hasPendingFinalizers(d);
    if (grace == 0 && !finalizers) {
      auto done = finishDeletion(key, cur, opts.dry_run);
      if (!done) {
        if (done.error().reason == "Conflict") continue;
        return done.error();
      }
      return DeleteOutcome{done.value(), true};
    }
    // Graceful or finalized deletion: mark and keep the object.
    const json::Value* existingTs = json::find(m, "deletionTimestamp");
    auto existingGrace = json::getInt(m, "deletionGracePeriodSeconds");
    bool changed = false;
    if (!existingTs) {
      auto when = clock::now() + std::chrono::seconds(grace);
      json::setString(m, "deletionTimestamp", clock::rfc3339(when), a);
      json::set(m, "deletionGracePeriodSeconds", json::Value(grace), a);
      strategy.prepareForDelete(d, a);
      changed = true;
    } else if (existingGrace && grace < *existingGrace) {
      // A shorter grace period moves the deadline closer, never further.
      auto when = clock::now() + std::chrono::seconds(grace);
      json::setString(m, "deletionTimestamp", clock::rfc3339(when), a);
      json::set(m, "deletionGracePeriodSeconds", json::Value(grace), a);
      changed = true;
    }
    changed = changed || finalizersChanged;
    if (!changed) return DeleteOutcome{cur, false};
    if (opts.dry_run) return DeleteOutcome{cur, false};
    std::string stored;
    auto ticket = encodeAndPrepare(key, d, stored);
    auto res = storage_.update(key, stored, cur->mod_revision);
    if (!res.ok()) {
      if (res.code == storage::Code::Conflict) continue;
      return fromStorage(res, name);
    }
    return DeleteOutcome{readBack(key, stored, res.value, cur->create_revision), false};
  }
  return conflict(name);
}

Result<DeleteOptions> parseDeleteOptions(const json::Value* body) {
  DeleteOptions o;
  if (!body || body->IsNull()) return o;
  if (!body->IsObject()) return ApiError::badRequest("DeleteOptions must be a JSON object");
  if (const json::Value* g = json::find(*body, "gracePeriodSeconds"); g && !g->IsNull()) {
    if (!g->IsInt64()) return ApiError::badRequest("gracePeriodSeconds must be an integer");
    o.grace_period_seconds = g->GetInt64();
  }
  if (const json::Value* p = json::find(*body, "preconditions"); p && p->IsObject()) {
    o.precondition_uid = json::getString(*p, "uid");
    o.precondition_resource_version = json::getString(*p, "resourceVersion");
  }
  if (const json::Value* p = json::find(*body, "propagationPolicy"); p && p->IsString()) {
    o.propagation_policy = json::view(*p);
    if (o.propagation_policy != "Orphan" && o.propagation_policy != "Background" &&
        o.propagation_policy != "Foreground")
      return ApiError::invalid("", "DeleteOptions", "",
                               {{"FieldValueNotSupported",
                                 "Unsupported value: \"" + o.propagation_policy +
                                     "\": supported values: \"Foreground\", \"Background\", \"Orphan\"",
                                 "propagationPolicy"}});
  }
  if (const json::Value* dr = json::find(*body, "dryRun"); dr && dr->IsArray())
    for (auto& v : dr->GetArray())
      if (json::view(v) == "All") o.dry_run = true;
  if (const json::Value* od = json::find(*body, "orphanDependents"); od && od->IsBool()) {
    o.orphan_dependents = od->GetBool();
    if (od->GetBool() && o.propagation_policy.empty()) o.propagation_policy = "Orphan";
  }
  return o;
}

}  // namespace shepherd::registry
