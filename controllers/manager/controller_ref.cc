#include "controllers/manager/controller_ref.h"

#include <optional>

#include "controllers/manager/object_meta.h"

namespace shepherd::controllers {

namespace {

const json::Value* controllerOf(const json::Value& obj) {
  const json::Value* refs = json::findPath(obj, {"metadata", "ownerReferences"});
  if (!refs || !refs->IsArray()) return nullptr;
  for (auto& r : refs->GetArray())
    if (json::getBool(r, "controller")) return &r;
  return nullptr;
}

}  // namespace

json::Value controllerReference(const Owner& owner, json::Allocator& a) {
  json::Value ref(rapidjson::kObjectType);
  json::setString(ref, "apiVersion", owner.api_version, a);
  json::setString(ref, "kind", owner.kind, a);
  json::setString(ref, "name", json::getStringPath(*owner.object, {"metadata", "name"}), a);
  json::setString(ref, "uid", uidOf(*owner.object), a);
  json::set(ref, "controller", json::Value(true), a);
  json::set(ref, "blockOwnerDeletion", json::Value(true), a);
  return ref;
}

Result<std::vector<client::Object>> claimObjects(
    client::Client& client, const Owner& owner, const meta::LabelSelector& selector,
    const std::vector<client::Object>& candidates,
    const std::function<std::string(const json::Value&)>& path_of) {
  std::vector<client::Object> claimed;
  std::string uid = uidOf(*owner.object);
  bool ownerDeleting = json::findPath(*owner.object, {"metadata", "deletionTimestamp"}) != nullptr;
  std::optional<bool> canAdopt;
  Status firstError = okStatus();
  for (auto& obj : candidates) {
    bool matches = !selector.empty() && selector.matchesLabels(json::findPath(*obj, {"metadata", "labels"}));
    if (const json::Value* ref = controllerOf(*obj)) {
      if (json::getString(*ref, "uid") != uid) continue;  // someone else's
      if (matches) {
        claimed.push_back(obj);
        continue;
      }
      if (ownerDeleting) continue;
      json::Document doc;
      json::Value refs(rapidjson::kArrayType);
      for (auto& r : json::findPath(*obj, {"metadata", "ownerReferences"})->GetArray())
        if (json::getString(r, "uid") != uid)
          refs.PushBack(json::Value(r, doc.GetAllocator()), doc.GetAllocator());
      auto r = client.patch(path_of(*obj), ownerRefsPatch(*obj, std::move(refs), doc),
                            "application/merge-patch+json");
      if (!r && r.error().code != 404 && firstError) firstError = r.error();
      continue;
    }
    if (!matches || ownerDeleting || json::findPath(*obj, {"metadata", "deletionTimestamp"})) continue;
    if (!canAdopt) {
      auto fresh = client.get(owner.live_path);
      canAdopt = fresh && uidOf(*fresh) == uid && !json::findPath(*fresh, {"metadata", "deletionTimestamp"});
    }
    if (!*canAdopt) continue;
    json::Document doc;
    auto& a = doc.GetAllocator();
    json::Value refs(rapidjson::kArrayType);
    if (const json::Value* old = json::findPath(*obj, {"metadata", "ownerReferences"}); old && old->IsArray())
      for (auto& r : old->GetArray()) refs.PushBack(json::Value(r, a), a);
    refs.PushBack(controllerReference(owner, a), a);
    auto r = client.patch(path_of(*obj), ownerRefsPatch(*obj, std::move(refs), doc, owner.adopt_finalizer),
                          "application/merge-patch+json");
    if (r)
      claimed.push_back(std::make_shared<const json::Document>(std::move(r.value())));
    else if (r.error().code != 404 && firstError)
      firstError = r.error();
  }
  if (!firstError) return firstError.error();
  return claimed;
}

}  // namespace shepherd::controllers
