// The API server's admission chain: the plugins Shepherd has, in upstream's recommended
// order (ServiceAccount, NodeRestriction, Priority, DefaultTolerationSeconds), then the
// RBAC escalation check (in upstream's RBAC storage, here the last validating plugin).
#pragma once

#include <cstdint>
#include <memory>

#include "admission/admission.h"
#include "auth/authorizer.h"
#include "auth/rbac_policy.h"
#include "registry/registry.h"

namespace shepherd::plugins::admission {

struct ChainOptions {
  registry::Registry* registry = nullptr;
  // Null (AlwaysAllow): no NodeRestriction and no RBAC escalation checks.
  const auth::Authorizer* authorizer = nullptr;
  std::shared_ptr<const auth::PolicySource> rbac_policy;  // null: RBAC is not in use
  int64_t default_not_ready_toleration_seconds = 300;
  int64_t default_unreachable_toleration_seconds = 300;
};

std::unique_ptr<shepherd::admission::Chain> buildChain(const ChainOptions& options);

}  // namespace shepherd::plugins::admission
