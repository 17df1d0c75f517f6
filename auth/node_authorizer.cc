#include "auth/node_authorizer.h"

#include <algorithm>

#include "auth/bootstrap_policy.h"

namespace shepherd::auth {

namespace {

constexpr const char* kNodePrefix = "system:node:";

Decision allow() {
  return {Decision::Kind::Allow, ""};
}
Decision noOpinion(std::string reason = "") {
  return {Decision::Kind::NoOpinion, std::move(reason)};
}

bool oneOf(const std::string& v, std::initializer_list<const char*> set) {
  return std::any_of(set.begin(), set.end(), [&](const char* s) { return v == s; });
}

Decision staticRules(const RequestInfo& r) {
  for (auto& rule : nodeRules())
    if (ruleAllows(rule, r)) return allow();
  return noOpinion();
}

}  // namespace

std::string nodeNameOf(const meta::UserInfo& user) {
  if (user.name.rfind(kNodePrefix, 0) != 0) return "";
  if (std::find(user.groups.begin(), user.groups.end(), "system:nodes") == user.groups.end()) return "";
  return user.name.substr(std::string(kNodePrefix).size());
}

Decision NodeAuthorizer::authorize(const meta::UserInfo& user, const RequestInfo& r) const {
  if (user.name.rfind(kNodePrefix, 0) != 0 ||
      std::find(user.groups.begin(), user.groups.end(), "system:nodes") == user.groups.end())
    return noOpinion();
  std::string node = nodeNameOf(user);
  if (node.empty()) return noOpinion("unknown node for user \"" + user.name + "\"");
  if (!r.resource_request) return staticRules(r);
  const std::string unrelated = "no relationship found between node '" + node + "' and this object";
  if (r.api_group.empty() && (r.resource == "secrets" || r.resource == "configmaps")) {
    if (!oneOf(r.verb, {"get", "list", "watch"})) return noOpinion("can only read resources of this type");
    if (!r.subresource.empty()) return noOpinion("cannot read subresource");
    if (r.namespace_.empty()) return noOpinion("can only read namespaced object of this type");
    if (r.name.empty()) return noOpinion("No Object name found");
    return graph_->usedByPodOnNode(node, r.resource, r.namespace_, r.name) ? allow() : noOpinion(unrelated);
  }
  // Tokens only for the ServiceAccounts of the node's own pods (NodeRestriction then
  // requires the token to be bound to such a pod).
  if (r.api_group.empty() && r.resource == "serviceaccounts") {
    if (r.subresource != "token" || r.verb != "create")
      return noOpinion("can only create tokens for individual service accounts");
    if (r.name.empty()) return noOpinion("No Object name found");
    return graph_->usedByPodOnNode(node, r.resource, r.namespace_, r.name) ? allow() : noOpinion(unrelated);
  }
  if (r.api_group == "coordination.k8s.io" && r.resource == "leases") {
    if (!oneOf(r.verb, {"get", "create", "update", "patch", "delete"}))
      return noOpinion("can only get, create, update, patch, or delete a node lease");
    if (r.namespace_ != "kube-node-lease")
      return noOpinion("can only access leases in the \"kube-node-lease\" system namespace");
    if (r.verb != "create" && r.name != node)
      return noOpinion("can only access node lease with the same name as the requesting node");
    return allow();
  }
  if (r.api_group.empty() && r.resource == "nodes") {
    if (r.subresource.empty() && oneOf(r.verb, {"create", "update", "patch"})) return allow();
    if (r.subresource.empty() && oneOf(r.verb, {"get", "list", "watch"})) {
      if (r.name.empty())
        return noOpinion("node '" + node + "' cannot read all nodes, only its own Node object");
      if (r.name != node)
        return noOpinion("node '" + node + "' cannot read '" + r.name + "', only its own Node object");
      return allow();
    }
    if (r.subresource == "status" && oneOf(r.verb, {"update", "patch"})) return allow();
    return noOpinion();
  }
  if (r.api_group.empty() && r.resource == "pods") {
    if (r.subresource.empty() && r.verb == "get")
      return graph_->podOnNode(node, r.namespace_, r.name) ? allow() : noOpinion(unrelated);
    if (r.subresource.empty() && (r.verb == "list" || r.verb == "watch")) {
      if (fieldSelectorRequires(r.field_selector, "spec.nodeName") == node) return allow();
      if (!r.name.empty() && graph_->podOnNode(node, r.namespace_, r.name)) return allow();
      return noOpinion("can only list/watch pods with spec.nodeName field selector");
    }
    if (r.subresource.empty() && (r.verb == "create" || r.verb == "delete")) return allow();
    if (r.subresource == "status" && oneOf(r.verb, {"update", "patch"})) return allow();
    if (r.subresource == "eviction" && r.verb == "create") return allow();
    return noOpinion();
  }
  return staticRules(r);
}

}  // namespace shepherd::auth
