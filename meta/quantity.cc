#include "meta/quantity.h"

#include <algorithm>
#include <cctype>
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

namespace {

// resource.Quantity's grammar: sign, digits, '.', digits, then a suffix of
// [eEinumkKMGTP]* with an optional signed exponent. Go's parser, step by step.
struct QuantityParts {
  bool negative = false;
  std::string num;    // integer digits, leading zeros stripped ("0" if none)
  std::string denom;  // fraction digits
  std::string suffix;
};

std::optional<QuantityParts> splitQuantity(std::string_view s) {
  QuantityParts p;
  size_t pos = 0, end = s.size();
  if (pos < end && (s[0] == '-' || s[0] == '+')) p.negative = s[pos++] == '-';
  while (pos < end && s[pos] == '0') ++pos;
  if (pos >= end) {
    p.num = "0";
    return p;
  }
  size_t i = pos;
  while (i < end && s[i] >= '0' && s[i] <= '9') ++i;
  p.num = std::string(s.substr(pos, i - pos));
  if (p.num.empty()) p.num = "0";
  pos = i;
  if (pos < end && s[pos] == '.') {
    ++pos;
    i = pos;
    while (i < end && s[i] >= '0' && s[i] <= '9') ++i;
    p.denom = std::string(s.substr(pos, i - pos));
    pos = i;
  }
  size_t suffixStart = pos;
  while (pos < end && std::string_view("eEinumkKMGTP").find(s[pos]) != std::string_view::npos) ++pos;
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < end && s[pos] >= '0' && s[pos] <= '9') ++pos;
  if (pos < end) return std::nullopt;  // a character no part of the grammar takes
  p.suffix = std::string(s.substr(suffixStart));
  return p;
}

enum class QuantityFormat { DecimalSI, BinarySI, DecimalExponent };

// The suffix as base-10 or base-2 exponent; nullopt for an unknown suffix.
std::optional<std::pair<QuantityFormat, int>> interpretSuffix(const std::string& suffix) {
  static const std::pair<const char*, int> dec[] = {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
                                                    {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static const std::pair<const char*, int> bin[] = {{"Ki", 10}, {"Mi", 20}, {"Gi", 30},
                                                    {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  for (auto& [name, e] : dec)
    if (suffix == name) return std::pair{QuantityFormat::DecimalSI, e};
  for (auto& [name, e] : bin)
    if (suffix == name) return std::pair{QuantityFormat::BinarySI, e};
  if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::string digits = suffix.substr(1);
    size_t k = digits[0] == '+' || digits[0] == '-' ? 1 : 0;
    if (k == digits.size() || digits.size() > 18) return std::nullopt;  // ParseInt's int64 range
    for (size_t j = k; j < digits.size(); ++j)
      if (digits[j] < '0' || digits[j] > '9') return std::nullopt;
    long long v = std::stoll(digits);
    return std::pair{QuantityFormat::DecimalExponent, static_cast<int>(std::clamp(v, -100000LL, 100000LL))};
  }
  return std::nullopt;
}

const char* kQuantityFormatError =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

}  // namespace

std::optional<std::string> quantityDecodeError(std::string_view s) {
  std::string_view t = s;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  if (t.empty()) return std::string(kQuantityFormatError);
  if (t == "0") return std::nullopt;
  auto parts = splitQuantity(t);
  if (!parts) return std::string(kQuantityFormatError);
  if (!interpretSuffix(parts->suffix)) return std::string("unable to parse quantity's suffix");
  return std::nullopt;
}

std::string canonicalQuantity(std::string_view s) {
  auto parts = splitQuantity(s);
  if (s.empty() || !parts) return std::string(s);
  auto suffix = interpretSuffix(parts->suffix);
  if (!suffix) return std::string(s);
  auto [format, exp] = *suffix;
  if (exp > 60 || exp < -60) return std::string(s);
  // value = mantissa * 10^e, exactly; give up past 36 digits.
  std::string digits = parts->num + parts->denom;
  size_t nz = digits.find_first_not_of('0');
  digits = nz == std::string::npos ? "" : digits.substr(nz);
  if (digits.size() > 36) return std::string(s);
  __int128 m = 0;
  for (char c : digits) m = m * 10 + (c - '0');
  int e = -static_cast<int>(parts->denom.size());
  if (format == QuantityFormat::BinarySI) {
    for (int k = 0; k < exp; ++k) {
      if (m > (static_cast<__int128>(1) << 120)) return std::string(s);
      m *= 2;
    }
  } else {
    e += exp;
  }
  // Non-zero amounts below a nano-unit round up to it.
  if (e < -9) {
    __int128 div = 1;
    for (int k = e; k < -9; ++k) {
      if (div > static_cast<__int128>(1) << 120) return std::string(s);
      div *= 10;
    }
    m = (m + div - 1) / div;
    e = -9;
  }
  if (m == 0) return "0";
  std::string sign = parts->negative ? "-" : "";
  auto toString = [](__int128 v) {
    std::string out;
    while (v > 0) {
      out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
      v /= 10;
    }
    return out.empty() ? std::string("0") : out;
  };
  if (format == QuantityFormat::BinarySI) {
    // Binary only for whole amounts of 1024 or more; DecimalSI otherwise.
    __int128 whole = m;
    bool exact = true;
    for (int k = e; k < 0; ++k) {
      if (whole % 10) exact = false;
      whole /= 10;
    }
    for (int k = 0; k < e && exact; ++k) {
      if (whole > static_cast<__int128>(1) << 120) return std::string(s);
      whole *= 10;
    }
    if (exact && whole >= 1024) {
      static const char* bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
      int k = 0;
      while (k < 6 && whole % 1024 == 0) {
        whole /= 1024;
        ++k;
      }
      return sign + toString(whole) + bin[k];
    }
    format = QuantityFormat::DecimalSI;
  }
  while (m % 10 == 0) {
    m /= 10;
    ++e;
  }
  int r = ((e % 3) + 3) % 3;
  for (int k = 0; k < r; ++k) {
    m *= 10;
    --e;
  }
  if (format == QuantityFormat::DecimalExponent)
    return sign + toString(m) + (e ? "e" + std::to_string(e) : "");
  while (e > 18) {
    m *= 1000;
    e -= 3;
  }
  static const char* dec[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  return sign + toString(m) + dec[(e + 9) / 3];
}

std::string quantityText(const json::Value& v) {
  if (v.IsString()) return std::string(json::view(v));
  if (v.IsNumber()) return json::serialize(v);
  return "";
}

}  // namespace shepherd::meta
