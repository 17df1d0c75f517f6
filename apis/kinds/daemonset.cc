// DaemonSet (apps/v1): RollingUpdate with maxUnavailable 1 and maxSurge 0 by default,
// history limit 10, an immutable non-empty selector that selects the template, and the
// template generation kept in the deprecated.daemonset.template.generation annotation
// (bumped with every template change, as upstream's internal templateGeneration).
#include <algorithm>
#include <cstdlib>

#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "apis/kinds/rollout_checks.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

constexpr const char* kTemplateGeneration = "deprecated.daemonset.template.generation";

const json::Value& objectOr(const json::Value* v) {
  static const json::Value empty(rapidjson::kObjectType);
  return v && v->IsObject() ? *v : empty;
}

int64_t templateGeneration(const json::Value& obj) {
  std::string_view g = json::getStringPath(obj, {"metadata", "annotations", kTemplateGeneration});
  return g.empty() ? 0 : std::atoll(std::string(g).c_str());
}

void setTemplateGeneration(json::Document& obj, int64_t g) {
  auto& a = obj.GetAllocator();
  json::Value& ann = json::ensureObject(json::ensureObject(obj, "metadata", a), "annotations", a);
  json::setString(ann, kTemplateGeneration, std::to_string(g), a);
}

void validateUpdateStrategy(const json::Value& spec, FieldErrors& errs) {
  const json::Value& strategy = objectOr(json::find(spec, "updateStrategy"));
  std::string_view type = json::getString(strategy, "type");
  if (type == "OnDelete") return;
  if (type != "RollingUpdate") {
    errs.notSupported("spec.updateStrategy", std::string(type), {"RollingUpdate", "OnDelete"});
    return;
  }
  const json::Value* ru = json::find(strategy, "rollingUpdate");
  if (!ru || !ru->IsObject()) {
    errs.required("spec.updateStrategy.rollingUpdate");
    return;
  }
  const std::string at = "spec.updateStrategy.rollingUpdate.";
  const json::Value* mu = json::find(*ru, "maxUnavailable");
  const json::Value* ms = json::find(*ru, "maxSurge");
  validatePositiveIntOrPercent(mu, at + "maxUnavailable", errs);
  validatePositiveIntOrPercent(ms, at + "maxSurge", errs);
  validateNotMoreThan100Percent(mu, at + "maxUnavailable", errs);
  validateNotMoreThan100Percent(ms, at + "maxSurge", errs);
  static const json::Value zero(0);
  bool unavailable = intOrPercentValue(mu ? *mu : zero) != 0, surge = intOrPercentValue(ms ? *ms : zero) != 0;
  if (unavailable && surge)
    errs.invalid(at + "maxSurge", intOrStringRepr(*ms), "may not be set when maxUnavailable is non-zero");
  else if (!unavailable && !surge)
    errs.required(at + "maxUnavailable", "cannot be 0 when maxSurge is 0");
}

void validateSpec(const json::Value& obj, FieldErrors& errs) {
  const json::Value& spec = objectOr(json::find(obj, "spec"));
  const json::Value* selector = json::find(spec, "selector");
  if (!selector || !selector->IsObject()) {
    errs.required("spec.selector");
  } else {
    validateLabelSelector(*selector, "spec.selector", errs);
    const json::Value* labels = json::findPath(spec, {"template", "metadata", "labels"});
    if (selectorConverts(*selector) && !selectorMatches(*selector, labels))
      errs.invalid("spec.template.metadata.labels", labelMapRepr(labels),
                   "`selector` does not match template `labels`");
    const json::Value* ml = json::find(*selector, "matchLabels");
    const json::Value* me = json::find(*selector, "matchExpressions");
    if ((ml && ml->IsObject() ? ml->MemberCount() : 0) + (me && me->IsArray() ? me->Size() : 0) == 0)
      errs.invalid("spec.selector", labelSelectorRepr(selector), "empty selector is invalid for daemonset");
  }
  const json::Value& tmpl = objectOr(json::find(spec, "template"));
  validatePodTemplate(tmpl, "spec.template", errs);
  const json::Value& ps = objectOr(json::find(tmpl, "spec"));
  std::string_view rp = json::getString(ps, "restartPolicy");
  if (rp != "Always") errs.notSupported("spec.template.spec.restartPolicy", std::string(rp), {"Always"});
  if (auto ads = json::getInt(ps, "activeDeadlineSeconds"))
    errs.invalid("spec.template.spec.activeDeadlineSeconds", std::to_string(*ads),
                 "activeDeadlineSeconds in DaemonSet is not Supported");
  for (const char* f : {"minReadySeconds", "revisionHistoryLimit"})
    if (auto v = json::getInt(spec, f); v && *v < 0)
      errs.invalid(std::string("spec.") + f, std::to_string(*v), "must be greater than or equal to 0");
  validateUpdateStrategy(spec, errs);
}

