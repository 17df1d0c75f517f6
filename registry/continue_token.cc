#include "registry/continue_token.h"

#include "common/json.h"

namespace shepherd::registry {

std::string base64Encode(std::string_view in, bool url) {
  const char* t = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                      : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
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

std::optional<std::string> base64Decode(std::string_view in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  uint32_t buf = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    int v = val(c);
    if (v < 0) return std::nullopt;
    buf = (buf << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xff);
    }
  }
  return out;
}

std::string encodeContinue(const ContinueToken& t) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  d.AddMember("v", "meta.k8s.io/v1", a);
  d.AddMember("rv", json::Value(static_cast<int64_t>(t.revision)), a);
  d.AddMember("start", json::str(t.start_after + std::string(1, '\0'), a), a);
  return base64Encode(json::serialize(d), true);
}

std::optional<ContinueToken> decodeContinue(const std::string& token) {
  auto raw = base64Decode(token);
  if (!raw) return std::nullopt;
  json::Document d;
  d.Parse(raw->data(), raw->size());
  if (d.HasParseError() || !d.IsObject()) return std::nullopt;
  if (json::getString(d, "v") != "meta.k8s.io/v1") return std::nullopt;
  auto rv = json::getInt(d, "rv");
  const json::Value* start = json::find(d, "start");
  if (!rv || *rv <= 0 || !start || !start->IsString()) return std::nullopt;
  ContinueToken t;
  t.revision = *rv;
  t.start_after = std::string(json::view(*start));
  // The token names the next key to read: "<last>\0".
  if (!t.start_after.empty() && t.start_after.back() == '\0') t.start_after.pop_back();
  if (t.start_after.find("..") != std::string::npos) return std::nullopt;
  return t;
}

}  // namespace shepherd::registry
