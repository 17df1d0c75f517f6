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

// Go's base64.StdEncoding.Decode, as the API server decodes []byte fields (Secret data,
// ConfigMap binaryData): padding required, line breaks skipped. `decoded` is the
// decoded length when ok; otherwise `corrupt_at` is the offset Go's CorruptInputError
// names ("illegal base64 data at input byte N").
struct StdBase64Check {
  bool ok = true;
  size_t decoded = 0;
  size_t corrupt_at = 0;
};
StdBase64Check checkStdBase64(std::string_view in);

}  // namespace shepherd
