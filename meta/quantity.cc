#include "meta/quantity.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace shepherd::meta {

std::optional<long double> parseQuantity(std::string_view s) {
  // Exact decimal arithmetic in nano-units, so "100m" and "0.1" compare equal.
  if (s.empty() || s.size() > 64) return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (s[i] == '+' || s[i] == '-') negative = s[i++] == '-';
  __int128 mantissa = 0;
  int exp10 = 0, digits = 0;
  bool dot = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (digits < 30) {
      mantissa = mantissa * 10 + (c - '0');
      if (dot) --exp10;
    } else if (!dot) {
      ++exp10;  // beyond precision: keep magnitude
    }
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  std::string_view suffix = s.substr(i);
  __int128 binary = 1;
  if (suffix.empty()) {
  } else if (suffix == "m")
    exp10 -= 3;
  else if (suffix == "u")
    exp10 -= 6;
  else if (suffix == "n")
    exp10 -= 9;
  else if (suffix == "k")
    exp10 += 3;
  else if (suffix == "M")
    exp10 += 6;
  else if (suffix == "G")
    exp10 += 9;
  else if (suffix == "T")
    exp10 += 12;
  else if (suffix == "P")
    exp10 += 15;
  else if (suffix == "E")
    exp10 += 18;
  else if (suffix == "Ki")
    binary = 1LL << 10;
  else if (suffix == "Mi")
    binary = 1LL << 20;
  else if (suffix == "Gi")
    binary = 1LL << 30;
  else if (suffix == "Ti")
    binary = 1LL << 40;
  else if (suffix == "Pi")
    binary = 1LL << 50;
  else if (suffix == "Ei")
    binary = 1LL << 60;
  else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string e(suffix.substr(1));
    if (e.empty()) return std::nullopt;
    char* end = nullptr;
    long v = std::strtol(e.c_str(), &end, 10);
    if (*end != '\0' || v > 30 || v < -30) return std::nullopt;
    exp10 += static_cast<int>(v);
  } else {
    return std::nullopt;
  }
  // nano-units = mantissa * binary * 10^(exp10 + 9)
  int shift = exp10 + 9;
  long double value;
  if (shift >= 0 && shift <= 18) {
    __int128 nano = mantissa * binary;
    for (int k = 0; k < shift; ++k) nano *= 10;
    value = static_cast<long double>(nano) / 1e9L;
  } else if (shift < 0) {
    __int128 nano = mantissa * binary;
    for (int k = 0; k < -shift && nano != 0; ++k) nano /= 10;
    value = static_cast<long double>(nano) / 1e9L;
  } else {
    value = static_cast<long double>(mantissa) * static_cast<long double>(binary) * std::pow(10.0L, exp10);
  }
  return negative ? -value : value;
}

std::optional<long double> quantityValue(const json::Value& v) {
  if (v.IsNumber()) return static_cast<long double>(v.GetDouble());
  if (v.IsString()) return parseQuantity(json::view(v));
  return std::nullopt;
}

}  // namespace shepherd::meta
