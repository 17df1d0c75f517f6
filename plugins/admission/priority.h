// Priority (upstream's plugin): a new pod's priority comes from its PriorityClass - the
// one it names (403 when there is none of that name), else the global default class, else
// 0 with PreemptLowerPriority - with the class's preemptionPolicy; a pod may not bring a
// different priority or policy of its own (403). Updates keep the values the pod was
// created with. A PriorityClass may not become a second global default (403).
#pragma once

#include "admission/admission.h"
#include "registry/registry.h"

namespace shepherd::plugins::admission {

class Priority final : public shepherd::admission::Plugin {
 public:
  // Classes are read from `registry` (null: no classes, every pod gets 0).
  explicit Priority(registry::Registry* registry) : registry_(registry) {}
  const char* name() const override { return "Priority"; }
  Status admit(const shepherd::admission::Attributes& a, json::Document& obj,
               const json::Value* old) const override;
  Status validate(const shepherd::admission::Attributes& a, const json::Value& obj,
                  const json::Value* old) const override;

 private:
  // The global default class (the lowest value among several), if any.
  Result<json::Document> defaultClass() const;
  registry::Registry* registry_;
};

}  // namespace shepherd::plugins::admission
