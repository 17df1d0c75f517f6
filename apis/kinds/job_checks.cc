#include "apis/kinds/job_checks.h"

#include <algorithm>
#include <climits>
#include <set>
#include <vector>

#include "apis/kinds/podspec.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

constexpr int64_t kMaxParallelismForIndexed = 100000;
constexpr int64_t kMaxFailedIndexes = 100000;
constexpr int64_t kCompletionsSoftLimit = 100000;
constexpr int64_t kParallelismLimitForHighCompletions = 10000;
constexpr int64_t kMaxFailedIndexesForHighCompletions = 10000;
constexpr size_t kMaxPodFailurePolicyRules = 20;
constexpr size_t kMaxOnExitCodesValues = 255;
constexpr size_t kMaxOnPodConditionsPatterns = 20;
constexpr size_t kMaxManagedByLength = 63;
constexpr size_t kMaxSucceededIndexesLength = 64 * 1024;
constexpr size_t kMaxSuccessPolicyRules = 20;

const char* kNonNegative = "must be greater than or equal to 0";

void nonNegative(const json::Value& spec, const char* field, const std::string& path, FieldErrors& errs) {
  if (auto v = json::getInt(spec, field); v && *v < 0)
    errs.invalid(path + "." + field, std::to_string(*v), kNonNegative);
}

std::string quoted(std::string_view s) {
  return meta::validation::quote(s);
}

// IsDomainPrefixedPath: "example.com/name".
void validateDomainPrefixedPath(std::string_view v, const std::string& field, FieldErrors& errs) {
  if (v.empty()) {
    errs.required(field);
    return;
  }
  size_t slash = v.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == v.size()) {
    errs.invalid(field, quoted(v), "must be a domain-prefixed path (such as \"acme.io/foo\")");
    return;
  }
  std::string_view host = v.substr(0, slash), rest = v.substr(slash + 1);
  for (const auto& e : meta::validation::dns1123Subdomain(host)) errs.invalid(field, quoted(host), e);
  static const std::string_view allowed = "/-._~%!$&'()*+,;=:";
  bool ok = std::all_of(rest.begin(), rest.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           allowed.find(c) != std::string_view::npos;
  });
  if (!ok)
    errs.invalid(field, quoted(rest),
                 "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')");
}

std::string joinQuoted(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? " " : "") + quoted(v[i]);
  return out + "]";
}

void validateOnExitCodes(const json::Value& req, const std::string& path,
                         const std::set<std::string>& containers, FieldErrors& errs) {
  std::string_view op = json::getString(req, "operator");
  if (op.empty())
    errs.required(path + ".operator", "valid values: " + joinQuoted({"In", "NotIn"}));
  else if (op != "In" && op != "NotIn")
    errs.notSupported(path + ".operator", std::string(op), {"In", "NotIn"});
  if (const json::Value* c = json::find(req, "containerName");
      c && c->IsString() && !containers.count(std::string(json::view(*c))))
    errs.invalid(path + ".containerName", quoted(json::view(*c)),
                 "must be one of the container or initContainer names in the pod template");
  const json::Value* values = json::find(req, "values");
  size_t n = values && values->IsArray() ? values->Size() : 0;
  if (n == 0) {
    errs.invalid(path + ".values", "[]int32(nil)", "at least one value is required");
    return;
  }
  if (n > kMaxOnExitCodesValues) errs.tooMany(path + ".values", n, kMaxOnExitCodesValues);
  bool ordered = true;
  std::set<int64_t> seen;
  std::optional<int64_t> prev;
  std::string repr = "[]int32{";
  for (size_t j = 0; j < n; ++j) {
    const json::Value& x = (*values)[static_cast<rapidjson::SizeType>(j)];
    int64_t v = x.IsInt64() ? x.GetInt64() : 0;
    repr += (j ? ", " : "") + std::to_string(v);
    std::string at = path + ".values[" + std::to_string(j) + "]";
    if (op == "In" && v == 0) errs.invalid(at, "0", "must not be 0 for the In operator");
    if (!seen.insert(v).second) errs.duplicate(at, std::to_string(v));
    if (prev && *prev > v) ordered = false;
    prev = v;
  }
  if (!ordered) errs.invalid(path + ".values", repr + "}", "must be ordered");
}

