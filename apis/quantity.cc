#include "apis/quantity.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace shepherd::apis {

std::optional<long double> parseQuantity(std::string_view s) {
  if (s.empty() || s.size() > 64) return std::nullopt;
  size_t i = 0;
  if (s[i] == '+' || s[i] == '-') ++i;
  size_t digits_start = i;
  bool dot = false;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || (s[i] == '.' && !dot))) {
    if (s[i] == '.') dot = true;
    ++i;
  }
  if (i == digits_start || (i == digits_start + 1 && dot)) return std::nullopt;
  std::string number(s.substr(0, i));
  long double value = std::strtold(number.c_str(), nullptr);
  std::string_view suffix = s.substr(i);
  long double mult = 1;
  if (suffix.empty()) mult = 1;
  else if (suffix == "m") mult = 1e-3L;
  else if (suffix == "u") mult = 1e-6L;
  else if (suffix == "n") mult = 1e-9L;
  else if (suffix == "k") mult = 1e3L;
  else if (suffix == "M") mult = 1e6L;
  else if (suffix == "G") mult = 1e9L;
  else if (suffix == "T") mult = 1e12L;
  else if (suffix == "P") mult = 1e15L;
  else if (suffix == "E") mult = 1e18L;
  else if (suffix == "Ki") mult = 1024.0L;
  else if (suffix == "Mi") mult = 1024.0L * 1024;
  else if (suffix == "Gi") mult = 1024.0L * 1024 * 1024;
  else if (suffix == "Ti") mult = 1024.0L * 1024 * 1024 * 1024;
  else if (suffix == "Pi") mult = 1024.0L * 1024 * 1024 * 1024 * 1024;
  else if (suffix == "Ei") mult = 1024.0L * 1024 * 1024 * 1024 * 1024 * 1024;
  else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string exp(suffix.substr(1));
    if (exp.empty()) return std::nullopt;
    char* end = nullptr;
    long e = std::strtol(exp.c_str(), &end, 10);
    if (*end != '\0' || e > 30 || e < -30) return std::nullopt;
    mult = std::pow(10.0L, static_cast<long double>(e));
  } else {
    return std::nullopt;
  }
  return value * mult;
}

std::optional<long double> quantityValue(const json::Value& v) {
  if (v.IsNumber()) return static_cast<long double>(v.GetDouble());
  if (v.IsString()) return parseQuantity(json::view(v));
  return std::nullopt;
}

}  // namespace shepherd::apis
