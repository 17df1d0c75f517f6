// LimitRanger (upstream's plugin): the namespace's LimitRanges fill in the requests and
// limits a new pod's containers lack (defaultRequest, default; listed in the
// kubernetes.io/limit-ranger annotation) and refuse (403) pods and claims outside their
// min, max and maxLimitRequestRatio, per container, per pod or per claim. Pod updates and
// subresources are not looked at: a pod's containers never change.
#pragma once

#include "admission/admission.h"
#include "registry/registry.h"

namespace shepherd::plugins::admission {

class LimitRanger final : public shepherd::admission::Plugin {
 public:
  explicit LimitRanger(registry::Registry* registry) : registry_(registry) {}
  const char* name() const override { return "LimitRanger"; }
  Status admit(const shepherd::admission::Attributes& a, json::Document& obj,
               const json::Value* old) const override;
  Status validate(const shepherd::admission::Attributes& a, const json::Value& obj,
                  const json::Value* old) const override;

 private:
  // The namespace's LimitRanges (none without a registry).
  Result<std::vector<json::Document>> limitRanges(const std::string& ns) const;
  registry::Registry* registry_;
};

}  // namespace shepherd::plugins::admission
