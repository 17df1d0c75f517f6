// StatefulSet (apps/v1): OrderedReady, RollingUpdate (partition 0 only when the strategy
// type itself was defaulted), replicas 1, history limit 10, claim retention Retain/Retain;
// only replicas, ordinals, template, updateStrategy, persistentVolumeClaimRetentionPolicy
// and minReadySeconds may change. As upstream, neither the pod template's spec nor the
// claim templates are validated (the controller's creates report what is wrong).
#include "apis/kinds/job_checks.h"
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "apis/kinds/rollout_checks.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

const json::Value& objectOr(const json::Value* v) {
  static const json::Value empty(rapidjson::kObjectType);
  return v && v->IsObject() ? *v : empty;
}

void nonNegative(const json::Value& obj, const char* key, const std::string& field, FieldErrors& errs) {
  if (auto v = json::getInt(obj, key); v && *v < 0)
    errs.invalid(field, std::to_string(*v), "must be greater than or equal to 0");
}

void validateUpdateStrategy(const json::Value& spec, FieldErrors& errs) {
  const json::Value* strategy = json::find(spec, "updateStrategy");
  std::string_view type = strategy ? json::getString(*strategy, "type") : "";
  const json::Value* ru = strategy ? json::find(*strategy, "rollingUpdate") : nullptr;
  if (ru && ru->IsNull()) ru = nullptr;
  if (type.empty()) {
    errs.required("spec.updateStrategy");
  } else if (type == "OnDelete") {
    if (ru)
      errs.invalid("spec.updateStrategy.rollingUpdate", jsonRepr(*ru),
                   "only allowed for updateStrategy 'RollingUpdate'");
  } else if (type == "RollingUpdate") {
    if (ru) {
      nonNegative(*ru, "partition", "spec.updateStrategy.rollingUpdate.partition", errs);
      if (const json::Value* mu = json::find(*ru, "maxUnavailable"); mu && !mu->IsNull()) {
        const std::string f = "spec.updateStrategy.rollingUpdate.maxUnavailable";
        validatePositiveIntOrPercent(mu, f, errs);
        if (intOrPercentValue(*mu) == 0) errs.invalid(f, intOrStringRepr(*mu), "cannot be 0");
        validateNotMoreThan100Percent(mu, f, errs);
      }
    }
  } else {
    errs.invalid("spec.updateStrategy", jsonRepr(*strategy), "must be 'RollingUpdate' or 'OnDelete'");
  }
}

