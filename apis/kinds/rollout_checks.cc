#include "apis/kinds/rollout_checks.h"

#include <cstdlib>

namespace shepherd::apis::kinds {

std::string intOrStringRepr(const json::Value& v) {
  return v.IsString() ? std::string(json::view(v)) : json::serialize(v);
}

std::optional<int64_t> percent(const json::Value& v) {
  if (!v.IsString()) return std::nullopt;
  std::string_view s = json::view(v);
  if (s.size() < 2 || s.back() != '%') return std::nullopt;
  int64_t n = 0;
  for (char c : s.substr(0, s.size() - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = std::min<int64_t>(n * 10 + (c - '0'), int64_t{1} << 40);
  }
  return n;
}

int64_t intOrPercentValue(const json::Value& v) {
  if (auto p = percent(v)) return *p;
  if (v.IsInt64()) return v.GetInt64();
  if (v.IsString()) {
    std::string s(json::view(v));
    char* end = nullptr;
    long long n = std::strtoll(s.c_str(), &end, 10);
    return !s.empty() && *end == '\0' ? n : 0;
  }
  return 0;
}

void validatePositiveIntOrPercent(const json::Value* v, const std::string& field, FieldErrors& errs) {
  if (!v) return;
  if (v->IsString()) {
    if (!percent(*v))
      errs.invalid(
          field, intOrStringRepr(*v),
          "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or "
          "'93%', regex used for validation is '[0-9]+%')");
  } else if (auto n = v->IsInt64() ? std::optional<int64_t>(v->GetInt64()) : std::nullopt; n && *n < 0) {
    errs.invalid(field, std::to_string(*n), "must be greater than or equal to 0");
  }
}

void validateNotMoreThan100Percent(const json::Value* v, const std::string& field, FieldErrors& errs) {
  if (!v) return;
  if (auto p = percent(*v); p && *p > 100)
    errs.invalid(field, intOrStringRepr(*v), "must not be greater than 100%");
}

int64_t scaledValue(const json::Value& v, int64_t total, bool round_up) {
  if (auto p = percent(v)) {
    int64_t n = *p * total;
    return round_up ? (n + 99) / 100 : n / 100;
  }
  return v.IsInt64() ? v.GetInt64() : 0;
}

}  // namespace shepherd::apis::kinds
