#include "plugins/admission/storage_protection.h"

namespace shepherd::plugins::admission {

using shepherd::admission::Attributes;
using shepherd::admission::Operation;

Status StorageObjectInUseProtection::admit(const Attributes& a, json::Document& obj,
                                           const json::Value*) const {
  if (a.operation != Operation::Create || !a.resource || !a.resource->group.empty() || !a.subresource.empty())
    return okStatus();
  const char* finalizer = a.resource->plural == "persistentvolumes"        ? "kubernetes.io/pv-protection"
                          : a.resource->plural == "persistentvolumeclaims" ? "kubernetes.io/pvc-protection"
                                                                           : nullptr;
  if (!finalizer) return okStatus();
  json::Allocator& al = obj.GetAllocator();
  json::Value& meta = json::ensureObject(obj, "metadata", al);
  json::Value* list = json::find(meta, "finalizers");
  if (!list || !list->IsArray()) {
    json::set(meta, "finalizers", json::Value(rapidjson::kArrayType), al);
    list = json::find(meta, "finalizers");
  }
  for (const auto& f : list->GetArray())
    if (f.IsString() && json::view(f) == finalizer) return okStatus();
  list->PushBack(json::str(finalizer, al), al);
  return okStatus();
}

}  // namespace shepherd::plugins::admission
