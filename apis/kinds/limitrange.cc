// LimitRange (core/v1): per-namespace bounds and defaults for the resources of pods,
// containers and claims (type Pod, Container, PersistentVolumeClaim or a qualified name).
// The LimitRanger admission plugin applies them; here only their own consistency:
// min <= defaultRequest <= default <= max and limit/request ratios.
#include <cstdio>
#include <map>
#include <set>

#include "apis/kinds/kinds.h"
#include "apis/kinds/resource_names.h"
#include "meta/quantity.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

using meta::validation::quote;

struct Qty {
  long double value;
  std::string text;  // canonical, as Quantity.String()
};

std::map<std::string, Qty> quantities(const json::Value& item, const char* key) {
  std::map<std::string, Qty> out;
  const json::Value* m = json::find(item, key);
  if (!m || !m->IsObject()) return out;
  for (const auto& kv : m->GetObject()) {
    std::string text = meta::quantityText(kv.value);
    out[std::string(json::view(kv.name))] = {meta::parseQuantity(text).value_or(0),
                                             meta::canonicalQuantity(text)};
  }
  return out;
}

bool isStandardLimitType(std::string_view t) {
  return t == "Pod" || t == "Container" || t == "PersistentVolumeClaim";
}

void validateTypeName(std::string_view t, const std::string& field, FieldErrors& errs) {
  auto problems = meta::validation::qualifiedName(t);
  for (const auto& p : problems) errs.invalid(field, quote(t), p);
  if (problems.empty() && t.find('/') == std::string_view::npos && !isStandardLimitType(t))
    errs.invalid(field, quote(t), "must be a standard limit type or fully qualified");
}

void validateName(std::string_view type, std::string_view name, const std::string& field, FieldErrors& errs) {
  if (type == "Pod" || type == "Container")
    validateContainerResourceName(name, field, errs);
  else
    validateResourceTypeName(name, field, errs);
}

std::string ratioText(long double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%f", static_cast<double>(v));
  return buf;
}

