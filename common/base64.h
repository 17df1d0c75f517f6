// Base64 (RFC 4648): standard alphabet with padding, or the URL-safe one without.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace shepherd {

std::string base64Encode(std::string_view in, bool url = false);
// Accepts both alphabets, with or without padding; nullopt on any other character.
std::optional<std::string> base64Decode(std::string_view in);
// The URL-safe alphabet without padding, strictly (JWS, RFC 7515): nullopt for padding,
// whitespace, other characters or non-zero trailing bits.
std::optional<std::string> base64UrlDecodeStrict(std::string_view in);

}  // namespace shepherd