void validateOnPodConditions(const json::Value& list, const std::string& path, FieldErrors& errs) {
  if (list.Size() > kMaxOnPodConditionsPatterns) errs.tooMany(path, list.Size(), kMaxOnPodConditionsPatterns);
  for (rapidjson::SizeType j = 0; j < list.Size(); ++j) {
    const json::Value& p = list[j];
    std::string at = path + "[" + std::to_string(j) + "]";
    std::string_view type = json::getString(p, "type");
    for (const auto& e : meta::validation::qualifiedName(type)) errs.invalid(at + ".type", quoted(type), e);
    std::string_view status = json::getString(p, "status");
    if (status.empty())
      errs.required(at + ".status", "valid values: " + joinQuoted({"False", "True", "Unknown"}));
    else if (status != "True" && status != "False" && status != "Unknown")
      errs.notSupported(at + ".status", std::string(status), {"False", "True", "Unknown"});
  }
}

void validatePodFailurePolicy(const json::Value& spec, const json::Value& policy, const std::string& path,
                              FieldErrors& errs) {
  const json::Value* rules = json::find(policy, "rules");
  if (!rules || !rules->IsArray()) return;
  if (rules->Size() > kMaxPodFailurePolicyRules)
    errs.tooMany(path + ".rules", rules->Size(), kMaxPodFailurePolicyRules);
  std::set<std::string> containers;
  for (const char* list : {"containers", "initContainers"})
    if (const json::Value* cs = json::findPath(spec, {"template", "spec", list}); cs && cs->IsArray())
      for (auto& c : cs->GetArray()) containers.insert(std::string(json::getString(c, "name")));
  const std::vector<std::string> actions = {"Count", "FailIndex", "FailJob", "Ignore"};
  for (rapidjson::SizeType i = 0; i < rules->Size(); ++i) {
    const json::Value& rule = (*rules)[i];
    std::string at = path + ".rules[" + std::to_string(i) + "]";
    std::string_view action = json::getString(rule, "action");
    if (action.empty())
      errs.required(at + ".action", "valid values: " + joinQuoted(actions));
    else if (action == "FailIndex") {
      if (!json::find(spec, "backoffLimitPerIndex"))
        errs.invalid(at + ".action", quoted(action), "requires the backoffLimitPerIndex to be set");
    } else if (std::find(actions.begin(), actions.end(), action) == actions.end()) {
      errs.notSupported(at + ".action", std::string(action), actions);
    }
    const json::Value* exit = json::find(rule, "onExitCodes");
    if (exit && exit->IsNull()) exit = nullptr;
    const json::Value* conds = json::find(rule, "onPodConditions");
    bool hasConds = conds && conds->IsArray() && !conds->Empty();
    if (exit) validateOnExitCodes(*exit, at + ".onExitCodes", containers, errs);
    if (hasConds) validateOnPodConditions(*conds, at + ".onPodConditions", errs);
    if (exit && hasConds)
      errs.invalidOmitValue(at, "specifying both OnExitCodes and OnPodConditions is not supported");
    if (!exit && !hasConds)
      errs.invalidOmitValue(at, "specifying one of OnExitCodes and OnPodConditions is required");
  }
}

