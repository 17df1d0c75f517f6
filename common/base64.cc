#include "common/base64.h"

#include <cstdint>

namespace shepherd {

std::string base64Encode(std::string_view in, bool url) {
  const char* t = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                      : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    if (!url) out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    if (!url) out += '=';
  }
  return out;
}

namespace {

// Lenient: both alphabets, stops at '=', skips line breaks. Strict (RFC 7515's base64url):
// the URL alphabet only, no padding or whitespace, and zero trailing bits, so every byte
// string has exactly one spelling.
std::optional<std::string> decode(std::string_view in, bool strict) {
  auto val = [strict](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-' || (!strict && c == '+')) return 62;
    if (c == '_' || (!strict && c == '/')) return 63;
    return -1;
  };
  if (strict && in.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(in.size() * 3 / 4);
  uint32_t buf = 0;
  int bits = 0;
  for (char c : in) {
    if (!strict && c == '=') break;
    if (!strict && (c == '\n' || c == '\r')) continue;
    int v = val(c);
    if (v < 0) return std::nullopt;
    buf = (buf << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xff);
    }
  }
  if (strict && bits > 0 && (buf & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

}  // namespace

std::optional<std::string> base64Decode(std::string_view in) {
  return decode(in, false);
}

std::optional<std::string> base64UrlDecodeStrict(std::string_view in) {
  return decode(in, true);
}

StdBase64Check checkStdBase64(std::string_view src) {
  auto isAlpha = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
  };
  auto newline = [](char c) { return c == '\n' || c == '\r'; };
  StdBase64Check r;
  auto fail = [&r](size_t at) {
    r.ok = false;
    r.corrupt_at = at;
    return r;
  };
  size_t si = 0;
  // One quantum of four characters at a time, as Go's decodeQuantum.
  while (si < src.size()) {
    int j = 0;
    int dlen = 4;
    for (; j < 4; ++j) {
      if (si == src.size()) {
        if (j == 0) return r;
        return fail(si - static_cast<size_t>(j));
      }
      char in = src[si++];
      if (isAlpha(in)) continue;
      if (newline(in)) {
        --j;
        continue;
      }
      if (in != '=') return fail(si - 1);
      if (j < 2) return fail(si - 1);
      if (j == 2) {  // "==" expected
        while (si < src.size() && newline(src[si])) ++si;
        if (si == src.size()) return fail(src.size());
        if (src[si] != '=') return fail(si - 1);
        ++si;
      }
      while (si < src.size() && newline(src[si])) ++si;
      if (si < src.size()) return fail(si);  // trailing garbage
      dlen = j;
      break;
    }
    r.decoded += static_cast<size_t>(dlen - 1);
  }
  return r;
}

}  // namespace shepherd
