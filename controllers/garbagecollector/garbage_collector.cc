#include "controllers/garbagecollector/garbage_collector.h"

#include <algorithm>

#include "common/log.h"
#include "controllers/manager/object_meta.h"

namespace shepherd::controllers {

namespace {

constexpr std::string_view kOrphan = "orphan";
constexpr std::string_view kForeground = "foregroundDeletion";
const char* const kUidIndex = "uid";
const char* const kOwnerIndex = "owner";

bool hasFinalizer(const json::Value& obj, std::string_view f) {
  const json::Value* fins = json::findPath(obj, {"metadata", "finalizers"});
  if (!fins || !fins->IsArray()) return false;
  for (auto& x : fins->GetArray())
    if (x.IsString() && json::view(x) == f) return true;
  return false;
}

bool deleting(const json::Value& obj) {
  return json::findPath(obj, {"metadata", "deletionTimestamp"}) != nullptr;
}

const json::Value* ownerRefs(const json::Value& obj) {
  const json::Value* refs = json::findPath(obj, {"metadata", "ownerReferences"});
  return refs && refs->IsArray() && !refs->Empty() ? refs : nullptr;
}

// The dependent's reference to `owner_uid`, if any.
const json::Value* refTo(const json::Value& dependent, const std::string& owner_uid) {
  if (const json::Value* refs = ownerRefs(dependent))
    for (auto& r : refs->GetArray())
      if (json::getString(r, "uid") == owner_uid) return &r;
  return nullptr;
}

std::string objectPath(const client::ApiResource& r, const json::Value& obj) {
  std::string ns(json::getStringPath(obj, {"metadata", "namespace"}));
  return client::resourcePath(r.group, r.version, r.resource, r.namespaced ? ns : "") + "/" +
         client::urlEncode(std::string(json::getStringPath(obj, {"metadata", "name"})));
}

}  // namespace

GarbageCollector::GarbageCollector(client::Client& c, client::SharedInformers& informers,
                                   const std::vector<client::ApiResource>& resources)
    : Controller("garbagecollector"), client_(c) {
  for (auto& r : resources) {
    // Events are never owners worth tracking (upstream ignores them too).
    if (r.resource == "events") continue;
    if (!r.can("list") || !r.can("watch") || !r.can("delete")) continue;
    client::InformerOptions o;
    o.group = r.group;
    o.version = r.version;
    o.plural = r.resource;
    monitors_.push_back({r, &informers.get(o)});
  }
  for (size_t i = 0; i < monitors_.size(); ++i) {
    client::Informer& inf = *monitors_[i].informer;
    inf.addIndex(kUidIndex, [](const json::Value& obj) { return std::vector<std::string>{uidOf(obj)}; });
    inf.addIndex(kOwnerIndex, [](const json::Value& obj) {
      std::vector<std::string> out;
      if (const json::Value* refs = ownerRefs(obj))
        for (auto& r : refs->GetArray()) out.emplace_back(json::getString(r, "uid"));
      return out;
    });
    client::EventHandlers h;
    h.on_add = [this, i](const client::Object& o) { enqueue(i, *o); };
    h.on_update = [this, i](const client::Object& old, const client::Object& o) {
      enqueue(i, *o);
      // An owner that starts deleting its dependents in the foreground wakes them.
      if (deleting(*o) && hasFinalizer(*o, kForeground) &&
          !(deleting(*old) && hasFinalizer(*old, kForeground)))
        enqueueDependents(uidOf(*o));
    };
    h.on_delete = [this](const client::Object& o) {
      enqueueDependents(uidOf(*o));  // they may have lost their last owner
      enqueueOwners(*o);             // an owner may be waiting for this dependent
    };
    inf.addHandlers(std::move(h));
  }
}

void GarbageCollector::enqueue(size_t monitor, const json::Value& obj) {
  bool interesting =
      ownerRefs(obj) || (deleting(obj) && (hasFinalizer(obj, kOrphan) || hasFinalizer(obj, kForeground)));
  if (!interesting) return;
  queue_.add(std::to_string(monitor) + "|" +
             std::string(json::getStringPath(obj, {"metadata", "namespace"})) + "|" +
             std::string(json::getStringPath(obj, {"metadata", "name"})));
}

void GarbageCollector::enqueueDependents(const std::string& uid) {
  for (size_t i = 0; i < monitors_.size(); ++i)
    for (auto& d : monitors_[i].informer->byIndex(kOwnerIndex, uid)) enqueue(i, *d);
}

void GarbageCollector::enqueueOwners(const json::Value& obj) {
  if (const json::Value* refs = ownerRefs(obj))
    for (auto& r : refs->GetArray()) {
      Found owner = findByUid(std::string(json::getString(r, "uid")));
      if (owner.object) enqueue(static_cast<size_t>(owner.monitor - monitors_.data()), *owner.object);
    }
}

GarbageCollector::Found GarbageCollector::findByUid(const std::string& uid) const {
  for (auto& m : monitors_) {
    auto hits = m.informer->byIndex(kUidIndex, uid);
    if (!hits.empty()) return {&m, hits.front()};
  }
  return {};
}

std::vector<GarbageCollector::Found> GarbageCollector::dependentsOf(const std::string& uid) const {
  std::vector<Found> out;
  for (auto& m : monitors_)
    for (auto& d : m.informer->byIndex(kOwnerIndex, uid)) out.push_back({&m, d});
  return out;
}

const client::ApiResource* GarbageCollector::mapping(const std::string& api_version,
                                                     const std::string& kind) const {
  for (auto& m : monitors_)
    if (m.resource.kind == kind && m.resource.apiVersion() == api_version) return &m.resource;
  // Another version of a group we watch: the kind maps to the same resource.
  std::string group =
      api_version.find('/') == std::string::npos ? "" : api_version.substr(0, api_version.find('/'));
  for (auto& m : monitors_)
    if (m.resource.kind == kind && m.resource.group == group) return &m.resource;
  return nullptr;
}

bool GarbageCollector::waitsFor(const json::Value& dependent, const std::string& owner_uid,
                                std::set<std::string>& seen) const {
  if (!(deleting(dependent) && hasFinalizer(dependent, kForeground))) return false;
  std::string uid = uidOf(dependent);
  if (!seen.insert(uid).second) return false;
  for (auto& d : dependentsOf(uid)) {
    const json::Value* ref = refTo(*d.object, uid);
    if (!ref || !json::getBool(*ref, "blockOwnerDeletion")) continue;
    if (uidOf(*d.object) == owner_uid || waitsFor(*d.object, owner_uid, seen)) return true;
  }
  return false;
}

Result<SyncResult> GarbageCollector::sync(const std::string& key) {
  size_t bar1 = key.find('|'), bar2 = key.find('|', bar1 + 1);
  if (bar1 == std::string::npos || bar2 == std::string::npos) return SyncResult{};
  size_t idx = std::stoul(key.substr(0, bar1));
  if (idx >= monitors_.size()) return SyncResult{};
  const Monitor& m = monitors_[idx];
  std::string ns = key.substr(bar1 + 1, bar2 - bar1 - 1), name = key.substr(bar2 + 1);
  client::Object obj = m.informer->get(ns.empty() ? name : ns + "/" + name);
  if (!obj) return SyncResult{};  // gone: its dependents were queued by the delete event
  if (deleting(*obj) && hasFinalizer(*obj, kOrphan)) {
    if (auto st = orphanDependents(m, *obj); !st) return st.error();
    return SyncResult{};
  }
  if (deleting(*obj) && hasFinalizer(*obj, kForeground)) return deleteDependentsInForeground(m, *obj);
  if (ownerRefs(*obj))
    if (auto st = checkOwners(m, *obj); !st) return st.error();
  return SyncResult{};
}

Status GarbageCollector::orphanDependents(const Monitor& m, const json::Value& obj) {
  std::string uid = uidOf(obj);
  for (auto& d : dependentsOf(uid))
    if (auto st = removeOwnerReferences(*d.monitor, *d.object, {uid}); !st) return st;
  // An informer that lags (a dependent made a moment ago, a busy server) must not let a
  // dependent keep its reference past the finalizer, or it would be collected with the
  // owner gone: the owner's namespace is listed live before the finalizer goes.
  std::string ns(json::getStringPath(obj, {"metadata", "namespace"}));
  if (!ns.empty())
    for (auto& dm : monitors_) {
      if (!dm.resource.namespaced) continue;
      auto list =
          client_.get(client::resourcePath(dm.resource.group, dm.resource.version, dm.resource.resource, ns));
      if (!list) {
        if (list.error().code == 404 || list.error().code == 405) continue;
        return list.error();
      }
      const json::Value* items = json::find(*list, "items");
      if (!items || !items->IsArray()) continue;
      for (const auto& item : items->GetArray())
        if (refTo(item, uid))
          if (auto st = removeOwnerReferences(dm, item, {uid}); !st) return st;
    }
  LOG_INFO("garbage collector: orphaned the dependents of "
           << m.resource.resource << " " << json::getStringPath(obj, {"metadata", "name"}));
  return removeFinalizer(m, obj, kOrphan);
}

Result<SyncResult> GarbageCollector::deleteDependentsInForeground(const Monitor& m, const json::Value& obj) {
  std::string uid = uidOf(obj);
  bool blocked = false;
  for (auto& d : dependentsOf(uid)) {
    const json::Value* ref = refTo(*d.object, uid);
    if (!ref) continue;
    // Every dependent goes; only blocking ones hold the owner (unless they wait for it).
    if (!deleting(*d.object))
      queue_.add(std::to_string(d.monitor - monitors_.data()) + "|" +
                 std::string(json::getStringPath(*d.object, {"metadata", "namespace"})) + "|" +
                 std::string(json::getStringPath(*d.object, {"metadata", "name"})));
    std::set<std::string> seen;
    if (json::getBool(*ref, "blockOwnerDeletion") && !waitsFor(*d.object, uid, seen)) blocked = true;
  }
  if (blocked) return SyncResult{};  // each dependent's deletion queues this owner again
  if (auto st = removeFinalizer(m, obj, kForeground); !st) return st.error();
  return SyncResult{};
}

Status GarbageCollector::checkOwners(const Monitor& m, const json::Value& obj) {
  std::set<std::string> dangling, waiting;
  int solid = 0;
  std::string ns(json::getStringPath(obj, {"metadata", "namespace"}));
  for (auto& ref : ownerRefs(obj)->GetArray()) {
    std::string uid(json::getString(ref, "uid"));
    Found owner = findByUid(uid);
    json::Document live;
    const json::Value* ownerObj = owner.object ? owner.object.get() : nullptr;
    if (!ownerObj) {
      // Not in any cache: ask the server before calling it gone.
      const client::ApiResource* r =
          mapping(std::string(json::getString(ref, "apiVersion")), std::string(json::getString(ref, "kind")));
      if (!r) {
        ++solid;  // a kind we cannot look up is never treated as gone
        continue;
      }
      std::string path = client::resourcePath(r->group, r->version, r->resource, r->namespaced ? ns : "") +
                         "/" + client::urlEncode(std::string(json::getString(ref, "name")));
      auto got = client_.get(path);
      if (!got) {
        if (got.error().code != 404) return got.error();
        dangling.insert(uid);
        continue;
      }
      live = std::move(got.value());
      if (uidOf(live) != uid) {
        dangling.insert(uid);  // same name, another object
        continue;
      }
      ownerObj = &live;
    }
    if (deleting(*ownerObj) && hasFinalizer(*ownerObj, kForeground))
      waiting.insert(uid);
    else
      ++solid;
  }
  if (dangling.empty() && waiting.empty()) return okStatus();
  if (solid > 0) {
    std::set<std::string> drop = dangling;
    drop.insert(waiting.begin(), waiting.end());
    return removeOwnerReferences(m, obj, drop);
  }
  if (deleting(obj)) return okStatus();  // already on its way
  // Its owners are all gone or deleting in the foreground: delete it, in the foreground
  // too if it has dependents of its own and an owner waits.
  bool hasDependents = !dependentsOf(uidOf(obj)).empty();
  std::string policy = !waiting.empty() && hasDependents ? "Foreground" : "Background";
  std::string body = R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":")" + policy +
                     R"(","preconditions":{"uid":")" + uidOf(obj) + R"("}})";
  auto r = client_.request("DELETE", objectPath(m.resource, obj), body, "application/json");
  if (!r) return r.error();
  if (r->status >= 300 && r->status != 404 && r->status != 409)
    return ApiError::internal("deleting " + objectPath(m.resource, obj) + ": status " +
                              std::to_string(r->status));
  LOG_INFO("garbage collector: deleted " << m.resource.resource << " " << (ns.empty() ? "" : ns + "/")
                                         << json::getStringPath(obj, {"metadata", "name"}) << " (" << policy
                                         << "): its owners are gone");
  return okStatus();
}