void validateSuccessPolicy(const json::Value& spec, const json::Value& policy, const std::string& path,
                           FieldErrors& errs) {
  const json::Value* rules = json::find(policy, "rules");
  size_t n = rules && rules->IsArray() ? rules->Size() : 0;
  if (n == 0)
    errs.required(path + ".rules",
                  "at least one rules must be specified when the successPolicy is specified");
  if (n > kMaxSuccessPolicyRules) errs.tooMany(path + ".rules", n, kMaxSuccessPolicyRules);
  int64_t completions = json::getInt(spec, "completions").value_or(0);
  for (size_t i = 0; i < n; ++i) {
    const json::Value& rule = (*rules)[static_cast<rapidjson::SizeType>(i)];
    std::string at = path + ".rules[" + std::to_string(i) + "]";
    const json::Value* idx = json::find(rule, "succeededIndexes");
    if (idx && !idx->IsString()) idx = nullptr;
    auto count = json::getInt(rule, "succeededCount");
    if (!idx && !count)
      errs.required(at, "at least one of succeededCount or succeededIndexes must be specified");
    int64_t total = 0;
    if (idx) {
      std::string_view s = json::view(*idx);
      if (s.size() > kMaxSucceededIndexesLength)
        errs.tooLong(at + ".succeededIndexes", kMaxSucceededIndexesLength);
      IndexesFormat f = parseIndexesFormat(s, completions);
      if (!f.error.empty())
        errs.invalid(at + ".succeededIndexes", quoted(s), "error parsing succeededIndexes: " + f.error);
      else
        total = f.total;
    }
    if (count) {
      std::string c = at + ".succeededCount";
      if (*count < 0) errs.invalid(c, std::to_string(*count), kNonNegative);
      if (*count > completions)
        errs.invalid(c, std::to_string(*count),
                     "must be less than or equal to " + std::to_string(completions) +
                         " (the number of specified completions)");
      if (idx && *count > total)
        errs.invalid(c, std::to_string(*count),
                     "must be less than or equal to " + std::to_string(total) +
                         " (the number of indexes in the specified succeededIndexes field)");
    }
  }
}

void validateIndexedLimits(const json::Value& spec, const std::string& path, FieldErrors& errs) {
  auto completions = json::getInt(spec, "completions");
  auto parallelism = json::getInt(spec, "parallelism");
  auto maxFailed = json::getInt(spec, "maxFailedIndexes");
  bool perIndex = json::find(spec, "backoffLimitPerIndex") != nullptr;
  if (!completions) errs.required(path + ".completions", "when completion mode is Indexed");
  if (parallelism && *parallelism > kMaxParallelismForIndexed)
    errs.invalid(path + ".parallelism", std::to_string(*parallelism),
                 "must be less than or equal to 100000 when completion mode is Indexed");
  if (completions && maxFailed && *maxFailed > *completions)
    errs.invalid(path + ".maxFailedIndexes", std::to_string(*maxFailed),
                 "must be less than or equal to completions");
  if (maxFailed && *maxFailed > kMaxFailedIndexes)
    errs.invalid(path + ".maxFailedIndexes", std::to_string(*maxFailed),
                 "must be less than or equal to 100000");
  if (completions && *completions > kCompletionsSoftLimit && perIndex) {
    if (!maxFailed)
      errs.required(path + ".maxFailedIndexes", "must be specified when completions is above 100000");
    if (parallelism && *parallelism > kParallelismLimitForHighCompletions)
      errs.invalid(
          path + ".parallelism", std::to_string(*parallelism),
          "must be less than or equal to 10000 when completions are above 100000 and used with backoff "
          "limit per index");
    if (maxFailed && *maxFailed > kMaxFailedIndexesForHighCompletions)
      errs.invalid(
          path + ".maxFailedIndexes", std::to_string(*maxFailed),
          "must be less than or equal to 10000 when completions are above 100000 and used with backoff "
          "limit per index");
  }
}

