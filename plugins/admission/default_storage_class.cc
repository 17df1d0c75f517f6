#include "plugins/admission/default_storage_class.h"

#include "apis/kinds/kinds.h"
#include "meta/persistent_volumes.h"

namespace shepherd::plugins::admission {

using shepherd::admission::Attributes;
using shepherd::admission::Operation;

Status DefaultStorageClass::admit(const Attributes& a, json::Document& obj, const json::Value*) const {
  if (a.operation != Operation::Create || !a.resource || !a.resource->group.empty() ||
      a.resource->plural != "persistentvolumeclaims" || !a.subresource.empty())
    return okStatus();
  if (meta::claimHasClass(obj)) return okStatus();
  registry::Store* classes = registry_ ? registry_->store("storage.k8s.io", "v1", "storageclasses") : nullptr;
  if (!classes) return okStatus();
  auto page = classes->list(registry::ListOptions{});
  if (!page)
    return ApiError::forbidden("", "persistentvolumeclaims",
                               std::string(json::getStringPath(obj, {"metadata", "name"})),
                               "failed to get default storage class: " + page.error().message);
  json::Document best;
  for (const auto& o : page.value().items) {
    json::Document d;
    if (auto st = json::parse(o->json, d); !st) return st.error();
    if (!apis::kinds::isDefaultStorageClass(d)) continue;
    if (best.IsObject()) {
      std::string_view created = json::getStringPath(d, {"metadata", "creationTimestamp"});
      std::string_view best_created = json::getStringPath(best, {"metadata", "creationTimestamp"});
      if (created < best_created ||
          (created == best_created &&
           json::getStringPath(d, {"metadata", "name"}) >= json::getStringPath(best, {"metadata", "name"})))
        continue;
    }
    best.Swap(d);
  }
  if (!best.IsObject()) return okStatus();
  json::setString(json::ensureObject(obj, "spec", obj.GetAllocator()), "storageClassName",
                  json::getStringPath(best, {"metadata", "name"}), obj.GetAllocator());
  return okStatus();
}

}  // namespace shepherd::plugins::admission
