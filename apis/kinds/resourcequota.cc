// ResourceQuota (core/v1): per-namespace limits on what objects may charge (spec.hard),
// with the usage the quota controller and the ResourceQuota admission plugin keep in
// status (hard, a copy of spec.hard once observed, and used). Status starts empty; scopes
// never change.
#include <map>
#include <set>

#include "apis/kinds/kinds.h"
#include "apis/kinds/resource_names.h"
#include "meta/quantity.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

using meta::validation::quote;

const std::set<std::string>& integerResources() {
  static const std::set<std::string> names = {
      "pods",       "resourcequotas",         "services",           "replicationcontrollers", "secrets",
      "configmaps", "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"};
  return names;
}

void validateList(const json::Value* m, const std::string& path, FieldErrors& errs) {
  if (!m || !m->IsObject()) return;
  for (const auto& kv : m->GetObject()) {
    std::string k(json::view(kv.name));
    std::string field = path + "[" + k + "]";
    size_t before = errs.causes().size();
    validateResourceTypeName(k, field, errs);
    if (errs.causes().size() == before && k.find('/') == std::string::npos && !isStandardQuotaResourceName(k))
      errs.invalid(field, quote(k), "must be a standard resource for quota");
    std::string text = meta::quantityText(kv.value);
    long double v = meta::parseQuantity(text).value_or(0);
    if (v < 0)
      errs.invalid(field, quote(meta::canonicalQuantity(text)), "must be greater than or equal to 0");
    if ((integerResources().count(k) || isExtended(k)) &&
        v != static_cast<long double>(static_cast<int64_t>(v)))
      errs.invalid(field, meta::canonicalQuantity(text), "must be an integer");
  }
}

const std::set<std::string>& computeAndPods() {
  static const std::set<std::string> names = {
      "pods", "cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"};
  return names;
}

bool knownScope(const std::string& s) {
  return s == "Terminating" || s == "NotTerminating" || s == "BestEffort" || s == "NotBestEffort" ||
         s == "PriorityClass" || s == "CrossNamespacePodAffinity";
}

// Whether a scope may constrain the standard resource `k` (names with a domain are not
// checked).
bool scopeAllows(const std::string& scope, const std::string& k) {
  if (k.find('/') != std::string::npos || !isStandardQuotaResourceName(k)) return true;
  if (scope == "BestEffort") return k == "pods";
  return computeAndPods().count(k) > 0;
}

std::string scopesRepr(const json::Value& scopes) {
  std::string out = "[]core.ResourceQuotaScope{";
  bool first = true;
  for (const auto& s : scopes.GetArray()) {
    out += (first ? "" : ", ") + quote(s.IsString() ? json::view(s) : "");
    first = false;
  }
  return out + "}";
}

