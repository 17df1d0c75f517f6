// The default roles and bindings every cluster starts with (upstream's bootstrap policy,
// with admin/edit/view flattened since aggregation is not implemented): as
// rbac.authorization.k8s.io/v1 JSON objects labelled kubernetes.io/bootstrapping=
// rbac-defaults and annotated rbac.authorization.kubernetes.io/autoupdate=true.
//
// Shepherd runs every controller under the one identity system:kube-controller-manager,
// so each system:controller:<name> binding names that user as well as the controller's
// ServiceAccount.
#pragma once

#include <string>
#include <vector>

#include "auth/rbac_policy.h"

namespace shepherd::auth {

struct BootstrapObject {
  std::string kind;  // ClusterRole, ClusterRoleBinding, Role, RoleBinding
  std::string namespace_;
  std::string json;
};

const std::vector<BootstrapObject>& bootstrapPolicy();

// The rules of ClusterRole system:node: what the Node authorizer allows a node outside
// its object-by-object checks.
const std::vector<PolicyRule>& nodeRules();

}  // namespace shepherd::auth
