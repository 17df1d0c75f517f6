// The RBAC policy as the API server's own watch caches hold it: a snapshot of every
// Role, ClusterRole, RoleBinding and ClusterRoleBinding, rebuilt only after one of them
// changed (the caches count their changes).
#pragma once

#include "auth/rbac_policy.h"
#include "common/mutex.h"
#include "registry/registry.h"

namespace shepherd::registry {

// Thread-safety: current() from any thread; one rebuild at a time (mu_ guards seen_ and
// snapshot_).
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
  mutable Mutex mu_;
  mutable uint64_t seen_ GUARDED_BY(mu_) = ~uint64_t{0};
  mutable std::shared_ptr<const auth::PolicySnapshot> snapshot_ GUARDED_BY(mu_);
};

}  // namespace shepherd::registry
