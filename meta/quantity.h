// resource.Quantity parsing ("100m", "1.5Gi", "2e3") to a comparable value.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"

namespace shepherd::meta {

// The quantity's value in base units (e.g. cores, bytes); nullopt when malformed.
std::optional<long double> parseQuantity(std::string_view s);
// Accepts a JSON string or number.
std::optional<long double> quantityValue(const json::Value& v);

// Why the API server's decoder refuses `s` as a resource.Quantity, in its words
// (ParseQuantity's errors); nullopt when it is accepted.
std::optional<std::string> quantityDecodeError(std::string_view s);
// The canonical form upstream prints a quantity in (Quantity.String()): "1.5" is
// "1500m", "1000" is "1k", "1.5Gi" is "1536Mi". `s` itself when it cannot be read.
std::string canonicalQuantity(std::string_view s);
// The text of a JSON string or number quantity (numbers as they serialize).
std::string quantityText(const json::Value& v);

}  // namespace shepherd::meta
