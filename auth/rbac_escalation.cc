#include "auth/rbac_escalation.h"

#include <algorithm>
#include <map>

namespace shepherd::auth {

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool superuser(const meta::UserInfo& u) {
  return has(u.groups, meta::kMastersGroup);
}

// Whether one owner rule covers one atomic servant rule.
bool coversAtom(const PolicyRule& o, const PolicyRule& a) {
  const std::string& verb = a.verbs[0];
  if (!has(o.verbs, "*") && !has(o.verbs, verb)) return false;
  if (!a.non_resource_urls.empty()) {
    const std::string& url = a.non_resource_urls[0];
    for (const auto& u : o.non_resource_urls) {
      if (u == url) return true;
      if (!u.empty() && u.back() == '*' && url.compare(0, u.size() - 1, u, 0, u.size() - 1) == 0) return true;
    }
    return false;
  }
  if (!has(o.api_groups, "*") && !has(o.api_groups, a.api_groups[0])) return false;
  const std::string& res = a.resources[0];
  bool resourceOk = has(o.resources, "*") || has(o.resources, res);
  size_t slash = res.find('/');
  if (!resourceOk && slash != std::string::npos) resourceOk = has(o.resources, "*" + res.substr(slash));
  if (!resourceOk) return false;
  if (o.resource_names.empty()) return true;
  return !a.resource_names.empty() && has(o.resource_names, a.resource_names[0]);
}

std::vector<PolicyRule> atoms(const PolicyRule& r) {
  std::vector<PolicyRule> out;
  for (const auto& verb : r.verbs) {
    for (const auto& url : r.non_resource_urls) out.push_back(PolicyRule{{verb}, {}, {}, {}, {url}});
    for (const auto& g : r.api_groups)
      for (const auto& res : r.resources) {
        if (r.resource_names.empty()) out.push_back(PolicyRule{{verb}, {g}, {res}, {}, {}});
        for (const auto& n : r.resource_names) out.push_back(PolicyRule{{verb}, {g}, {res}, {n}, {}});
      }
  }
  return out;
}

std::string quotedList(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " \"" : "\"") + v[i] + "\"";
  return s + "]";
}

// Merges atoms that differ only in verbs (upstream's compaction), then sorts the lines.
std::vector<std::string> compactLines(const std::vector<PolicyRule>& missing) {
  std::map<std::string, PolicyRule> merged;
  std::vector<std::string> order;
  for (const auto& r : missing) {
    PolicyRule key = r;
    key.verbs.clear();
    std::string k = describeRule(key);
    auto it = merged.find(k);
    if (it == merged.end()) {
      merged.emplace(k, r);
      order.push_back(k);
    } else if (!has(it->second.verbs, r.verbs[0])) {
      it->second.verbs.push_back(r.verbs[0]);
    }
  }
  std::vector<std::string> lines;
  for (const auto& k : order) lines.push_back(describeRule(merged[k]));
  std::sort(lines.begin(), lines.end());
  return lines;
}

Status forbiddenEscalation(const RbacWrite& w, const meta::UserInfo& user,
                           const std::vector<PolicyRule>& missing) {
  std::string groups = "[";
  for (size_t i = 0; i < user.groups.size(); ++i) groups += (i ? " \"" : "\"") + user.groups[i] + "\"";
  groups += "]";
  std::string msg = "user \"" + user.name + "\" (groups=" + groups +
                    ") is attempting to grant RBAC permissions not currently held:";
  for (const auto& line : compactLines(missing)) msg += "\n" + line;
  std::string plural = w.kind == "Role"          ? "roles"
                       : w.kind == "ClusterRole" ? "clusterroles"
                       : w.kind == "RoleBinding" ? "rolebindings"
                                                 : "clusterrolebindings";
  return ApiError::forbidden("rbac.authorization.k8s.io", plural, w.name, msg);
}

// The escalate/bind checks upstream makes: any version of the RBAC group.
RequestInfo rbacCheck(const std::string& verb, const std::string& resource, const std::string& ns,
                      const std::string& name) {
  RequestInfo r = resourceRequest(verb, "rbac.authorization.k8s.io", resource, ns, name);
  r.api_version = "*";
  return r;
}

}  // namespace

