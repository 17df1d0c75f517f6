// IntOrString fields of the rollout strategies (Deployment, DaemonSet, StatefulSet) and
// disruption budgets: their percentages, values and upstream's checks and messages.
#pragma once

#include <optional>
#include <string>

#include "apis/resource.h"

namespace shepherd::apis::kinds {

// An IntOrString as upstream prints it (its String(): the number or the text, unquoted).
std::string intOrStringRepr(const json::Value& v);
// "25%" -> 25; nullopt when not a percentage.
std::optional<int64_t> percent(const json::Value& v);
// getIntOrPercentValue: the percentage, the integer, or a string's number (0 if none).
int64_t intOrPercentValue(const json::Value& v);
// ValidatePositiveIntOrPercent (a missing value passes).
void validatePositiveIntOrPercent(const json::Value* v, const std::string& field, FieldErrors& errs);
// IsNotMoreThan100Percent (only percentages are checked).
void validateNotMoreThan100Percent(const json::Value* v, const std::string& field, FieldErrors& errs);
// GetScaledValueFromIntOrPercent: a percentage of `total` (rounded up or down), or the integer.
int64_t scaledValue(const json::Value& v, int64_t total, bool round_up);

}  // namespace shepherd::apis::kinds
