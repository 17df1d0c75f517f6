// Checks and table cells shared by PersistentVolumes and PersistentVolumeClaims
// (core/v1): access modes, the storage quantity, class names, volume modes. Internal to
// apis/kinds.
#pragma once

#include <string>

#include "apis/resource.h"

namespace shepherd::apis::kinds {

// accessModes as ValidatePersistentVolumeSpec / ValidatePersistentVolumeClaimSpec check
// them: known values, ReadWriteOncePod alone. `required_detail` is the Required message
// when the list is empty (PVs say nothing, claims explain).
void validateAccessModes(const json::Value* modes, const std::string& path,
                         const std::string& required_detail, FieldErrors& errs);
// A storage quantity that must be a positive whole value (requests or capacity).
void validateStorageQuantity(const json::Value& q, const std::string& path, FieldErrors& errs);
// storageClassName when set: a DNS subdomain (ValidateClassName).
void validateClassName(const json::Value* name, const std::string& path, FieldErrors& errs);
// volumeMode when set: Block or Filesystem.
void validateVolumeMode(const json::Value* mode, const std::string& path, FieldErrors& errs);

// "RWO,ROX,RWX,RWOP" in that order, each once (GetAccessModesAsString).
std::string accessModesCell(const json::Value* modes);
// The class of a PV or claim: the beta annotation first, then spec.storageClassName.
std::string storageClassCell(const json::Value& obj);
// spec.volumeMode, or "<unset>"; spec.volumeAttributesClassName, or "<unset>".
std::string volumeModeCell(const json::Value& obj);
std::string volumeAttributesClassCell(const json::Value& obj);
// status.phase, or "Terminating" once deletion started.
std::string phaseCell(const json::Value& obj);

}  // namespace shepherd::apis::kinds
