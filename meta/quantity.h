// resource.Quantity parsing ("100m", "1.5Gi", "2e3") to a comparable value.
#pragma once

#include <optional>
#include <string_view>

#include "common/json.h"

namespace shepherd::meta {

// The quantity's value in base units (e.g. cores, bytes); nullopt when malformed.
std::optional<long double> parseQuantity(std::string_view s);
// Accepts a JSON string or number.
std::optional<long double> quantityValue(const json::Value& v);

}  // namespace shepherd::meta