void validateRestartPolicy(const json::Value& spec, const std::string& path, FieldErrors& errs) {
  std::string_view rp = json::getStringPath(spec, {"template", "spec", "restartPolicy"});
  std::string field = path + ".template.spec.restartPolicy";
  if (rp == "Always" || rp.empty())
    errs.required(field, "valid values: \"OnFailure\", \"Never\"");
  else if (rp != "OnFailure" && rp != "Never")
    errs.notSupported(field, std::string(rp), {"OnFailure", "Never"});
  else if (json::find(spec, "podFailurePolicy") && rp != "Never")
    errs.invalid(field, quoted(rp), "only \"Never\" is supported when podFailurePolicy is specified");
}

}  // namespace

std::string jsonRepr(const json::Value& v) {
  return json::serialize(v);
}

IndexesFormat parseIndexesFormat(std::string_view indexes, int64_t completions) {
  IndexesFormat out;
  if (indexes.empty()) return out;
  auto number = [](std::string_view s) -> std::optional<int64_t> {
    if (s.empty() || s.size() > 18) return std::nullopt;
    size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
    if (i == s.size()) return std::nullopt;
    int64_t n = 0;
    for (; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      n = n * 10 + (s[i] - '0');
    }
    return s[0] == '-' ? -n : n;
  };
  std::optional<int64_t> last;
  size_t start = 0;
  while (start <= indexes.size()) {
    size_t comma = indexes.find(',', start);
    std::string_view part =
        indexes.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::vector<std::string_view> limits;
    for (size_t p = 0;;) {
      size_t dash = part.find('-', p);
      limits.push_back(part.substr(p, dash == std::string_view::npos ? std::string_view::npos : dash - p));
      if (dash == std::string_view::npos) break;
      p = dash + 1;
    }
    if (limits.size() > 2) {
      out.error =
          "the fragment " + meta::validation::quote(part) +
          " violates the requirement that an index interval can have at most two parts separated by '-'";
      return out;
    }
    auto x = number(limits[0]);
    if (!x) {
      out.error = "cannot convert string to integer for index: " + meta::validation::quote(limits[0]);
      return out;
    }
    if (*x >= completions) {
      out.error = "too large index: " + meta::validation::quote(limits[0]);
      return out;
    }
    int64_t y = *x;
    if (limits.size() == 2) {
      auto yv = number(limits[1]);
      if (!yv) {
        out.error = "cannot convert string to integer for index: " + meta::validation::quote(limits[1]);
        return out;
      }
      if (*yv >= completions) {
        out.error = "too large index: " + meta::validation::quote(limits[1]);
        return out;
      }
      if (*x >= *yv) {
        out.error =
            "non-increasing order, previous: " + std::to_string(*x) + ", current: " + std::to_string(*yv);
        return out;
      }
      y = *yv;
    }
    if (last && *last >= *x) {
      out.error =
          "non-increasing order, previous: " + std::to_string(*last) + ", current: " + std::to_string(*x);
      return out;
    }
    out.total += y - *x + 1;
    last = y;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

void defaultJobSpec(json::Value& spec, json::Allocator& a) {
  bool hasCompletions = json::find(spec, "completions") && !json::find(spec, "completions")->IsNull();
  bool hasParallelism = json::find(spec, "parallelism") && !json::find(spec, "parallelism")->IsNull();
  if (!hasCompletions && !hasParallelism) {
    json::set(spec, "completions", json::Value(1), a);
    json::set(spec, "parallelism", json::Value(1), a);
  }
  if (!hasParallelism) json::set(spec, "parallelism", json::Value(1), a);
  if (!json::find(spec, "backoffLimit"))
    json::set(spec, "backoffLimit", json::Value(json::find(spec, "backoffLimitPerIndex") ? INT32_MAX : 6), a);
  if (json::getString(spec, "completionMode").empty())
    json::setString(spec, "completionMode", "NonIndexed", a);
  if (!json::find(spec, "suspend")) json::set(spec, "suspend", json::Value(false), a);
  json::Value* pfp = json::find(spec, "podFailurePolicy");
  if (pfp && pfp->IsNull()) pfp = nullptr;
  if (json::Value* rules = pfp ? json::find(*pfp, "rules") : nullptr; rules && rules->IsArray())
    for (auto& r : rules->GetArray())
      if (json::Value* conds = json::find(r, "onPodConditions"); conds && conds->IsArray())
        for (auto& c : conds->GetArray())
          if (c.IsObject() && json::getString(c, "status").empty()) json::setString(c, "status", "True", a);
  if (json::getString(spec, "podReplacementPolicy").empty())
    json::setString(spec, "podReplacementPolicy", pfp ? "Failed" : "TerminatingOrFailed", a);
  if (!json::find(spec, "manualSelector")) json::set(spec, "manualSelector", json::Value(false), a);
  if (json::Value* ps = json::findPath(spec, {"template", "spec"})) defaultPodSpec(*ps, a);
}

void validateJobSpecFields(const json::Value& spec, const std::string& path, FieldErrors& errs) {
  for (const char* f : {"parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                        "ttlSecondsAfterFinished", "backoffLimitPerIndex"})
    nonNegative(spec, f, path, errs);
  if (json::find(spec, "maxFailedIndexes")) {
    nonNegative(spec, "maxFailedIndexes", path, errs);
    if (!json::find(spec, "backoffLimitPerIndex"))
      errs.required(path + ".backoffLimitPerIndex", "when maxFailedIndexes is specified");
  }
  if (const json::Value* mb = json::find(spec, "managedBy"); mb && mb->IsString()) {
    validateDomainPrefixedPath(json::view(*mb), path + ".managedBy", errs);
    if (mb->GetStringLength() > kMaxManagedByLength) errs.tooLong(path + ".managedBy", kMaxManagedByLength);
  }
  std::string_view mode = json::getString(spec, "completionMode");
  if (!mode.empty() && mode != "NonIndexed" && mode != "Indexed")
    errs.notSupported(path + ".completionMode", std::string(mode), {"NonIndexed", "Indexed"});
  if (mode == "Indexed") validateIndexedLimits(spec, path, errs);
  if (mode.empty() || mode == "NonIndexed") {
    if (auto v = json::getInt(spec, "backoffLimitPerIndex"))
      errs.invalid(path + ".backoffLimitPerIndex", std::to_string(*v), "requires indexed completion mode");
    if (auto v = json::getInt(spec, "maxFailedIndexes"))
      errs.invalid(path + ".maxFailedIndexes", std::to_string(*v), "requires indexed completion mode");
  }
  if (const json::Value* pfp = json::find(spec, "podFailurePolicy"); pfp && pfp->IsObject())
    validatePodFailurePolicy(spec, *pfp, path + ".podFailurePolicy", errs);
  if (const json::Value* sp = json::find(spec, "successPolicy"); sp && sp->IsObject()) {
    if (mode != "Indexed")
      errs.invalid(path + ".successPolicy", jsonRepr(*sp), "requires indexed completion mode");
    else
      validateSuccessPolicy(spec, *sp, path + ".successPolicy", errs);
  }
  if (std::string_view prp = json::getString(spec, "podReplacementPolicy"); !prp.empty()) {
    if (json::find(spec, "podFailurePolicy")) {
      if (prp != "Failed") errs.notSupported(path + ".podReplacementPolicy", std::string(prp), {"Failed"});
    } else if (prp != "Failed" && prp != "TerminatingOrFailed") {
      errs.notSupported(path + ".podReplacementPolicy", std::string(prp), {"Failed", "TerminatingOrFailed"});
    }
  }
  static const json::Value empty(rapidjson::kObjectType);
  const json::Value* tmpl = json::find(spec, "template");
  validatePodTemplate(tmpl && tmpl->IsObject() ? *tmpl : empty, path + ".template", errs);
  validateRestartPolicy(spec, path, errs);
}

}  // namespace shepherd::apis::kinds