std::vector<PolicyRule> rulesFor(const PolicySnapshot& policy, const meta::UserInfo& user,
                                 const std::string& ns) {
  std::vector<PolicyRule> out;
  auto collect = [&](const Binding& b, bool cluster) {
    bool applies = std::any_of(b.subjects.begin(), b.subjects.end(),
                               [&](const Subject& s) { return subjectApplies(s, user, b.namespace_); });
    if (!applies) return;
    const std::vector<PolicyRule>* rules = nullptr;
    if (b.role_kind == "ClusterRole") {
      auto it = policy.cluster_roles.find(b.role_name);
      if (it != policy.cluster_roles.end()) rules = &it->second;
    } else if (b.role_kind == "Role") {
      auto it = policy.roles.find({b.namespace_, b.role_name});
      if (it != policy.roles.end()) rules = &it->second;
    }
    if (!rules) return;
    for (const auto& r : *rules)
      if (cluster || r.non_resource_urls.empty()) out.push_back(r);
  };
  for (const auto& b : policy.cluster_role_bindings) collect(b, true);
  if (!ns.empty())
    if (auto it = policy.role_bindings.find(ns); it != policy.role_bindings.end())
      for (const auto& b : it->second) collect(b, false);
  return out;
}

std::vector<PolicyRule> uncoveredRules(const std::vector<PolicyRule>& owner,
                                       const std::vector<PolicyRule>& servant) {
  std::vector<PolicyRule> missing;
  for (const auto& rule : servant)
    for (auto& a : atoms(rule))
      if (std::none_of(owner.begin(), owner.end(), [&](const PolicyRule& o) { return coversAtom(o, a); }))
        missing.push_back(std::move(a));
  return missing;
}

std::string describeRule(const PolicyRule& r) {
  std::vector<std::string> parts;
  if (!r.api_groups.empty()) parts.push_back("APIGroups:" + quotedList(r.api_groups));
  if (!r.resources.empty()) parts.push_back("Resources:" + quotedList(r.resources));
  if (!r.non_resource_urls.empty()) parts.push_back("NonResourceURLs:" + quotedList(r.non_resource_urls));
  if (!r.resource_names.empty()) parts.push_back("ResourceNames:" + quotedList(r.resource_names));
  if (!r.verbs.empty()) parts.push_back("Verbs:" + quotedList(r.verbs));
  std::string s = "{";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s + "}";
}

Status confirmNoEscalation(const RbacWrite& w, const meta::UserInfo& user, const Authorizer& authorizer,
                           const PolicySnapshot& policy) {
  if (superuser(user)) return okStatus();
  if (w.kind == "Role" || w.kind == "ClusterRole") {
    std::string resource = w.kind == "Role" ? "roles" : "clusterroles";
    if (authorizer.authorize(user, rbacCheck("escalate", resource, w.namespace_, w.name)).allowed())
      return okStatus();
    std::vector<PolicyRule> owner = rulesFor(policy, user, w.namespace_);
    if (w.aggregation) {
      std::vector<PolicyRule> everything = {PolicyRule{{"*"}, {"*"}, {"*"}, {}, {}},
                                            PolicyRule{{"*"}, {}, {}, {}, {"*"}}};
      if (!uncoveredRules(owner, everything).empty())
        return ApiError::forbidden("rbac.authorization.k8s.io", resource, w.name,
                                   "must have cluster-admin privileges to use the aggregationRule");
    }
    auto missing = uncoveredRules(owner, w.rules);
    if (missing.empty()) return okStatus();
    return forbiddenEscalation(w, user, missing);
  }
  // A binding: "bind" on the role, or holding every permission the role grants.
  std::string roleResource = w.role_kind == "ClusterRole" ? "clusterroles" : "roles";
  if (authorizer.authorize(user, rbacCheck("bind", roleResource, w.namespace_, w.role_name)).allowed())
    return okStatus();
  const std::vector<PolicyRule>* roleRules = nullptr;
  if (w.role_kind == "ClusterRole") {
    auto it = policy.cluster_roles.find(w.role_name);
    if (it != policy.cluster_roles.end()) roleRules = &it->second;
  } else {
    auto it = policy.roles.find({w.namespace_, w.role_name});
    if (it != policy.roles.end()) roleRules = &it->second;
  }
  if (!roleRules) return ApiError::notFound("rbac.authorization.k8s.io", roleResource, w.role_name);
  auto missing = uncoveredRules(rulesFor(policy, user, w.namespace_), *roleRules);
  if (missing.empty()) return okStatus();
  return forbiddenEscalation(w, user, missing);
}

}  // namespace shepherd::auth
