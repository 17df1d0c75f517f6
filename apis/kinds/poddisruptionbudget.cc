// PodDisruptionBudget (policy/v1): minAvailable or maxUnavailable (an integer or a
// percentage) over the pods a selector picks. Status starts zeroed (the disruption
// controller fills it); the generation moves with the spec, which stays mutable.
#include "apis/kinds/condition_checks.h"
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "apis/kinds/rollout_checks.h"

namespace shepherd::apis::kinds {

namespace {

// Go serializes these int32 status fields even when zero (no omitempty).
constexpr const char* kCounts[] = {"disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"};

void validateSpec(const json::Value& obj, FieldErrors& errs) {
  const json::Value* spec = json::find(obj, "spec");
  if (!spec || !spec->IsObject()) return;
  const json::Value* min = json::find(*spec, "minAvailable");
  const json::Value* max = json::find(*spec, "maxUnavailable");
  if (min && max && !min->IsNull() && !max->IsNull())
    errs.invalidOmitValue("spec", "minAvailable and maxUnavailable cannot be both set");
  for (auto [v, field] : {std::pair{min, "spec.minAvailable"}, std::pair{max, "spec.maxUnavailable"}}) {
    if (!v || v->IsNull()) continue;
    validatePositiveIntOrPercent(v, field, errs);
    validateNotMoreThan100Percent(v, field, errs);
  }
  if (const json::Value* sel = json::find(*spec, "selector"); sel && sel->IsObject())
    validateLabelSelector(*sel, "spec.selector", errs);
  if (const json::Value* p = json::find(*spec, "unhealthyPodEvictionPolicy"); p && !p->IsNull()) {
    std::string_view policy = json::view(*p);
    if (policy != "AlwaysAllow" && policy != "IfHealthyBudget")
      errs.notSupported("spec.unhealthyPodEvictionPolicy", std::string(policy),
                        {"AlwaysAllow", "IfHealthyBudget"});
  }
}

// ValidatePodDisruptionBudgetStatusUpdate (policy/v1).
void validateStatus(const json::Value& obj, FieldErrors& errs) {
  const json::Value* st = json::find(obj, "status");
  if (!st || !st->IsObject()) return;
  validateMetaConditions(json::find(*st, "conditions"), "status.conditions", errs);
  for (const char* f : kCounts)
    if (auto v = json::getInt(*st, f); v && *v < 0)
      errs.invalid(std::string("status.") + f, std::to_string(*v), "must be greater than or equal to 0");
}

std::string budgetCell(const json::Value& obj, const char* field) {
  const json::Value* v = json::findPath(obj, {"spec", field});
  return v && !v->IsNull() ? intOrStringRepr(*v) : "N/A";
}

class PodDisruptionBudgetStrategy final : public Strategy {
 public:
  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    json::set(obj, "status", json::Value(rapidjson::kObjectType), obj.GetAllocator());
  }
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    json::Value& st = json::ensureObject(obj, "status", a);
    for (const char* f : kCounts)
      if (!json::find(st, f)) json::set(st, f, json::Value(0), a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override { validateSpec(obj, errs); }
  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validateSpec(obj, errs);
    const json::Value* st = json::find(obj, "status");
    const json::Value* ost = json::find(old, "status");
    if ((st == nullptr) != (ost == nullptr) || (st && *st != *ost)) validateStatus(obj, errs);
  }
  std::vector<TableColumn> tableColumns() const override {
    return {
        {"Name", "string", "name", "Name must be unique within a namespace.", 0},
        {"Min Available", "string", "", "Selected pods that must stay available through an eviction.", 0},
        {"Max Unavailable", "string", "", "Selected pods that may be unavailable after an eviction.", 0},
        {"Allowed Disruptions", "integer", "", "Number of pod disruptions that are currently allowed.", 0},
        {"Age", "string", "", "Time since the budget was created.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(budgetCell(obj, "minAvailable"), a), a);
    cells.PushBack(json::str(budgetCell(obj, "maxUnavailable"), a), a);
    const json::Value* st = json::find(obj, "status");
    cells.PushBack(json::Value(st ? json::getInt(*st, "disruptionsAllowed").value_or(0) : 0), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> podDisruptionBudgetStrategy() {
  return std::make_shared<PodDisruptionBudgetStrategy>();
}

}  // namespace shepherd::apis::kinds
