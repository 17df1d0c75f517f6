#include "controllers/serviceaccount/root_ca_publisher.h"

#include "controllers/serviceaccount/namespace_objects.h"

namespace shepherd::controllers {

namespace {
constexpr const char* kName = "kube-root-ca.crt";
constexpr const char* kDescriptionKey = "kubernetes.io/description";
constexpr const char* kDescription =
    "The CA bundle that verifies the cluster's API server (kubernetes.default.svc). "
    "Maintained by the controller manager: edits are reverted.";

client::InformerOptions configmapsOptions() {
  client::InformerOptions o;
  o.plural = "configmaps";
  o.field_selector = std::string("metadata.name=") + kName;
  return o;
}

// True if `cm` already says exactly what we publish.
bool upToDate(const json::Value& cm, const std::string& pem) {
  const json::Value* data = json::find(cm, "data");
  if (!data || !data->IsObject() || data->MemberCount() != 1 || json::getString(*data, "ca.crt") != pem)
    return false;
  if (json::find(cm, "binaryData")) return false;
  return json::getStringPath(cm, {"metadata", "annotations", kDescriptionKey}) == kDescription;
}
}  // namespace

RootCaPublisher::RootCaPublisher(client::Client& c, client::SharedInformers& informers, std::string ca_pem)
    : Controller("root-ca-cert-publisher"),
      client_(c),
      namespaces_(informers.get(client::allObjects("", "v1", "namespaces"))),
      configmaps_(informers.get(configmapsOptions())),
      ca_pem_(std::move(ca_pem)) {
  queueNamespaceOf(namespaces_, configmaps_, queue_);
}

Result<SyncResult> RootCaPublisher::sync(const std::string& ns) {
  if (!namespaceActive(namespaces_, ns)) return SyncResult{};
  std::string path = "/api/v1/namespaces/" + client::urlEncode(ns) + "/configmaps";
  client::Object cm = configmaps_.get(ns + "/" + kName);
  if (cm && upToDate(*cm, ca_pem_)) return SyncResult{};
  json::Document doc;
  auto& a = doc.GetAllocator();
  if (cm) {
    doc.CopyFrom(*cm, a);  // keep its metadata (resourceVersion: a concurrent edit conflicts and we retry)
    json::remove(doc, "binaryData");
  } else {
    doc.SetObject();
    json::setString(doc, "apiVersion", "v1", a);
    json::setString(doc, "kind", "ConfigMap", a);
    json::setString(json::ensureObject(doc, "metadata", a), "name", kName, a);
  }
  json::setString(json::ensureObject(json::ensureObject(doc, "metadata", a), "annotations", a),
                  kDescriptionKey, kDescription, a);
  json::Value data(rapidjson::kObjectType);
  json::setString(data, "ca.crt", ca_pem_, a);
  json::set(doc, "data", std::move(data), a);
  auto r =
      cm ? client_.put(path + "/" + kName, json::serialize(doc)) : client_.post(path, json::serialize(doc));
  if (!r && r.error().code != 409 && r.error().code != 403 && r.error().code != 404) return r.error();
  if (!r && r.error().code == 409 && cm) return r.error();  // a conflicting edit: try again on fresh state
  return SyncResult{};
}

}  // namespace shepherd::controllers