void validateSpec(const json::Value& spec, FieldErrors& errs) {
  std::string_view policy = json::getString(spec, "podManagementPolicy");
  if (policy.empty())
    errs.required("spec.podManagementPolicy");
  else if (policy != "OrderedReady" && policy != "Parallel")
    errs.invalid("spec.podManagementPolicy", meta::validation::quote(policy),
                 "must be 'OrderedReady' or 'Parallel'");
  validateUpdateStrategy(spec, errs);
  if (const json::Value* p = json::find(spec, "persistentVolumeClaimRetentionPolicy"); p && p->IsObject())
    for (const char* f : {"whenDeleted", "whenScaled"}) {
      std::string_view v = json::getString(*p, f);
      if (v != "Retain" && v != "Delete")
        errs.notSupported(std::string("spec.persistentVolumeClaimRetentionPolicy.") + f, std::string(v),
                          {"Retain", "Delete"});
    }
  nonNegative(spec, "replicas", "spec.replicas", errs);
  nonNegative(spec, "minReadySeconds", "spec.minReadySeconds", errs);
  if (const json::Value* o = json::find(spec, "ordinals"); o && o->IsObject())
    nonNegative(*o, "start", "spec.ordinals.start", errs);
  const json::Value* selector = json::find(spec, "selector");
  const json::Value& tmpl = objectOr(json::find(spec, "template"));
  if (!selector || !selector->IsObject()) {
    errs.required("spec.selector");
  } else {
    validateLabelSelector(*selector, "spec.selector", errs);
    const json::Value* ml = json::find(*selector, "matchLabels");
    const json::Value* me = json::find(*selector, "matchExpressions");
    size_t n = (ml && ml->IsObject() ? ml->MemberCount() : 0) + (me && me->IsArray() ? me->Size() : 0);
    if (n == 0)
      errs.invalid("spec.selector", labelSelectorRepr(selector), "empty selector is invalid for statefulset");
    if (!selectorConverts(*selector)) {
      errs.invalid("spec.selector", labelSelectorRepr(selector), "");
    } else {
      const json::Value* labels = json::findPath(tmpl, {"metadata", "labels"});
      if (n > 0 && !selectorMatches(*selector, labels))
        errs.invalid("spec.template.metadata.labels", labelMapRepr(labels),
                     "`selector` does not match template `labels`");
      // Upstream's paths here leave out `metadata`.
      validateLabelMap(labels, "spec.template.labels", errs);
      validateAnnotations(json::findPath(tmpl, {"metadata", "annotations"}), "spec.template.annotations",
                          errs);
    }
  }
  const json::Value& ps = objectOr(json::find(tmpl, "spec"));
  std::string_view rp = json::getString(ps, "restartPolicy");
  if (rp != "Always") errs.notSupported("spec.template.spec.restartPolicy", std::string(rp), {"Always"});
  if (json::find(ps, "activeDeadlineSeconds"))
    errs.forbidden("spec.template.spec.activeDeadlineSeconds",
                   "activeDeadlineSeconds in StatefulSet is not Supported");
}

