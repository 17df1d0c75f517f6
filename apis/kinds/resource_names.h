// Resource names as upstream's helpers judge them (pkg/apis/core/helper and validation):
// native, extended and hugepages names, what overcommits, the standard names, and the
// checks containers, limit ranges and quotas make of a name. Internal to apis/kinds.
#pragma once

#include <string>
#include <string_view>

#include "apis/resource.h"

namespace shepherd::apis::kinds {

bool isHugePages(std::string_view n);
// No domain, or a kubernetes.io domain (IsNativeResource).
bool isNative(std::string_view n);
// A fully qualified, non-native name that makes a valid "requests.<name>" (IsExtendedResourceName).
bool isExtended(std::string_view n);
// Native and not hugepages: requests may be below limits (IsOvercommitAllowed).
bool overcommitAllowed(std::string_view n);
bool isStandardResourceName(std::string_view n);
// IsStandardQuotaResourceName: the names a quota may count without a domain.
bool isStandardQuotaResourceName(std::string_view n);

// validateResourceName: a qualified name; without a domain, a standard one.
void validateResourceTypeName(std::string_view name, const std::string& field, FieldErrors& errs);
// validateContainerResourceName: also cpu, memory, ephemeral-storage or hugepages when
// plain; an extended name when qualified.
void validateContainerResourceName(std::string_view name, const std::string& field, FieldErrors& errs);

}  // namespace shepherd::apis::kinds
