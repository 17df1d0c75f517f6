#include "registry/rbac_policy_source.h"

namespace shepherd::registry {

RbacPolicySource::RbacPolicySource(Registry& registry) {
  for (auto [plural, kind] : {std::pair<const char*, const char*>{"clusterroles", "ClusterRole"},
                              {"roles", "Role"},
                              {"clusterrolebindings", "ClusterRoleBinding"},
                              {"rolebindings", "RoleBinding"}})
    if (Store* s = registry.store("rbac.authorization.k8s.io", "v1", plural)) kinds_.push_back({s, kind});
}

std::shared_ptr<const auth::PolicySnapshot> RbacPolicySource::current() const {
  MutexLock lock(mu_);
  uint64_t changes = 0;
  for (auto& k : kinds_) changes += k.store->cache().changeCount();
  if (snapshot_ && changes == seen_) return snapshot_;
  auto snap = std::make_shared<auth::PolicySnapshot>();
  for (auto& k : kinds_) {
    auto page = k.store->list(ListOptions{});
    if (!page) return snapshot_;  // keep the last good one
    for (auto& item : page->items) {
      json::Document d;
      d.Parse(item->json.data(), item->json.size());
      if (!d.HasParseError()) snap->add(k.kind, d);
    }
  }
  snapshot_ = std::move(snap);
  seen_ = changes;
  return snapshot_;
}

}  // namespace shepherd::registry
