#include "plugins/admission/node_restriction.h"

#include "auth/node_authorizer.h"

namespace shepherd::plugins::admission {

using shepherd::admission::Attributes;
using shepherd::admission::Operation;

namespace {

// 403 as admission.NewForbidden words it (a missing name reads "Unknown").
ApiError forbidden(const Attributes& a, const std::string& name, const std::string& why) {
  return ApiError::forbidden(a.resource->group, a.resource->plural, name.empty() ? "Unknown" : name, why);
}

std::string nameOf(const Attributes& a, const json::Value& obj) {
  return a.name.empty() ? std::string(json::getStringPath(obj, {"metadata", "name"})) : a.name;
}

bool sameTaints(const json::Value* was, const json::Value* will) {
  bool wasEmpty = !was || !was->IsArray() || was->Empty();
  bool willEmpty = !will || !will->IsArray() || will->Empty();
  return wasEmpty == willEmpty && (wasEmpty || *was == *will);
}

}  // namespace

Status NodeRestriction::admit(const Attributes& a, json::Document& obj, const json::Value* old) const {
  std::string node = auth::nodeNameOf(a.user);
  if (node.empty()) return okStatus();
  const std::string quoted = "\"" + node + "\"";
  const apis::Resource& r = *a.resource;
  if (r.group.empty() && r.plural == "pods") {
    if (a.subresource.empty()) {
      if (a.operation == Operation::Create) {
        if (!json::findPath(obj, {"metadata", "annotations", "kubernetes.io/config.mirror"}))
          return forbidden(a, nameOf(a, obj),
                           "pod does not have \"kubernetes.io/config.mirror\" annotation, node " + quoted +
                               " can only create mirror pods");
        if (json::getStringPath(obj, {"spec", "nodeName"}) != node)
          return forbidden(a, nameOf(a, obj),
                           "node " + quoted + " can only create pods with spec.nodeName set to itself");
        return okStatus();
      }
      if (a.operation == Operation::Delete) {
        if (old && json::getStringPath(*old, {"spec", "nodeName"}) != node)
          return forbidden(a, a.name,
                           "node " + quoted + " can only delete pods with spec.nodeName set to itself");
        return okStatus();
      }
      return forbidden(a, a.name,
                       std::string("unexpected operation \"") +
                           shepherd::admission::operationName(a.operation) + "\", node " + quoted +
                           " can only create and delete mirror pods");
    }
    if (a.subresource == "status") {
      if (old && json::getStringPath(*old, {"spec", "nodeName"}) != node)
        return forbidden(
            a, a.name,
            "node " + quoted + " can only update pod status for pods with spec.nodeName set to itself");
      return okStatus();
    }
    return forbidden(
        a, a.name,
        "unexpected pod subresource \"" + a.subresource + "\", only 'status' and 'eviction' are allowed");
  }
  if (r.group.empty() && r.plural == "nodes") {
    std::string name = nameOf(a, obj);
    if (name != node)
      return forbidden(a, name, "node " + quoted + " is not allowed to modify node \"" + name + "\"");
    if (a.operation == Operation::Update && a.subresource.empty() && old &&
        !sameTaints(json::findPath(*old, {"spec", "taints"}), json::findPath(obj, {"spec", "taints"})))
      return forbidden(a, name, "node " + quoted + " is not allowed to modify taints");
    return okStatus();
  }
  // A node may ask for a ServiceAccount token only bound to one of its own pods.
  if (r.group.empty() && r.plural == "serviceaccounts" && a.subresource == "token") {
    const json::Value* ref = json::findPath(obj, {"spec", "boundObjectRef"});
    if (!ref || !ref->IsObject() || json::getString(*ref, "kind") != "Pod")
      return forbidden(a, a.name, "node requested token not bound to a pod");
    std::string uid(json::getString(*ref, "uid"));
    if (uid.empty()) return forbidden(a, a.name, "node requested token with a pod binding without a uid");
    std::string podName(json::getString(*ref, "name"));
    registry::Store* pods = registry_.store("", "v1", "pods");
    auto pod = pods ? pods->get(a.ns, podName) : Result<registry::ObjectPtr>(ApiError::internal("no pods"));
    if (!pod) return ApiError::notFound("", "pods", podName);
    json::Document p;
    p.Parse((*pod)->json.data(), (*pod)->json.size());
    if (json::getStringPath(p, {"metadata", "uid"}) != uid)
      return forbidden(a, a.name,
                       "the UID in the bound object reference (" + uid +
                           ") does not match the UID in record. The object might have been deleted and then "
                           "recreated");
    if (json::getStringPath(p, {"spec", "nodeName"}) != node)
      return forbidden(a, a.name, "node requested token bound to a pod scheduled on a different node");
    return okStatus();
  }
  if (r.group == "coordination.k8s.io" && r.plural == "leases") {
    std::string name = nameOf(a, obj);
    if (a.ns != "kube-node-lease")
      return forbidden(a, name, "can only access leases in the \"kube-node-lease\" system namespace");
    if (name != node)
      return forbidden(a, name, "can only access node lease with the same name as the requesting node");
  }
  return okStatus();
}

}  // namespace shepherd::plugins::admission
