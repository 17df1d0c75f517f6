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

std::string ownerRefsPatch(const json::Value& obj, json::Value refs, json::Document& doc) {
  auto& a = doc.GetAllocator();
  doc.SetObject();
  json::Value& md = json::ensureObject(doc, "metadata", a);
  if (refs.Empty())
    json::set(md, "ownerReferences", json::Value(rapidjson::kNullType), a);
  else
    json::set(md, "ownerReferences", std::move(refs), a);
  json::setString(md, "resourceVersion", json::getStringPath(obj, {"metadata", "resourceVersion"}), a);
  return json::serialize(doc);
}

}  // namespace shepherd::controllers
