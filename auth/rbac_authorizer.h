// The RBAC authorizer (upstream's): ClusterRoleBindings first, then the RoleBindings of
// the request's namespace; the first rule of a bound role that matches allows, with the
// binding named in the reason. It never denies: no match is "no opinion" (the reason
// lists roles that could not be found).
#pragma once

#include <memory>

#include "auth/authorizer.h"
#include "auth/rbac_policy.h"

namespace shepherd::auth {

class RbacAuthorizer final : public Authorizer {
 public:
  explicit RbacAuthorizer(std::shared_ptr<const PolicySource> source) : source_(std::move(source)) {}
  Decision authorize(const meta::UserInfo& user, const RequestInfo& request) const override;

 private:
  std::shared_ptr<const PolicySource> source_;
};

}  // namespace shepherd::auth
