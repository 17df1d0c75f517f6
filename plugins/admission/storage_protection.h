// StorageObjectInUseProtection (upstream's plugin): every new PersistentVolume gets the
// kubernetes.io/pv-protection finalizer and every new claim kubernetes.io/pvc-protection,
// so neither goes while in use; the pv-protection and pvc-protection controllers
// (controllers/volumeprotection) remove them once it is safe.
#pragma once

#include "admission/admission.h"

namespace shepherd::plugins::admission {

class StorageObjectInUseProtection final : public shepherd::admission::Plugin {
 public:
  const char* name() const override { return "StorageObjectInUseProtection"; }
  Status admit(const shepherd::admission::Attributes& a, json::Document& obj,
               const json::Value* old) const override;
};

}  // namespace shepherd::plugins::admission
