// Percent-encoding of one URL component (RFC 3986 unreserved characters stay as they are).
#pragma once

#include <string>
#include <string_view>

namespace shepherd {

std::string urlEncode(std::string_view s);
// %XX escapes decoded (and + as a space in query strings).
std::string percentDecode(std::string_view s, bool plus_is_space);

}  // namespace shepherd