Status GarbageCollector::removeFinalizer(const Monitor& m, const json::Value& obj,
                                         std::string_view finalizer) {
  json::Document patch;
  patch.SetObject();
  auto& a = patch.GetAllocator();
  json::Value& md = json::ensureObject(patch, "metadata", a);
  json::Value list(rapidjson::kArrayType);
  if (const json::Value* fins = json::findPath(obj, {"metadata", "finalizers"}); fins && fins->IsArray())
    for (auto& f : fins->GetArray())
      if (!(f.IsString() && json::view(f) == finalizer)) list.PushBack(json::Value(f, a), a);
  if (list.Empty())
    json::set(md, "finalizers", json::Value(rapidjson::kNullType), a);
  else
    json::set(md, "finalizers", std::move(list), a);
  // The resourceVersion makes this a compare-and-swap: a concurrent edit conflicts.
  json::setString(md, "resourceVersion", json::getStringPath(obj, {"metadata", "resourceVersion"}), a);
  auto r = client_.patch(objectPath(m.resource, obj), json::serialize(patch), "application/merge-patch+json");
  if (!r && r.error().code != 404) return r.error();
  return okStatus();
}

Status GarbageCollector::removeOwnerReferences(const Monitor& m, const json::Value& obj,
                                               const std::set<std::string>& uids) {
  json::Document doc;
  json::Value list(rapidjson::kArrayType);
  if (const json::Value* refs = ownerRefs(obj))
    for (auto& r : refs->GetArray())
      if (!uids.count(std::string(json::getString(r, "uid"))))
        list.PushBack(json::Value(r, doc.GetAllocator()), doc.GetAllocator());
  auto r = client_.patch(objectPath(m.resource, obj), ownerRefsPatch(obj, std::move(list), doc),
                         "application/merge-patch+json");
  if (!r && r.error().code != 404) return r.error();
  return okStatus();
}

}  // namespace shepherd::controllers
