#include "controllers/manager/template_hash.h"

namespace shepherd::controllers {

std::string safeEncode(uint32_t h) {
  // No vowels, no ambiguous characters (upstream's SafeEncodeString).
  static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (char ch : std::to_string(h)) out += alphabet[static_cast<unsigned char>(ch) % (sizeof alphabet - 1)];
  return out;
}

std::string templateHash(const json::Value& tmpl, int64_t collision_count) {
  std::string text = json::serialize(tmpl);
  if (collision_count > 0) text += "#" + std::to_string(collision_count);
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  return safeEncode(h);
}

std::string revisionDataHash(const std::string& data, int64_t collision_count) {
  std::string text = data + std::to_string(collision_count);
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h *= 16777619u;  // FNV-1: multiply, then xor
    h ^= c;
  }
  return safeEncode(h);
}

}  // namespace shepherd::controllers
