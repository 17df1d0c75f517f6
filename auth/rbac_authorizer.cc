#include "auth/rbac_authorizer.h"

#include <optional>

namespace shepherd::auth {

namespace {

// The rules `b` grants, or null with `error` set when its role is missing.
const std::vector<PolicyRule>* rulesOf(const PolicySnapshot& p, const Binding& b, std::string& error) {
  if (b.role_kind == "ClusterRole") {
    auto it = p.cluster_roles.find(b.role_name);
    if (it != p.cluster_roles.end()) return &it->second;
    error = "clusterrole.rbac.authorization.k8s.io \"" + b.role_name + "\" not found";
    return nullptr;
  }
  if (b.role_kind == "Role") {
    auto it = p.roles.find({b.namespace_, b.role_name});
    if (it != p.roles.end()) return &it->second;
    error = "role.rbac.authorization.k8s.io \"" + b.role_name + "\" not found";
    return nullptr;
  }
  error = "unsupported role reference kind: \"" + b.role_kind + "\"";
  return nullptr;
}

}  // namespace

Decision RbacAuthorizer::authorize(const meta::UserInfo& user, const RequestInfo& request) const {
  std::shared_ptr<const PolicySnapshot> policy = source_->current();
  if (!policy) return {Decision::Kind::NoOpinion, "RBAC: the policy is not loaded yet"};
  std::vector<std::string> errors;
  auto visit = [&](const Binding& b, bool cluster) -> std::optional<Decision> {
    const Subject* who = nullptr;
    for (auto& s : b.subjects)
      if (subjectApplies(s, user, b.namespace_)) {
        who = &s;
        break;
      }
    if (!who) return std::nullopt;
    std::string error;
    const std::vector<PolicyRule>* rules = rulesOf(*policy, b, error);
    if (!rules) {
      errors.push_back(error);
      return std::nullopt;
    }
    // A RoleBinding of a ClusterRole grants its resource rules in the namespace only.
    for (auto& rule : *rules)
      if ((cluster || request.resource_request) && ruleAllows(rule, request)) {
        std::string source = cluster ? "ClusterRoleBinding \"" + b.name + "\""
                                     : "RoleBinding \"" + b.name + "/" + b.namespace_ + "\"";
        return Decision{Decision::Kind::Allow, "RBAC: allowed by " + source + " of " + b.role_kind + " \"" +
                                                   b.role_name + "\" to " +
                                                   describeSubject(*who, b.namespace_)};
      }
    return std::nullopt;
  };
  for (auto& b : policy->cluster_role_bindings)
    if (auto d = visit(b, true)) return *d;
  if (!request.namespace_.empty()) {
    auto it = policy->role_bindings.find(request.namespace_);
    if (it != policy->role_bindings.end())
      for (auto& b : it->second)
        if (auto d = visit(b, false)) return *d;
  }
  if (errors.empty()) return {Decision::Kind::NoOpinion, ""};
  std::string joined = errors.size() == 1 ? errors[0] : "[";
  if (errors.size() > 1)
    for (size_t i = 0; i < errors.size(); ++i)
      joined += (i ? ", " : "") + errors[i] + (i + 1 == errors.size() ? "]" : "");
  return {Decision::Kind::NoOpinion, "RBAC: " + joined};
}

}  // namespace shepherd::auth
