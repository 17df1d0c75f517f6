// Deployment (apps/v1): RollingUpdate 25%/25% by default, history limit 10, progress
// deadline 600 s, immutable selector.
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "apis/kinds/rollout_checks.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

void setIfMissing(json::Value& obj, std::string_view key, json::Value v, json::Allocator& a) {
  const json::Value* cur = json::find(obj, key);
  if (!cur || cur->IsNull()) json::set(obj, key, std::move(v), a);
}

void validateStrategy(const json::Value* strategy, FieldErrors& errs) {
  std::string_view type = strategy ? json::getString(*strategy, "type") : "";
  const json::Value* ru = strategy ? json::find(*strategy, "rollingUpdate") : nullptr;
  if (ru && ru->IsNull()) ru = nullptr;
  if (type == "Recreate") {
    if (ru)
      errs.forbidden("spec.strategy.rollingUpdate",
                     "may not be specified when strategy `type` is 'Recreate'");
  } else if (type == "RollingUpdate") {
    if (!ru) {
      errs.required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil");
      return;
    }
    static const json::Value zero(0);
    const json::Value* mu = json::find(*ru, "maxUnavailable");
    const json::Value* ms = json::find(*ru, "maxSurge");
    validatePositiveIntOrPercent(mu, "spec.strategy.rollingUpdate.maxUnavailable", errs);
    validatePositiveIntOrPercent(ms, "spec.strategy.rollingUpdate.maxSurge", errs);
    if (intOrPercentValue(mu ? *mu : zero) == 0 && intOrPercentValue(ms ? *ms : zero) == 0)
      errs.invalid("spec.strategy.rollingUpdate.maxUnavailable", intOrStringRepr(mu ? *mu : zero),
                   "may not be 0 when `maxSurge` is 0");
    if (auto p = mu ? percent(*mu) : std::nullopt; p && *p > 100)
      errs.invalid("spec.strategy.rollingUpdate.maxUnavailable", intOrStringRepr(*mu),
                   "must not be greater than 100%");
  } else {
    // Upstream prints the whole strategy struct.
    errs.notSupported("spec.strategy", "", {"Recreate", "RollingUpdate"});
    auto& c = errs.causes().back();
    c.message = "Unsupported value: apps.DeploymentStrategy{Type:" + meta::validation::quote(type) +
                ", RollingUpdate:(*apps.RollingUpdateDeployment)(" + (ru ? "0xc000000000" : "nil") +
                ")}: supported values: \"Recreate\", \"RollingUpdate\"";
  }
}

class DeploymentStrategy final : public Strategy {
 public:
  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    auto& a = obj.GetAllocator();
    json::set(obj, "status", json::Value(rapidjson::kObjectType), a);
  }
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    json::Value& spec = json::ensureObject(obj, "spec", a);
    setIfMissing(spec, "replicas", json::Value(1), a);
    setIfMissing(spec, "revisionHistoryLimit", json::Value(10), a);
    setIfMissing(spec, "progressDeadlineSeconds", json::Value(600), a);
    json::Value& strategy = json::ensureObject(spec, "strategy", a);
    if (json::getString(strategy, "type").empty()) json::setString(strategy, "type", "RollingUpdate", a);
    if (json::getString(strategy, "type") == "RollingUpdate") {
      json::Value& ru = json::ensureObject(strategy, "rollingUpdate", a);
      setIfMissing(ru, "maxUnavailable", json::str("25%", a), a);
      setIfMissing(ru, "maxSurge", json::str("25%", a), a);
    }
    if (json::Value* ps = json::findPath(spec, {"template", "spec"})) defaultPodSpec(*ps, a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    static const json::Value empty(rapidjson::kObjectType);
    const json::Value* specp = json::find(obj, "spec");
    const json::Value& spec = specp && specp->IsObject() ? *specp : empty;
    if (auto r = json::getInt(spec, "replicas"); r && *r < 0)
      errs.invalid("spec.replicas", std::to_string(*r), "must be greater than or equal to 0");
    validateSelectorAndTemplate(spec, "ReplicaSet", errs);
    validateStrategy(json::find(spec, "strategy"), errs);
    int64_t minReady = json::getInt(spec, "minReadySeconds").value_or(0);
    if (minReady < 0)
      errs.invalid("spec.minReadySeconds", std::to_string(minReady), "must be greater than or equal to 0");
    if (auto h = json::getInt(spec, "revisionHistoryLimit"); h && *h < 0)
      errs.invalid("spec.revisionHistoryLimit", std::to_string(*h), "must be greater than or equal to 0");
    if (auto pd = json::getInt(spec, "progressDeadlineSeconds")) {
      if (*pd < 0)
        errs.invalid("spec.progressDeadlineSeconds", std::to_string(*pd),
                     "must be greater than or equal to 0");
      if (*pd <= minReady)
        errs.invalid("spec.progressDeadlineSeconds", std::to_string(*pd),
                     "must be greater than minReadySeconds");
    }
  }

  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validate(obj, errs);
    const json::Value* a = json::findPath(obj, {"spec", "selector"});
    const json::Value* b = json::findPath(old, {"spec", "selector"});
    if (a && b && *a != *b) errs.invalid("spec.selector", labelSelectorRepr(a), "field is immutable");
  }

  std::vector<TableColumn> tableColumns() const override {
    std::vector<TableColumn> cols = {
        {"Name", "string", "name", "Name must be unique within a namespace.", 0},
        {"Ready", "string", "", "Number of the pod with ready state", 0},
        {"Up-to-date", "string", "",
         "Total number of non-terminated pods targeted by this deployment that have the desired template "
         "spec.",
         0},
        {"Available", "string", "",
         "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
         0},
        {"Age", "string", "", "Time since the deployment was created.", 0}};
    for (auto& c : templateWideColumns()) cols.push_back(c);
    return cols;
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    static const json::Value empty(rapidjson::kObjectType);
    const json::Value* spec = json::find(obj, "spec");
    if (!spec) spec = &empty;
    const json::Value* status = json::find(obj, "status");
    if (!status) status = &empty;
    std::string ready = std::to_string(json::getInt(*status, "readyReplicas").value_or(0)) + "/" +
                        std::to_string(json::getInt(*spec, "replicas").value_or(0));
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(ready, a), a);
    cells.PushBack(json::Value(json::getInt(*status, "updatedReplicas").value_or(0)), a);
    cells.PushBack(json::Value(json::getInt(*status, "availableReplicas").value_or(0)), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    templateWideCells(obj, formatLabelSelector(json::find(*spec, "selector")), cells, a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> deploymentStrategy() {
  return std::make_shared<DeploymentStrategy>();
}

}  // namespace shepherd::apis::kinds
