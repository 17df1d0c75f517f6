#include "apis/kinds/condition_checks.h"

#include <cctype>
#include <set>

#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

constexpr size_t kMaxReasonLength = 1024;
constexpr size_t kMaxMessageLength = 32 * 1024;

// [A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?
bool validReason(std::string_view r) {
  auto alpha = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  auto alnum_ = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  if (r.empty() || !alpha(r.front())) return false;
  for (char c : r.substr(1))
    if (!alnum_(c) && c != ',' && c != ':') return false;
  return r.size() == 1 || alnum_(r.back());
}

constexpr const char* kReasonMessage =
    "a condition reason must start with alphabetic character, optionally followed by a string of "
    "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  "
    "or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is "
    "'[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";

}  // namespace

void validateMetaConditions(const json::Value* conditions, const std::string& field, FieldErrors& errs) {
  if (!conditions || !conditions->IsArray()) return;
  std::set<std::string, std::less<>> seen;
  size_t i = 0;
  for (const auto& c : conditions->GetArray()) {
    std::string at = field + "[" + std::to_string(i++) + "]";
    std::string_view type = json::getString(c, "type");
    if (!seen.emplace(type).second) errs.duplicate(at + ".type", meta::validation::quote(type));
    for (const auto& msg : meta::validation::qualifiedName(type))
      errs.invalid(at + ".type", meta::validation::quote(type), msg);
    std::string_view status = json::getString(c, "status");
    if (status != "True" && status != "False" && status != "Unknown")
      errs.notSupported(at + ".status", std::string(status), {"False", "True", "Unknown"});
    if (auto g = json::getInt(c, "observedGeneration"); g && *g < 0)
      errs.invalid(at + ".observedGeneration", std::to_string(*g), "must be greater than or equal to zero");
    if (json::getString(c, "lastTransitionTime").empty())
      errs.required(at + ".lastTransitionTime", "must be set");
    std::string_view reason = json::getString(c, "reason");
    if (reason.empty()) {
      errs.required(at + ".reason", "must be set");
    } else {
      if (!validReason(reason)) errs.invalid(at + ".reason", meta::validation::quote(reason), kReasonMessage);
      if (reason.size() > kMaxReasonLength) errs.tooLong(at + ".reason", kMaxReasonLength);
    }
    if (json::getString(c, "message").size() > kMaxMessageLength)
      errs.tooLong(at + ".message", kMaxMessageLength);
  }
}

}  // namespace shepherd::apis::kinds