class DaemonSetStrategy final : public Strategy {
 public:
  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    json::set(obj, "status", json::Value(rapidjson::kObjectType), obj.GetAllocator());
    if (templateGeneration(obj) < 1) setTemplateGeneration(obj, 1);
  }
  // DaemonSetStatus serializes these counters even when zero (no omitempty upstream).
  static void defaultStatus(json::Value& obj, json::Allocator& a) {
    json::Value& st = json::ensureObject(obj, "status", a);
    for (const char* f :
         {"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady"})
      if (!json::find(st, f)) json::set(st, f, json::Value(0), a);
  }
  void prepareForUpdate(json::Document& obj, const json::Value& old, const StrategyContext&) const override {
    // The template's generation moves with the template and with nothing else.
    int64_t g = std::max<int64_t>(templateGeneration(old), 1);
    const json::Value* t = json::findPath(obj, {"spec", "template"});
    const json::Value* ot = json::findPath(old, {"spec", "template"});
    if ((t == nullptr) != (ot == nullptr) || (t && *t != *ot)) ++g;
    setTemplateGeneration(obj, g);
  }
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    json::Value& spec = json::ensureObject(obj, "spec", a);
    json::Value& strategy = json::ensureObject(spec, "updateStrategy", a);
    if (json::getString(strategy, "type").empty()) json::setString(strategy, "type", "RollingUpdate", a);
    if (json::getString(strategy, "type") == "RollingUpdate") {
      json::Value& ru = json::ensureObject(strategy, "rollingUpdate", a);
      if (!json::find(ru, "maxUnavailable")) json::set(ru, "maxUnavailable", json::Value(1), a);
      if (!json::find(ru, "maxSurge")) json::set(ru, "maxSurge", json::Value(0), a);
    }
    if (!json::find(spec, "revisionHistoryLimit"))
      json::set(spec, "revisionHistoryLimit", json::Value(10), a);
    if (json::Value* ps = json::findPath(spec, {"template", "spec"})) defaultPodSpec(*ps, a);
    defaultStatus(obj, a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override { validateSpec(obj, errs); }
  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validateSpec(obj, errs);
    const json::Value* a = json::findPath(obj, {"spec", "selector"});
    const json::Value* b = json::findPath(old, {"spec", "selector"});
    if (a && b && *a != *b) errs.invalid("spec.selector", labelSelectorRepr(a), "field is immutable");
  }

  std::vector<TableColumn> tableColumns() const override {
    std::vector<TableColumn> cols = {
        {"Name", "string", "name", "Name must be unique within a namespace.", 0},
        {"Desired", "integer", "", "The total number of nodes that should be running the daemon pod.", 0},
        {"Current", "integer", "",
         "The number of nodes running at least one daemon pod and that are supposed to.", 0},
        {"Ready", "integer", "",
         "The number of nodes that should be running the daemon pod and have it ready.", 0},
        {"Up-to-date", "integer", "", "The total number of nodes that are running the updated daemon pod.",
         0},
        {"Available", "integer", "", "The number of nodes with the daemon pod available.", 0},
        {"Node Selector", "string", "", "The node labels a node must have to run the pod.", 0},
        {"Age", "string", "", "Time since the daemon set was created.", 0}};
    for (auto& c : templateWideColumns()) cols.push_back(c);
    return cols;
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    const json::Value& status = objectOr(json::find(obj, "status"));
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    for (const char* f : {"desiredNumberScheduled", "currentNumberScheduled", "numberReady",
                          "updatedNumberScheduled", "numberAvailable"})
      cells.PushBack(json::Value(json::getInt(status, f).value_or(0)), a);
    std::string ns = formatLabels(json::findPath(obj, {"spec", "template", "spec", "nodeSelector"}));
    cells.PushBack(json::str(ns, a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    templateWideCells(obj, formatLabelSelector(json::findPath(obj, {"spec", "selector"})), cells, a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> daemonSetStrategy() {
  return std::make_shared<DaemonSetStrategy>();
}

}  // namespace shepherd::apis::kinds
