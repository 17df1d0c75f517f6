// Pod tolerations: upstream's ValidateTolerations, and the pod update rule that
// existing tolerations may change only their tolerationSeconds.
#include "apis/kinds/podspec.h"
#include "apis/kinds/podspec_checks.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

using meta::validation::quote;

void joinInto(std::string& out, const std::vector<std::string>& parts) {
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ";" : "") + parts[i];
}

}  // namespace

void validateTolerations(const json::Value& tolerations, const std::string& path, FieldErrors& errs) {
  if (!tolerations.IsArray()) return;
  for (rapidjson::SizeType i = 0; i < tolerations.Size(); ++i) {
    const json::Value& t = tolerations[i];
    std::string tp = indexed(path, i);
    std::string_view key = json::getString(t, "key");
    std::string_view op = json::getString(t, "operator");
    std::string_view value = json::getString(t, "value");
    std::string_view effect = json::getString(t, "effect");
    if (!key.empty())
      for (auto& e : meta::validation::qualifiedName(key)) errs.invalid(tp + ".key", quote(key), e);
    // An empty key with Exists matches every taint; with Equal it would match none.
    if (key.empty() && op != "Exists")
      errs.invalid(
          tp + ".operator", quote(op),
          "operator must be Exists when `key` is empty, which means \"match all values and all keys\"");
    const json::Value* seconds = json::find(t, "tolerationSeconds");
    if (seconds && !seconds->IsNull() && effect != "NoExecute")
      errs.invalid(tp + ".effect", quote(effect),
                   "effect must be 'NoExecute' when `tolerationSeconds` is set");
    if (op == "Equal" || op.empty()) {
      // Upstream reports a bad value on the operator's path, its messages joined by ';'.
      if (auto problems = meta::validation::labelValue(value); !problems.empty()) {
        std::string msg;
        joinInto(msg, problems);
        errs.invalid(tp + ".operator", quote(value), msg);
      }
    } else if (op == "Exists") {
      if (!value.empty())
        errs.invalid(tp + ".operator", quote(value), "value must be empty when `operator` is 'Exists'");
    } else {
      errs.notSupported(tp + ".operator", std::string(op), {"Equal", "Exists"});
    }
    // An empty effect tolerates every effect.
    if (!effect.empty() && effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute")
      errs.notSupported(tp + ".effect", std::string(effect), {"NoSchedule", "PreferNoSchedule", "NoExecute"});
  }
}

void validateOnlyAddedTolerations(const json::Value* now, const json::Value* before, const std::string& path,
                                  FieldErrors& errs) {
  static const json::Value empty(rapidjson::kArrayType);
  const json::Value& cur = now && now->IsArray() ? *now : empty;
  const json::Value& old = before && before->IsArray() ? *before : empty;
  // Each old toleration must still be there, but for its tolerationSeconds.
  auto sameButSeconds = [](const json::Value& a, const json::Value& b) {
    for (const char* f : {"key", "operator", "value", "effect"})
      if (json::getString(a, f) != json::getString(b, f)) return false;
    return true;
  };
  for (auto& o : old.GetArray()) {
    bool found = false;
    for (auto& n : cur.GetArray())
      if (sameButSeconds(o, n)) found = true;
    if (!found) {
      errs.forbidden(path, "existing toleration can not be modified except its tolerationSeconds");
      return;
    }
  }
  validateTolerations(cur, path, errs);
}

}  // namespace shepherd::apis::kinds
