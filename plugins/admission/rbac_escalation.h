// RBAC escalation prevention (upstream's RBAC storage checks, run here as a validating
// admission plugin): a Role, ClusterRole, RoleBinding or ClusterRoleBinding may be written
// only by someone who holds every permission it grants, or has `escalate`/`bind` on it
// (auth/rbac_escalation). A write that changes nothing but garbage-collection metadata is
// let through, as upstream.
#pragma once

#include <memory>

#include "admission/admission.h"
#include "auth/authorizer.h"
#include "auth/rbac_policy.h"

namespace shepherd::plugins::admission {

class RbacEscalation final : public shepherd::admission::Plugin {
 public:
  RbacEscalation(const auth::Authorizer& authorizer, std::shared_ptr<const auth::PolicySource> policy)
      : authorizer_(authorizer), policy_(std::move(policy)) {}
  const char* name() const override { return "RBACEscalation"; }
  Status validate(const shepherd::admission::Attributes& a, const json::Value& obj,
                  const json::Value* old) const override;

 private:
  const auth::Authorizer& authorizer_;
  std::shared_ptr<const auth::PolicySource> policy_;
};

}  // namespace shepherd::plugins::admission
