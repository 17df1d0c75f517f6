#include "plugins/admission/chain.h"

#include "plugins/admission/default_storage_class.h"
#include "plugins/admission/limit_ranger.h"
#include "plugins/admission/node_restriction.h"
#include "plugins/admission/pod_defaults.h"
#include "plugins/admission/priority.h"
#include "plugins/admission/rbac_escalation.h"
#include "plugins/admission/resource_quota.h"
#include "plugins/admission/storage_protection.h"

namespace shepherd::plugins::admission {

std::unique_ptr<shepherd::admission::Chain> buildChain(const ChainOptions& o) {
  auto chain = std::make_unique<shepherd::admission::Chain>();
  chain->add(std::make_unique<LimitRanger>(o.registry));
  chain->add(std::make_unique<ServiceAccount>());
  if (o.authorizer && o.registry) chain->add(std::make_unique<NodeRestriction>(*o.registry));
  chain->add(std::make_unique<Priority>(o.registry));
  chain->add(std::make_unique<DefaultTolerationSeconds>(o.default_not_ready_toleration_seconds,
                                                        o.default_unreachable_toleration_seconds));
  chain->add(std::make_unique<DefaultStorageClass>(o.registry));
  chain->add(std::make_unique<StorageObjectInUseProtection>());
  if (o.authorizer && o.rbac_policy)
    chain->add(std::make_unique<RbacEscalation>(*o.authorizer, o.rbac_policy));
  // Last: it charges what passes, so nothing after it may refuse.
  chain->add(std::make_unique<ResourceQuota>(o.registry));
  return chain;
}

}  // namespace shepherd::plugins::admission
