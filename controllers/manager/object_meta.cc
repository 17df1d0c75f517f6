#include "controllers/manager/object_meta.h"

namespace shepherd::controllers {

std::string nameOf(const json::Value& obj) {
  return std::string(json::getStringPath(obj, {"metadata", "name"}));
}

std::string namespaceOf(const json::Value& obj) {
  return std::string(json::getStringPath(obj, {"metadata", "namespace"}));
}

std::string uidOf(const json::Value& obj) {
  return std::string(json::getStringPath(obj, {"metadata", "uid"}));
}

void indexByNamespace(client::Informer& informer) {
  informer.addIndex(kNamespaceIndex,
                    [](const json::Value& o) { return std::vector<std::string>{namespaceOf(o)}; });
}

std::string ownerRefsPatch(const json::Value& obj, json::Value refs, json::Document& doc,
                           const std::string& add_finalizer) {
  auto& a = doc.GetAllocator();
  doc.SetObject();
  json::Value& md = json::ensureObject(doc, "metadata", a);
  if (refs.Empty())
    json::set(md, "ownerReferences", json::Value(rapidjson::kNullType), a);
  else
    json::set(md, "ownerReferences", std::move(refs), a);
  json::setString(md, "resourceVersion", json::getStringPath(obj, {"metadata", "resourceVersion"}), a);
  if (!add_finalizer.empty()) {
    json::Value fins(rapidjson::kArrayType);
    bool has = false;
    if (const json::Value* f = json::findPath(obj, {"metadata", "finalizers"}); f && f->IsArray())
      for (auto& x : f->GetArray()) {
        has = has || (x.IsString() && json::view(x) == add_finalizer);
        fins.PushBack(json::Value(x, a), a);
      }
    if (!has) {
      fins.PushBack(json::str(add_finalizer, a), a);
      json::set(md, "finalizers", std::move(fins), a);
    }
  }
  return json::serialize(doc);
}

}  // namespace shepherd::controllers
