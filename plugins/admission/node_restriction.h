// NodeRestriction (upstream's plugin, for what Shepherd serves): a node may create only
// mirror pods bound to itself, delete and update the status of only the pods bound to it,
// modify only its own Node (not its taints) and only its own Lease in kube-node-lease, and
// ask for ServiceAccount tokens only bound to its own pods. Other users pass untouched.
// Mutating phase, as upstream: it refuses before the object is defaulted and validated.
#pragma once

#include "admission/admission.h"
#include "registry/registry.h"

namespace shepherd::plugins::admission {

class NodeRestriction final : public shepherd::admission::Plugin {
 public:
  // Pods are looked up in `registry` (token requests name one).
  explicit NodeRestriction(registry::Registry& registry) : registry_(registry) {}
  const char* name() const override { return "NodeRestriction"; }
  Status admit(const shepherd::admission::Attributes& a, json::Document& obj,
               const json::Value* old) const override;

 private:
  registry::Registry& registry_;
};

}  // namespace shepherd::plugins::admission
