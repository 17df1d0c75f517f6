#include "controllers/replicaset/replicated_kind.h"

#include "client/client.h"

namespace shepherd::controllers {

std::string ReplicatedKind::collectionPath(const std::string& ns) const {
  std::string root = group.empty() ? "/api/v1" : "/apis/" + api_version;
  return root + "/namespaces/" + client::urlEncode(ns) + "/" + plural;
}

std::string ReplicatedKind::objectPath(const std::string& ns, const std::string& name) const {
  return collectionPath(ns) + "/" + client::urlEncode(name);
}

Result<meta::LabelSelector> ReplicatedKind::selectorOf(const json::Value& obj) const {
  const json::Value* sel = json::findPath(obj, {"spec", "selector"});
  if (!sel) return ApiError::badRequest("spec.selector is missing");
  if (!map_selector) return meta::LabelSelector::fromJson(*sel);
  json::Document wrapped;
  wrapped.SetObject();
  json::set(wrapped, "matchLabels", json::Value(*sel, wrapped.GetAllocator()), wrapped.GetAllocator());
  return meta::LabelSelector::fromJson(wrapped);
}

const ReplicatedKind& replicaSetKind() {
  static const ReplicatedKind k{"apps", "apps/v1", "replicasets", "ReplicaSet", "replicaset", false};
  return k;
}

const ReplicatedKind& replicationControllerKind() {
  static const ReplicatedKind k{
      "", "v1", "replicationcontrollers", "ReplicationController", "replicationmanager", true};
  return k;
}

}  // namespace shepherd::controllers
