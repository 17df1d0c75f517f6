// metav1.Condition lists (status.conditions of newer kinds: PodDisruptionBudget, ...), as
// upstream's meta/v1 validation checks them.
#pragma once

#include <string>

#include "apis/resource.h"

namespace shepherd::apis::kinds {

// ValidateConditions: unique types, each a qualified name; status True, False or Unknown;
// a non-negative observedGeneration; lastTransitionTime and a well-formed reason set.
void validateMetaConditions(const json::Value* conditions, const std::string& field, FieldErrors& errs);

}  // namespace shepherd::apis::kinds
