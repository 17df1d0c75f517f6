#include "auth/rbac_policy.h"

#include <algorithm>

namespace shepherd::auth {

namespace {

std::vector<std::string> strings(const json::Value& obj, std::string_view key) {
  std::vector<std::string> out;
  if (const json::Value* v = json::find(obj, key); v && v->IsArray())
    for (auto& s : v->GetArray())
      if (s.IsString()) out.emplace_back(json::view(s));
  return out;
}

bool has(const std::vector<std::string>& list, std::string_view v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

Binding parseBinding(const json::Value& obj, std::string ns) {
  Binding b;
  b.name = std::string(json::getStringPath(obj, {"metadata", "name"}));
  b.namespace_ = std::move(ns);
  b.role_kind = std::string(json::getStringPath(obj, {"roleRef", "kind"}));
  b.role_name = std::string(json::getStringPath(obj, {"roleRef", "name"}));
  if (const json::Value* subjects = json::find(obj, "subjects"); subjects && subjects->IsArray())
    for (auto& s : subjects->GetArray())
      b.subjects.push_back(Subject{std::string(json::getString(s, "kind")),
                                   std::string(json::getString(s, "name")),
                                   std::string(json::getString(s, "namespace"))});
  return b;
}

}  // namespace

std::vector<PolicyRule> parseRules(const json::Value* rules) {
  std::vector<PolicyRule> out;
  if (!rules || !rules->IsArray()) return out;
  for (auto& r : rules->GetArray())
    out.push_back(PolicyRule{strings(r, "verbs"), strings(r, "apiGroups"), strings(r, "resources"),
                             strings(r, "resourceNames"), strings(r, "nonResourceURLs")});
  return out;
}

void PolicySnapshot::add(const std::string& kind, const json::Value& obj) {
  std::string name(json::getStringPath(obj, {"metadata", "name"}));
  std::string ns(json::getStringPath(obj, {"metadata", "namespace"}));
  if (kind == "ClusterRole") cluster_roles[name] = parseRules(json::find(obj, "rules"));
  if (kind == "Role") roles[{ns, name}] = parseRules(json::find(obj, "rules"));
  if (kind == "ClusterRoleBinding") cluster_role_bindings.push_back(parseBinding(obj, ""));
  if (kind == "RoleBinding") role_bindings[ns].push_back(parseBinding(obj, ns));
}

bool ruleAllows(const PolicyRule& rule, const RequestInfo& r) {
  if (!has(rule.verbs, "*") && !has(rule.verbs, r.verb)) return false;
  if (!r.resource_request) {
    for (auto& url : rule.non_resource_urls) {
      if (url == "*" || url == r.path) return true;
      if (!url.empty() && url.back() == '*') {
        std::string prefix = url.substr(0, url.find_last_not_of('*') + 1);
        if (r.path.compare(0, prefix.size(), prefix) == 0) return true;
      }
    }
    return false;
  }
  if (!has(rule.api_groups, "*") && !has(rule.api_groups, r.api_group)) return false;
  std::string combined = r.subresource.empty() ? r.resource : r.resource + "/" + r.subresource;
  bool resource = false;
  for (auto& res : rule.resources)
    if (res == "*" || res == combined || (!r.subresource.empty() && res == "*/" + r.subresource))
      resource = true;
  if (!resource) return false;
  return rule.resource_names.empty() || (!r.name.empty() && has(rule.resource_names, r.name));
}

bool subjectApplies(const Subject& s, const meta::UserInfo& user, const std::string& binding_ns) {
  if (s.kind == "User") return s.name == user.name;
  if (s.kind == "Group") return has(user.groups, s.name);
  if (s.kind == "ServiceAccount") {
    std::string ns = s.namespace_.empty() ? binding_ns : s.namespace_;
    return !ns.empty() && user.name == "system:serviceaccount:" + ns + ":" + s.name;
  }
  return false;
}

std::string describeSubject(const Subject& s, const std::string& binding_ns) {
  if (s.kind == "ServiceAccount")
    return "ServiceAccount \"" + s.name + "/" + (s.namespace_.empty() ? binding_ns : s.namespace_) + "\"";
  return s.kind + " \"" + s.name + "\"";
}

}  // namespace shepherd::auth
