// The admission plugins that fill in a new pod's spec, as upstream's:
// - DefaultTolerationSeconds: unless the pod tolerates them already, the not-ready and
//   unreachable NoExecute taints are tolerated for a while (--default-*-toleration-seconds),
//   on create and update.
// - ServiceAccount: the namespace's `default` account when none is named.
// ServiceAccount fills in only what is missing, also on update (a PUT that
// leaves the fields out keeps them; they may not change).
#pragma once

#include <cstdint>

#include "admission/admission.h"

namespace shepherd::plugins::admission {

// Whether the write is of a pod itself (not a subresource).
bool isPod(const shepherd::admission::Attributes& a);

class DefaultTolerationSeconds final : public shepherd::admission::Plugin {
 public:
  DefaultTolerationSeconds(int64_t not_ready_seconds, int64_t unreachable_seconds)
      : not_ready_(not_ready_seconds), unreachable_(unreachable_seconds) {}
  const char* name() const override { return "DefaultTolerationSeconds"; }
  Status admit(const shepherd::admission::Attributes& a, json::Document& obj,
               const json::Value* old) const override;

 private:
  const int64_t not_ready_, unreachable_;
};

class ServiceAccount final : public shepherd::admission::Plugin {
 public:
  const char* name() const override { return "ServiceAccount"; }
  Status admit(const shepherd::admission::Attributes& a, json::Document& obj,
               const json::Value* old) const override;
};

}  // namespace shepherd::plugins::admission
