// RBAC escalation prevention, as upstream's policy-based role and binding storage: a user
// may write a Role or ClusterRole only with permissions it already holds (or the "escalate"
// verb), and bind a role only if it holds the role's permissions (or the "bind" verb on
// it). system:masters is exempt.
#pragma once

#include <string>
#include <vector>

#include "auth/authorizer.h"
#include "auth/rbac_policy.h"
#include "common/api_error.h"

namespace shepherd::auth {

// The rules `user` holds in `ns` ("" = cluster-wide rules only): every ClusterRoleBinding's,
// plus, in a namespace, its RoleBindings' resource rules.
std::vector<PolicyRule> rulesFor(const PolicySnapshot& policy, const meta::UserInfo& user,
                                 const std::string& ns);

// The atomic pieces of `servant` (one group, resource, verb and name each) that no single
// rule of `owner` covers; empty when `owner` covers it all. Wildcards in `servant` are literal.
std::vector<PolicyRule> uncoveredRules(const std::vector<PolicyRule>& owner,
                                       const std::vector<PolicyRule>& servant);

// "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\" \"list\"]}", upstream's rendering.
std::string describeRule(const PolicyRule& r);

// What a write of one RBAC object needs of its requester.
struct RbacWrite {
  std::string kind;        // Role, ClusterRole, RoleBinding, ClusterRoleBinding
  std::string namespace_;  // "" for cluster kinds
  std::string name;
  std::vector<PolicyRule> rules;     // of a Role/ClusterRole being written
  bool aggregation = false;          // a ClusterRole with an aggregationRule (new or old)
  std::string role_kind, role_name;  // roleRef of a binding
};

// okStatus when `user` may make the write; 403 with upstream's message otherwise, or the
// NotFound of a binding's missing role.
Status confirmNoEscalation(const RbacWrite& w, const meta::UserInfo& user, const Authorizer& authorizer,
                           const PolicySnapshot& policy);

}  // namespace shepherd::auth
