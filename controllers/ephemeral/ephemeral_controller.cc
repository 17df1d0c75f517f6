#include "controllers/ephemeral/ephemeral_controller.h"

#include "controllers/manager/object_meta.h"

namespace shepherd::controllers::ephemeral {

namespace {

constexpr const char* kClaimIndex = "ephemeral-claim";

bool hasEphemeral(const json::Value& pod) {
  const json::Value* vols = json::findPath(pod, {"spec", "volumes"});
  if (!vols || !vols->IsArray()) return false;
  for (const auto& v : vols->GetArray())
    if (const json::Value* e = json::find(v, "ephemeral"); e && e->IsObject()) return true;
  return false;
}

bool controlledBy(const json::Value& claim, const std::string& uid) {
  const json::Value* refs = json::findPath(claim, {"metadata", "ownerReferences"});
  if (!refs || !refs->IsArray()) return false;
  for (const auto& r : refs->GetArray())
    if (json::getBool(r, "controller") && json::getString(r, "uid") == uid) return true;
  return false;
}

}  // namespace

EphemeralVolumeController::EphemeralVolumeController(client::Client& c, client::SharedInformers& informers,
                                                     client::EventRecorder& events)
    : Controller("ephemeral-volume"),
      client_(c),
      pods_(informers.get(client::allObjects("", "v1", "pods"))),
      claims_(informers.get(client::allObjects("", "v1", "persistentvolumeclaims"))),
      events_(events) {
  // Pods by the ephemeral claims they need ("ns/claim"), for a deleted claim.
  pods_.addIndex(kClaimIndex, [](const json::Value& pod) {
    std::vector<std::string> out;
    if (const json::Value* vols = json::findPath(pod, {"spec", "volumes"}); vols && vols->IsArray())
      for (const auto& v : vols->GetArray())
        if (const json::Value* e = json::find(v, "ephemeral"); e && e->IsObject())
          out.push_back(namespaceOf(pod) + "/" + nameOf(pod) + "-" + std::string(json::getString(v, "name")));
    return out;
  });
  client::EventHandlers ph;
  ph.on_add = [this](const client::Object& o) {
    const json::Value* d = json::findPath(*o, {"metadata", "deletionTimestamp"});
    if ((!d || d->IsNull()) && hasEphemeral(*o)) queue_.add(client::objectKey(*o));
  };
  pods_.addHandlers(std::move(ph));
  client::EventHandlers ch;
  ch.on_delete = [this](const client::Object& o) {
    for (const auto& p : pods_.byIndex(kClaimIndex, client::objectKey(*o))) queue_.add(client::objectKey(*p));
  };
  claims_.addHandlers(std::move(ch));
}

Result<SyncResult> EphemeralVolumeController::sync(const std::string& key) {
  client::Object pod = pods_.get(key);
  if (!pod) return SyncResult{};
  if (const json::Value* d = json::findPath(*pod, {"metadata", "deletionTimestamp"}); d && !d->IsNull())
    return SyncResult{};
  std::string ns = namespaceOf(*pod), uid = uidOf(*pod);
  const json::Value* vols = json::findPath(*pod, {"spec", "volumes"});
  if (!vols || !vols->IsArray()) return SyncResult{};
  for (const auto& v : vols->GetArray()) {
    const json::Value* eph = json::find(v, "ephemeral");
    if (!eph || !eph->IsObject()) continue;
    std::string vol(json::getString(v, "name"));
    std::string claimName = nameOf(*pod) + "-" + vol;
    if (client::Object existing = claims_.get(ns + "/" + claimName)) {
      if (!controlledBy(*existing, uid))
        events_.event(*pod, "v1", "Pod", "Warning", "FailedBinding",
                      "ephemeral volume " + vol + ": PVC " + ns + "/" + claimName +
                          " was not created for pod " + ns + "/" + nameOf(*pod) + " (pod is not owner)");
      continue;
    }
    json::Document claim(rapidjson::kObjectType);
    json::Allocator& a = claim.GetAllocator();
    json::setString(claim, "apiVersion", "v1", a);
    json::setString(claim, "kind", "PersistentVolumeClaim", a);
    json::Value meta(rapidjson::kObjectType);
    if (const json::Value* tm = json::findPath(*eph, {"volumeClaimTemplate", "metadata"});
        tm && tm->IsObject())
      for (const char* k : {"labels", "annotations"})
        if (const json::Value* m = json::find(*tm, k)) json::set(meta, k, json::Value(*m, a), a);
    json::setString(meta, "name", claimName, a);
    json::setString(meta, "namespace", ns, a);
    json::Value ref(rapidjson::kObjectType);
    json::setString(ref, "apiVersion", "v1", a);
    json::setString(ref, "kind", "Pod", a);
    json::setString(ref, "name", nameOf(*pod), a);
    json::setString(ref, "uid", uid, a);
    json::set(ref, "controller", json::Value(true), a);
    json::set(ref, "blockOwnerDeletion", json::Value(true), a);
    json::Value refs(rapidjson::kArrayType);
    refs.PushBack(std::move(ref), a);
    json::set(meta, "ownerReferences", std::move(refs), a);
    json::set(claim, "metadata", std::move(meta), a);
    if (const json::Value* spec = json::findPath(*eph, {"volumeClaimTemplate", "spec"}))
      json::set(claim, "spec", json::Value(*spec, a), a);
    auto r = client_.post("/api/v1/namespaces/" + client::urlEncode(ns) + "/persistentvolumeclaims",
                          json::serialize(claim));
    if (!r && r.error().code != 409) {
      events_.event(*pod, "v1", "Pod", "Warning", "FailedBinding",
                    "ephemeral volume " + vol + ": create PVC " + claimName + ": " + r.error().message);
      return r.error();
    }
  }
  return SyncResult{};
}

}  // namespace shepherd::controllers::ephemeral
