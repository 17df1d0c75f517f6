// Name and key rules shared by every kind, with upstream's wording (kubectl users read
// these messages; tests compare them).
#pragma once

#include <cstdint>
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
// IANA service names as container and service ports name them (IsValidPortName).
std::vector<std::string> portName(std::string_view v);
// Environment variable names and envFrom prefixes (IsEnvVarName, the strict form).
std::vector<std::string> envVarName(std::string_view v);
std::vector<std::string> httpHeaderName(std::string_view v);
// "must be between lo and hi, inclusive".
std::string inclusiveRange(int64_t lo, int64_t hi);

// IP addresses as Go's sloppy parser reads them (IPv4 parts may have leading zeros):
// 4 or 6, or 0 when `v` is not an address.
int ipFamily(std::string_view v);
// "a.b.c.d/n" or an IPv6 prefix.
bool isCIDR(std::string_view v);
// The IsValidIP and IsValidCIDR messages.
inline constexpr const char* kInvalidIP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
inline constexpr const char* kInvalidCIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
// Why an address may not be an endpoint or external IP (ValidateNonSpecialIP): empty
// for a usable address; "must be a valid IP address" for none at all.
std::vector<std::string> nonSpecialIP(std::string_view v);

// Go's strconv.Quote (fmt's %q), as upstream quotes values in "Invalid value: ..."
// messages and the downward API's labels/annotations files: ASCII escapes as Go writes
// them, C1 controls as \u00XX, invalid UTF-8 bytes as \xXX; other characters are kept.
std::string quote(std::string_view v);

}  // namespace shepherd::meta::validation
