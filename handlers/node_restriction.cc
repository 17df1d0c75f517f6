#include "handlers/node_restriction.h"

#include "auth/node_authorizer.h"
#include "handlers/negotiation.h"
#include "handlers/request_user.h"

namespace shepherd::handlers {

namespace {

// 403 as admission.NewForbidden words it (a missing name reads "Unknown").
ApiError forbidden(const auth::RequestInfo& info, const std::string& name, const std::string& why) {
  return ApiError::forbidden(info.api_group, info.resource, name.empty() ? "Unknown" : name, why);
}

// The request body in any encoding a client may send (JSON, YAML, protobuf); an empty
// object when it cannot be read (the handler then answers the decoding error itself).
json::Document parseBody(const http::Request& req) {
  json::Document d;
  if (!decodeBody(req, d) || !d.IsObject()) d.SetObject();
  return d;
}

json::Document current(registry::Registry& registry, const char* group, const char* plural,
                       const std::string& ns, const std::string& name) {
  json::Document d;
  d.SetNull();
  if (registry::Store* s = registry.store(group, "v1", plural))
    if (auto obj = s->get(ns, name); obj.ok()) d.Parse((*obj)->json.data(), (*obj)->json.size());
  return d;
}

}  // namespace

Status admitNodeRequest(const http::Request& req, const auth::RequestInfo& info,
                        registry::Registry& registry) {
  std::string node = auth::nodeNameOf(requestUser(req));
  if (node.empty() || !info.resource_request) return okStatus();
  const std::string& verb = info.verb;
  bool write = verb == "create" || verb == "update" || verb == "patch" || verb == "delete";
  if (!write) return okStatus();
  const std::string quoted = "\"" + node + "\"";
  if (info.api_group.empty() && info.resource == "pods") {
    if (info.subresource.empty()) {
      if (verb == "create") {
        json::Document pod = parseBody(req);
        std::string name(json::getStringPath(pod, {"metadata", "name"}));
        if (!json::findPath(pod, {"metadata", "annotations", "kubernetes.io/config.mirror"}))
          return forbidden(info, name,
                           "pod does not have \"kubernetes.io/config.mirror\" annotation, node " + quoted +
                               " can only create mirror pods");
        if (json::getStringPath(pod, {"spec", "nodeName"}) != node)
          return forbidden(info, name,
                           "node " + quoted + " can only create pods with spec.nodeName set to itself");
        return okStatus();
      }
      if (verb == "delete") {
        json::Document pod = current(registry, "", "pods", info.namespace_, info.name);
        if (pod.IsNull()) return okStatus();  // the delete answers 404 itself
        if (json::getStringPath(pod, {"spec", "nodeName"}) != node)
          return forbidden(info, info.name,
                           "node " + quoted + " can only delete pods with spec.nodeName set to itself");
        return okStatus();
      }
      std::string op = verb == "patch" || verb == "update" ? "UPDATE" : verb;
      return forbidden(
          info, info.name,
          "unexpected operation \"" + op + "\", node " + quoted + " can only create and delete mirror pods");
    }
    if (info.subresource == "status") {
      json::Document pod = current(registry, "", "pods", info.namespace_, info.name);
      if (pod.IsNull()) return okStatus();
      if (json::getStringPath(pod, {"spec", "nodeName"}) != node)
        return forbidden(
            info, info.name,
            "node " + quoted + " can only update pod status for pods with spec.nodeName set to itself");
      return okStatus();
    }
    return forbidden(
        info, info.name,
        "unexpected pod subresource \"" + info.subresource + "\", only 'status' and 'eviction' are allowed");
  }
  if (info.api_group.empty() && info.resource == "nodes") {
    std::string name = info.name;
    if (verb == "create") name = std::string(json::getStringPath(parseBody(req), {"metadata", "name"}));
    if (name != node)
      return forbidden(info, name, "node " + quoted + " is not allowed to modify node \"" + name + "\"");
    if (verb == "update" && info.subresource.empty()) {
      json::Document old = current(registry, "", "nodes", "", name);
      json::Document now = parseBody(req);
      const json::Value* was = old.IsNull() ? nullptr : json::findPath(old, {"spec", "taints"});
      const json::Value* will = json::findPath(now, {"spec", "taints"});
      bool wasEmpty = !was || !was->IsArray() || was->Empty();
      bool willEmpty = !will || !will->IsArray() || will->Empty();
      if (wasEmpty != willEmpty || (!wasEmpty && *was != *will))
        return forbidden(info, name, "node " + quoted + " is not allowed to modify taints");
    }
    return okStatus();
  }
  // A node may ask for a ServiceAccount token only bound to one of its own pods.
  if (info.api_group.empty() && info.resource == "serviceaccounts" && info.subresource == "token") {
    json::Document tr = parseBody(req);
    const json::Value* ref = json::findPath(tr, {"spec", "boundObjectRef"});
    if (!ref || !ref->IsObject() || json::getString(*ref, "kind") != "Pod")
      return forbidden(info, info.name, "node requested token not bound to a pod");
    std::string uid(json::getString(*ref, "uid"));
    if (uid.empty())
      return forbidden(info, info.name, "node requested token with a pod binding without a uid");
    std::string podName(json::getString(*ref, "name"));
    json::Document pod = current(registry, "", "pods", info.namespace_, podName);
    if (pod.IsNull()) return ApiError::notFound("", "pods", podName);
    if (json::getStringPath(pod, {"metadata", "uid"}) != uid)
      return forbidden(
          info, info.name,
          "the UID in the bound object reference (" + uid +
              ") does not match the UID in record. The object might have been deleted and then recreated");
    if (json::getStringPath(pod, {"spec", "nodeName"}) != node)
      return forbidden(info, info.name, "node requested token bound to a pod scheduled on a different node");
    return okStatus();
  }
  if (info.api_group == "coordination.k8s.io" && info.resource == "leases") {
    std::string name = info.name;
    if (verb == "create") name = std::string(json::getStringPath(parseBody(req), {"metadata", "name"}));
    if (info.namespace_ != "kube-node-lease")
      return forbidden(info, name, "can only access leases in the \"kube-node-lease\" system namespace");
    if (name != node)
      return forbidden(info, name, "can only access node lease with the same name as the requesting node");
  }
  return okStatus();
}

}  // namespace shepherd::handlers