class StatefulSetStrategy final : public Strategy {
 public:
  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    auto& a = obj.GetAllocator();
    json::Value status(rapidjson::kObjectType);
    status.AddMember("replicas", 0, a);
    status.AddMember("availableReplicas", 0, a);
    json::set(obj, "status", std::move(status), a);
    // maxUnavailable is behind a feature gate that is off by default (1.32): dropped.
    if (json::Value* ru = json::findPath(obj, {"spec", "updateStrategy", "rollingUpdate"});
        ru && ru->IsObject())
      json::remove(*ru, "maxUnavailable");
  }
  void prepareForUpdate(json::Document& obj, const json::Value& old, const StrategyContext&) const override {
    const json::Value* had =
        json::findPath(old, {"spec", "updateStrategy", "rollingUpdate", "maxUnavailable"});
    if (json::Value* ru = json::findPath(obj, {"spec", "updateStrategy", "rollingUpdate"});
        ru && ru->IsObject() && !had)
      json::remove(*ru, "maxUnavailable");
  }
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    json::Value& spec = json::ensureObject(obj, "spec", a);
    if (json::getString(spec, "podManagementPolicy").empty())
      json::setString(spec, "podManagementPolicy", "OrderedReady", a);
    json::Value& strategy = json::ensureObject(spec, "updateStrategy", a);
    if (json::getString(strategy, "type").empty()) {
      json::setString(strategy, "type", "RollingUpdate", a);
      json::Value* ru = json::find(strategy, "rollingUpdate");
      if (!ru || ru->IsNull()) json::set(strategy, "rollingUpdate", json::Value(rapidjson::kObjectType), a);
    }
    if (json::getString(strategy, "type") == "RollingUpdate")
      if (json::Value* ru = json::find(strategy, "rollingUpdate");
          ru && ru->IsObject() && !json::find(*ru, "partition"))
        json::set(*ru, "partition", json::Value(0), a);
    json::Value& retention = json::ensureObject(spec, "persistentVolumeClaimRetentionPolicy", a);
    for (const char* f : {"whenDeleted", "whenScaled"})
      if (json::getString(retention, f).empty()) json::setString(retention, f, "Retain", a);
    if (!json::find(spec, "replicas")) json::set(spec, "replicas", json::Value(1), a);
    if (!json::find(spec, "revisionHistoryLimit"))
      json::set(spec, "revisionHistoryLimit", json::Value(10), a);
    if (json::Value* ps = json::findPath(spec, {"template", "spec"})) defaultPodSpec(*ps, a);
    if (json::Value* claims = json::find(spec, "volumeClaimTemplates"); claims && claims->IsArray())
      for (auto& c : claims->GetArray()) {
        if (!c.IsObject()) continue;
        json::Value& cs = json::ensureObject(c, "spec", a);
        if (json::getString(cs, "volumeMode").empty()) json::setString(cs, "volumeMode", "Filesystem", a);
        json::Value& st = json::ensureObject(c, "status", a);
        if (json::getString(st, "phase").empty()) json::setString(st, "phase", "Pending", a);
      }
  }
  // Pod names and hostnames are <name>-<ordinal>.
  NameRule nameRule() const override { return NameRule::Label; }
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    validateSpec(objectOr(json::find(obj, "spec")), errs);
  }
  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    const json::Value& spec = objectOr(json::find(obj, "spec"));
    validateSpec(spec, errs);
    // Everything but these must stay as it was.
    json::Document a, b;
    a.CopyFrom(spec, a.GetAllocator());
    b.CopyFrom(objectOr(json::find(old, "spec")), b.GetAllocator());
    for (const char* f : {"replicas", "template", "updateStrategy", "minReadySeconds", "ordinals",
                          "persistentVolumeClaimRetentionPolicy"}) {
      json::remove(a, f);
      json::remove(b, f);
    }
    if (a != b)
      errs.forbidden(
          "spec",
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
          "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden");
    const json::Value* st = json::find(obj, "status");
    const json::Value* ost = json::find(old, "status");
    if (st && st->IsObject() && (!ost || *st != *ost)) {
      for (const char* f : {"replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
                            "availableReplicas", "observedGeneration", "collisionCount"})
        nonNegative(*st, f, std::string("status.") + f, errs);
      int64_t replicas = json::getInt(*st, "replicas").value_or(0);
      for (const char* f : {"readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"})
        if (auto v = json::getInt(*st, f); v && *v > replicas)
          errs.invalid(std::string("status.") + f, std::to_string(*v),
                       "cannot be greater than status.replicas");
      if (json::getInt(*st, "availableReplicas").value_or(0) > json::getInt(*st, "readyReplicas").value_or(0))
        errs.invalid("status.availableReplicas", std::to_string(*json::getInt(*st, "availableReplicas")),
                     "cannot be greater than status.readyReplicas");
      if (ost &&
          json::getInt(*st, "collisionCount").value_or(0) < json::getInt(*ost, "collisionCount").value_or(0))
        errs.invalid("status.collisionCount", std::to_string(json::getInt(*st, "collisionCount").value_or(0)),
                     "cannot be decremented");
    }
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Ready", "string", "", "Number of the pod with ready state", 0},
            {"Age", "string", "", "Time since the stateful set was created.", 0},
            {"Containers", "string", "", "Names of each container in the template.", 1},
            {"Images", "string", "", "Images referenced by each container in the template.", 1}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    const json::Value& spec = objectOr(json::find(obj, "spec"));
    const json::Value& status = objectOr(json::find(obj, "status"));
    std::string ready = std::to_string(json::getInt(status, "readyReplicas").value_or(0)) + "/" +
                        std::to_string(json::getInt(spec, "replicas").value_or(0));
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(ready, a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    const json::Value* ps = json::findPath(spec, {"template", "spec"});
    cells.PushBack(json::str(ps ? containerNames(*ps) : "", a), a);
    cells.PushBack(json::str(ps ? containerImages(*ps) : "", a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> statefulSetStrategy() {
  return std::make_shared<StatefulSetStrategy>();
}

}  // namespace shepherd::apis::kinds
