// Name and key rules shared by every kind, with upstream's wording (kubectl users read
// these messages; tests compare them).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shepherd::meta::validation {

// Each returns the list of problems (empty when valid).
std::vector<std::string> dns1123Subdomain(std::string_view v);
std::vector<std::string> dns1123Label(std::string_view v);
std::vector<std::string> dns1035Label(std::string_view v);
std::vector<std::string> pathSegmentName(std::string_view v);
// Label and annotation keys: [prefix/]name.
std::vector<std::string> qualifiedName(std::string_view v);
std::vector<std::string> labelValue(std::string_view v);
// ConfigMap and Secret keys.
std::vector<std::string> configMapKey(std::string_view v);

// Go's strconv.Quote (fmt's %q), as upstream quotes values in "Invalid value: ..."
// messages and the downward API's labels/annotations files: ASCII escapes as Go writes
// them, C1 controls as \u00XX, invalid UTF-8 bytes as \xXX; other characters are kept.
std::string quote(std::string_view v);

}  // namespace shepherd::meta::validation
