#include "controllers/volumeprotection/protection_controllers.h"

#include "common/log.h"
#include "controllers/manager/object_meta.h"

namespace shepherd::controllers::volumeprotection {

namespace {

bool deleting(const json::Value& obj) {
  const json::Value* d = json::findPath(obj, {"metadata", "deletionTimestamp"});
  return d && !d->IsNull();
}

bool hasFinalizer(const json::Value& obj, const char* f) {
  const json::Value* list = json::findPath(obj, {"metadata", "finalizers"});
  if (!list || !list->IsArray()) return false;
  for (const auto& x : list->GetArray())
    if (x.IsString() && json::view(x) == f) return true;
  return false;
}

// The object with `f` added or removed, PUT back (its resourceVersion guards the write).
Status putFinalizer(client::Client& c, const std::string& path, const json::Value& obj, const char* f,
                    bool add) {
  json::Document d;
  d.CopyFrom(obj, d.GetAllocator());
  json::Allocator& a = d.GetAllocator();
  json::Value& meta = json::ensureObject(d, "metadata", a);
  json::Value list(rapidjson::kArrayType);
  if (const json::Value* old = json::find(meta, "finalizers"); old && old->IsArray())
    for (const auto& x : old->GetArray())
      if (!(x.IsString() && json::view(x) == f)) list.PushBack(json::Value(x, a), a);
  if (add) list.PushBack(json::str(f, a), a);
  if (list.Empty())
    json::remove(meta, "finalizers");
  else
    json::set(meta, "finalizers", std::move(list), a);
  auto r = c.put(path, json::serialize(d));
  if (!r && r.error().code != 404) return r.error();
  return okStatus();
}

std::string claimPath(const json::Value& c) {
  return "/api/v1/namespaces/" + client::urlEncode(namespaceOf(c)) + "/persistentvolumeclaims/" +
         client::urlEncode(nameOf(c));
}

// A pod that holds its claims: scheduled (upstream does not look at the phase).
bool holds(const json::Value& pod, const std::string& claim) {
  if (json::getStringPath(pod, {"spec", "nodeName"}).empty()) return false;
  for (const auto& c : claimsOfPod(pod))
    if (c == claim) return true;
  return false;
}

}  // namespace

std::vector<std::string> claimsOfPod(const json::Value& pod) {
  std::vector<std::string> out;
  const json::Value* vols = json::findPath(pod, {"spec", "volumes"});
  if (!vols || !vols->IsArray()) return out;
  for (const auto& v : vols->GetArray()) {
    if (const json::Value* pvc = json::find(v, "persistentVolumeClaim"); pvc && pvc->IsObject())
      out.emplace_back(json::getString(*pvc, "claimName"));
    else if (const json::Value* eph = json::find(v, "ephemeral"); eph && eph->IsObject())
      out.push_back(nameOf(pod) + "-" + std::string(json::getString(v, "name")));
  }
  return out;
}

ClaimProtectionController::ClaimProtectionController(client::Client& c, client::SharedInformers& informers)
    : Controller("pvc-protection"),
      client_(c),
      claims_(informers.get(client::allObjects("", "v1", "persistentvolumeclaims"))),
      pods_(informers.get(client::allObjects("", "v1", "pods"))) {
  indexByNamespace(pods_);
  claims_.addHandlers(enqueueKeys());
  client::EventHandlers ph;
  ph.on_update = [this](const client::Object&, const client::Object& o) { onPod(*o); };
  ph.on_delete = [this](const client::Object& o) { onPod(*o); };
  pods_.addHandlers(std::move(ph));
}

void ClaimProtectionController::onPod(const json::Value& pod) {
  for (const auto& c : claimsOfPod(pod)) queue_.add(namespaceOf(pod) + "/" + c);
}

Result<bool> ClaimProtectionController::inUse(const json::Value& claim) {
  std::string name = nameOf(claim);
  for (const auto& p : pods_.byIndex(kNamespaceIndex, namespaceOf(claim)))
    if (holds(*p, name)) return true;
  // The informer may lag: a live list decides before the finalizer goes.
  auto list = client_.get("/api/v1/namespaces/" + client::urlEncode(namespaceOf(claim)) + "/pods");
  if (!list) return list.error();
  if (const json::Value* items = json::find(*list, "items"); items && items->IsArray())
    for (const auto& p : items->GetArray())
      if (holds(p, name)) return true;
  return false;
}

Result<SyncResult> ClaimProtectionController::sync(const std::string& key) {
  client::Object claim = claims_.get(key);
  if (!claim) return SyncResult{};
  bool has = hasFinalizer(*claim, kClaimFinalizer);
  if (!deleting(*claim)) {
    if (!has)
      if (auto st = putFinalizer(client_, claimPath(*claim), *claim, kClaimFinalizer, true); !st)
        return st.error();
    return SyncResult{};
  }
  if (!has) return SyncResult{};
  auto used = inUse(*claim);
  if (!used) return used.error();
  if (*used) return SyncResult{};
  if (auto st = putFinalizer(client_, claimPath(*claim), *claim, kClaimFinalizer, false); !st)
    return st.error();
  LOG_INFO("pvc-protection: removed the protection finalizer from claim " << key);
  return SyncResult{};
}

VolumeProtectionController::VolumeProtectionController(client::Client& c, client::SharedInformers& informers)
    : Controller("pv-protection"),
      client_(c),
      volumes_(informers.get(client::allObjects("", "v1", "persistentvolumes"))) {
  volumes_.addHandlers(enqueueKeys());
}

Result<SyncResult> VolumeProtectionController::sync(const std::string& key) {
  client::Object pv = volumes_.get(key);
  if (!pv) return SyncResult{};
  std::string path = "/api/v1/persistentvolumes/" + client::urlEncode(nameOf(*pv));
  bool has = hasFinalizer(*pv, kVolumeFinalizer);
  if (!deleting(*pv)) {
    if (!has)
      if (auto st = putFinalizer(client_, path, *pv, kVolumeFinalizer, true); !st) return st.error();
    return SyncResult{};
  }
  if (!has || json::getStringPath(*pv, {"status", "phase"}) == "Bound") return SyncResult{};
  if (auto st = putFinalizer(client_, path, *pv, kVolumeFinalizer, false); !st) return st.error();
  return SyncResult{};
}

}  // namespace shepherd::controllers::volumeprotection
