// DefaultStorageClass (upstream's plugin): a claim created without any class (no
// storageClassName, no beta annotation; "" counts as a class) gets the default
// StorageClass's name - the newest class annotated is-default-class "true", the first name
// on a tie. Nothing happens when there is no default.
#pragma once

#include "admission/admission.h"
#include "registry/registry.h"

namespace shepherd::plugins::admission {

class DefaultStorageClass final : public shepherd::admission::Plugin {
 public:
  explicit DefaultStorageClass(registry::Registry* registry) : registry_(registry) {}
  const char* name() const override { return "DefaultStorageClass"; }
  Status admit(const shepherd::admission::Attributes& a, json::Document& obj,
               const json::Value* old) const override;

 private:
  registry::Registry* registry_;
};

}  // namespace shepherd::plugins::admission
