// The RBAC policy in a form the authorizer evaluates quickly: roles as rule lists and
// bindings with their subjects, parsed from the rbac.authorization.k8s.io/v1 objects; and
// upstream's matching rules (verbs, groups, resources with "*" and "*/subresource",
// resource names, non-resource URLs with a trailing "*", subjects).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "auth/request_info.h"
#include "common/json.h"
#include "meta/user_info.h"

namespace shepherd::auth {

struct PolicyRule {
  std::vector<std::string> verbs, api_groups, resources, resource_names, non_resource_urls;
};

struct Subject {
  std::string kind, name, namespace_;
};

struct Binding {
  std::string name, namespace_;  // namespace "" for a ClusterRoleBinding
  std::string role_kind, role_name;
  std::vector<Subject> subjects;
};

// One consistent view of every role and binding. Immutable once built.
struct PolicySnapshot {
  std::map<std::string, std::vector<PolicyRule>> cluster_roles;                  // name
  std::map<std::pair<std::string, std::string>, std::vector<PolicyRule>> roles;  // (ns, name)
  std::vector<Binding> cluster_role_bindings;
  std::map<std::string, std::vector<Binding>> role_bindings;  // by namespace

  // Adds one stored object of the four RBAC kinds (`kind` is its Kind).
  void add(const std::string& kind, const json::Value& obj);
};

// Where the authorizer gets the current policy. Thread-safety: current() from any thread.
class PolicySource {
 public:
  virtual ~PolicySource() = default;
  virtual std::shared_ptr<const PolicySnapshot> current() const = 0;
};

std::vector<PolicyRule> parseRules(const json::Value* rules);
bool ruleAllows(const PolicyRule& rule, const RequestInfo& request);
// Whether `s` (in a binding of namespace `binding_ns`) names `user`.
bool subjectApplies(const Subject& s, const meta::UserInfo& user, const std::string& binding_ns);
// "User \"u\"", "Group \"g\"", "ServiceAccount \"name/ns\"" (as upstream's reasons print them).
std::string describeSubject(const Subject& s, const std::string& binding_ns);

}  // namespace shepherd::auth
