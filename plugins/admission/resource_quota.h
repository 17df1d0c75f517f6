// ResourceQuota (upstream's validating plugin): a create or update that would take a
// namespace's usage past a quota's observed limits (status.hard) is refused (403 "exceeded
// quota: ..."), as is a pod that sets no value for a compute resource a quota limits
// ("failed quota: ...") and anything a quota covers before the controller counted it
// ("status unknown for quota: ..."). What passes is charged to status.used at once (a
// status write that re-checks against the latest quota), so concurrent writes cannot both
// take the last unit; dry runs are checked, not charged. Pods are charged on create only,
// services and claims on create and update, other objects (count/<resource>) on create.
#pragma once

#include "admission/admission.h"
#include "registry/registry.h"

namespace shepherd::plugins::admission {

class ResourceQuota final : public shepherd::admission::Plugin {
 public:
  explicit ResourceQuota(registry::Registry* registry) : registry_(registry) {}
  const char* name() const override { return "ResourceQuota"; }
  Status validate(const shepherd::admission::Attributes& a, const json::Value& obj,
                  const json::Value* old) const override;

 private:
  registry::Registry* registry_;
};

}  // namespace shepherd::plugins::admission
