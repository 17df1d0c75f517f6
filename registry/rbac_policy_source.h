// The RBAC policy as the API server's own watch caches hold it: a snapshot of every
// Role, ClusterRole, RoleBinding and ClusterRoleBinding, rebuilt only after one of them
// changed (the caches count their changes).
#pragma once

#include <mutex>

#include "auth/rbac_policy.h"
#include "registry/registry.h"

namespace shepherd::registry {

// Thread-safety: current() from any thread; one rebuild at a time.
class RbacPolicySource final : public auth::PolicySource {
 public:
  explicit RbacPolicySource(Registry& registry);
  std::shared_ptr<const auth::PolicySnapshot> current() const override;

 private:
  struct Kind {
    Store* store;
    std::string kind;
  };
  std::vector<Kind> kinds_;
  mutable std::mutex mu_;
  mutable uint64_t seen_ = ~uint64_t{0};
  mutable std::shared_ptr<const auth::PolicySnapshot> snapshot_;
};

}  // namespace shepherd::registry