void validateLimits(const json::Value& obj, FieldErrors& errs) {
  const json::Value* limits = json::findPath(obj, {"spec", "limits"});
  if (!limits || !limits->IsArray()) return;
  std::set<std::string> types;
  for (rapidjson::SizeType i = 0; i < limits->Size(); ++i) {
    const json::Value& item = (*limits)[i];
    if (!item.IsObject()) continue;
    std::string path = "spec.limits[" + std::to_string(i) + "]";
    std::string type(json::getString(item, "type"));
    validateTypeName(type, path + ".type", errs);
    if (!types.insert(type).second) errs.duplicate(path + ".type", quote(type));
    std::set<std::string> keys;
    auto max = quantities(item, "max"), min = quantities(item, "min");
    auto def = quantities(item, "default"), defReq = quantities(item, "defaultRequest");
    auto ratio = quantities(item, "maxLimitRequestRatio");
    for (auto [m, key] : {std::pair{&max, "max"}, std::pair{&min, "min"}})
      for (const auto& [k, q] : *m) {
        validateName(type, k, path + "." + key + "[" + k + "]", errs);
        keys.insert(k);
      }
    if (type == "Pod") {
      if (!def.empty()) errs.forbidden(path + ".default", "may not be specified when `type` is 'Pod'");
      if (!defReq.empty())
        errs.forbidden(path + ".defaultRequest", "may not be specified when `type` is 'Pod'");
      def.clear();
      defReq.clear();
    } else {
      for (auto [m, key] : {std::pair{&def, "default"}, std::pair{&defReq, "defaultRequest"}})
        for (const auto& [k, q] : *m) {
          validateName(type, k, path + "." + key + "[" + k + "]", errs);
          keys.insert(k);
        }
    }
    if (type == "PersistentVolumeClaim" && !min.count("storage") && !max.count("storage"))
      errs.required(path + ".limits",
                    "either minimum or maximum storage value is required, but neither was provided");
    for (const auto& [k, q] : ratio) {
      validateName(type, k, path + ".maxLimitRequestRatio[" + k + "]", errs);
      keys.insert(k);
    }
    for (const auto& k : keys) {
      auto mn = min.find(k), mx = max.find(k), d = def.find(k), dr = defReq.find(k), r = ratio.find(k);
      bool hasMin = mn != min.end(), hasMax = mx != max.end(), hasDef = d != def.end(),
           hasReq = dr != defReq.end();
      auto at = [&](const char* key) { return path + "." + key + "[" + k + "]"; };
      if (hasMin && hasMax && mn->second.value > mx->second.value)
        errs.invalid(at("min"), mn->second.text,
                     "min value " + mn->second.text + " is greater than max value " + mx->second.text);
      if (hasReq && hasMin && mn->second.value > dr->second.value)
        errs.invalid(
            at("defaultRequest"), dr->second.text,
            "min value " + mn->second.text + " is greater than default request value " + dr->second.text);
      if (hasReq && hasMax && dr->second.value > mx->second.value)
        errs.invalid(
            at("defaultRequest"), dr->second.text,
            "default request value " + dr->second.text + " is greater than max value " + mx->second.text);
      if (hasReq && hasDef && dr->second.value > d->second.value)
        errs.invalid(at("defaultRequest"), dr->second.text,
                     "default request value " + dr->second.text + " is greater than default limit value " +
                         d->second.text);
      if (hasDef && hasMin && mn->second.value > d->second.value)
        errs.invalid(at("default"), mn->second.text,
                     "min value " + mn->second.text + " is greater than default value " + d->second.text);
      if (hasDef && hasMax && d->second.value > mx->second.value)
        errs.invalid(at("default"), mx->second.text,
                     "default value " + d->second.text + " is greater than max value " + mx->second.text);
      if (r != ratio.end()) {
        if (r->second.value < 1)
          errs.invalid(at("maxLimitRequestRatio"), r->second.text,
                       "ratio " + r->second.text + " is less than 1");
        if (hasMin && hasMax && mn->second.value > 0) {
          long double bound = mx->second.value / mn->second.value;
          if (r->second.value > bound)
            errs.invalid(at("maxLimitRequestRatio"), r->second.text,
                         "ratio " + r->second.text + " is greater than max/min = " + ratioText(bound));
        }
      }
      if (!overcommitAllowed(k) && hasDef && hasReq && d->second.value != dr->second.value)
        errs.invalid(at("defaultRequest"), dr->second.text,
                     "default value " + d->second.text + " must equal to defaultRequest value " +
                         dr->second.text + " in " + k);
    }
  }
}

// SetDefaults_LimitRangeItem, Container items only: default from max, defaultRequest from
// default, then from min.
void defaultItem(json::Value& item, json::Allocator& a) {
  if (json::getString(item, "type") != "Container") return;
  // Both made first: adding a member may move the others.
  json::ensureObject(item, "default", a);
  json::ensureObject(item, "defaultRequest", a);
  json::Value& def = *json::find(item, "default");
  json::Value& req = *json::find(item, "defaultRequest");
  auto fill = [&](const char* from, json::Value& into) {
    const json::Value* src = json::find(item, from);
    if (!src || !src->IsObject()) return;
    for (const auto& kv : src->GetObject())
      if (!json::find(into, json::view(kv.name)))
        json::set(into, json::view(kv.name), json::Value(kv.value, a), a);
  };
  fill("max", def);
  fill("default", req);
  fill("min", req);
  // Empty maps are not written (omitempty).
  if (json::find(item, "default")->MemberCount() == 0) json::remove(item, "default");
  if (json::find(item, "defaultRequest")->MemberCount() == 0) json::remove(item, "defaultRequest");
}

class LimitRangeStrategy final : public Strategy {
 public:
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    if (json::Value* limits = json::findPath(obj, {"spec", "limits"}); limits && limits->IsArray())
      for (auto& item : limits->GetArray())
        if (item.IsObject()) defaultItem(item, a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override { validateLimits(obj, errs); }
  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Created At", "date", "", "When the limit range was created.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "creationTimestamp"}), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> limitRangeStrategy() {
  return std::make_shared<LimitRangeStrategy>();
}

}  // namespace shepherd::apis::kinds
