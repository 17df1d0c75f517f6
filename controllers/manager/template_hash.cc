#include "controllers/manager/template_hash.h"

namespace shepherd::controllers {

std::string templateHash(const json::Value& tmpl, int64_t collision_count) {
  std::string text = json::serialize(tmpl);
  if (collision_count > 0) text += "#" + std::to_string(collision_count);
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  // Upstream's SafeEncodeString of the decimal hash: no vowels, no ambiguous characters.
  static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string digits = std::to_string(h), out;
  for (char ch : digits) out += alphabet[static_cast<unsigned char>(ch) % (sizeof alphabet - 1)];
  return out;
}

}  // namespace shepherd::controllers