void validateScopes(const json::Value& spec, FieldErrors& errs) {
  const json::Value* hard = json::find(spec, "hard");
  auto checkAgainstHard = [&](const std::string& scope) {
    if (!hard || !hard->IsObject()) return true;
    for (const auto& kv : hard->GetObject())
      if (!scopeAllows(scope, std::string(json::view(kv.name)))) return false;
    return true;
  };
  std::set<std::string> seen;
  if (const json::Value* scopes = json::find(spec, "scopes");
      scopes && scopes->IsArray() && !scopes->Empty()) {
    std::string repr = scopesRepr(*scopes);
    for (const auto& s : scopes->GetArray()) {
      std::string scope = s.IsString() ? std::string(json::view(s)) : "";
      if (!knownScope(scope))
        errs.invalid("spec.scopes", repr, "unsupported scope");
      else if (!checkAgainstHard(scope))
        errs.invalid("spec.scopes", repr, "unsupported scope applied to resource");
      seen.insert(scope);
    }
    if ((seen.count("BestEffort") && seen.count("NotBestEffort")) ||
        (seen.count("Terminating") && seen.count("NotTerminating")))
      errs.invalid("spec.scopes", repr, "conflicting scopes");
  }
  const json::Value* exprs = json::findPath(spec, {"scopeSelector", "matchExpressions"});
  if (!exprs || !exprs->IsArray()) return;
  std::set<std::string> selected;
  for (rapidjson::SizeType i = 0; i < exprs->Size(); ++i) {
    const json::Value& e = (*exprs)[i];
    std::string path = "spec.scopeSelector.matchExpressions[" + std::to_string(i) + "]";
    std::string scope(json::getString(e, "scopeName"));
    std::string op(json::getString(e, "operator"));
    if (!knownScope(scope)) {
      errs.invalid(path + ".scopeName", quote(scope), "unsupported scope");
      continue;
    }
    if (!checkAgainstHard(scope))
      errs.invalid("spec.scopeSelector.matchExpressions", quote(scope),
                   "unsupported scope applied to resource");
    selected.insert(scope);
    const json::Value* values = json::find(e, "values");
    size_t n = values && values->IsArray() ? values->Size() : 0;
    if (scope != "PriorityClass" && op != "Exists")
      errs.invalid(path + ".operator", quote(op),
                   "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
                   "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                   "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity");
    if (op == "In" || op == "NotIn") {
      if (n == 0)
        errs.required(path + ".values",
                      "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector");
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (n != 0)
        errs.invalid(path + ".values", json::serialize(*values),
                     "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector");
    } else {
      errs.invalid(path + ".operator", quote(op), "not a valid selector operator");
    }
  }
  if ((selected.count("BestEffort") && selected.count("NotBestEffort")) ||
      (selected.count("Terminating") && selected.count("NotTerminating")))
    errs.invalid("spec.scopeSelector", json::serialize(*json::findPath(spec, {"scopeSelector"})),
                 "conflicting scopes");
}

void validateQuota(const json::Value& obj, FieldErrors& errs) {
  static const json::Value kEmpty(rapidjson::kObjectType);
  const json::Value* s = json::find(obj, "spec");
  const json::Value& spec = s && s->IsObject() ? *s : kEmpty;
  validateList(json::find(spec, "hard"), "spec.hard", errs);
  validateScopes(spec, errs);
  if (const json::Value* st = json::find(obj, "status"); st && st->IsObject()) {
    validateList(json::find(*st, "hard"), "status.hard", errs);
    validateList(json::find(*st, "used"), "status.used", errs);
  }
}

std::string usageCell(const json::Value& obj, bool limits) {
  const json::Value* hard = json::findPath(obj, {"status", "hard"});
  const json::Value* used = json::findPath(obj, {"status", "used"});
  if (!hard || !hard->IsObject()) return "";
  std::map<std::string, const json::Value*> sorted;
  for (const auto& kv : hard->GetObject()) sorted[std::string(json::view(kv.name))] = &kv.value;
  std::string out;
  for (const auto& [k, q] : sorted) {
    bool isLimit = k.substr(0, k.find('.')) == "limits";
    if (isLimit != limits) continue;
    const json::Value* u = used && used->IsObject() ? json::find(*used, k) : nullptr;
    std::string usedText = u ? meta::canonicalQuantity(meta::quantityText(*u)) : "0";
    out += (out.empty() ? "" : ", ") + k + ": " + usedText + "/" +
           meta::canonicalQuantity(meta::quantityText(*q));
  }
  return out;
}

class ResourceQuotaStrategy final : public Strategy {
 public:
  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    json::set(obj, "status", json::Value(rapidjson::kObjectType), obj.GetAllocator());
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override { validateQuota(obj, errs); }
  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validateQuota(obj, errs);
    auto scopeSet = [](const json::Value& o) {
      std::set<std::string> out;
      if (const json::Value* s = json::findPath(o, {"spec", "scopes"}); s && s->IsArray())
        for (const auto& v : s->GetArray())
          if (v.IsString()) out.insert(std::string(json::view(v)));
      return out;
    };
    if (scopeSet(obj) != scopeSet(old)) {
      const json::Value* s = json::findPath(obj, {"spec", "scopes"});
      static const json::Value kNone(rapidjson::kArrayType);
      errs.invalid("spec.scopes", scopesRepr(s && s->IsArray() ? *s : kNone), "field is immutable");
    }
  }
  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Age", "string", "", "Time since the quota was created.", 0},
            {"Request", "string", "", "Used and hard of the quota's request resources.", 0},
            {"Limit", "string", "", "Used and hard of the quota's limit resources.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    cells.PushBack(json::str(usageCell(obj, false), a), a);
    cells.PushBack(json::str(usageCell(obj, true), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> resourceQuotaStrategy() {
  return std::make_shared<ResourceQuotaStrategy>();
}

}  // namespace shepherd::apis::kinds
