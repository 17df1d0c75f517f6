// PriorityClass (scheduling.k8s.io/v1, cluster-scoped): a name for a pod priority. Values
// above one billion, and names starting "system-", belong to the two system classes the
// API server creates; value and preemptionPolicy never change.
#include "apis/kinds/kinds.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

constexpr int64_t kHighestUserDefinablePriority = 1000000000;

void validatePreemptionPolicy(const json::Value& obj, FieldErrors& errs) {
  const json::Value* p = json::find(obj, "preemptionPolicy");
  if (!p || p->IsNull()) return;
  std::string_view v = json::view(*p);
  if (v != "PreemptLowerPriority" && v != "Never")
    errs.notSupported("preemptionPolicy", std::string(v), {"Never", "PreemptLowerPriority"});
}

class PriorityClassStrategy final : public Strategy {
 public:
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    if (!json::find(obj, "preemptionPolicy"))
      json::setString(obj, "preemptionPolicy", "PreemptLowerPriority", a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    std::string name(json::getStringPath(obj, {"metadata", "name"}));
    int64_t value = json::getInt(obj, "value").value_or(0);
    if (name.rfind("system-", 0) == 0) {
      std::string why;
      if (const SystemPriorityClass* s = systemPriorityClass(name)) {
        if (s->value != value)
          why = "value of " + name + " PriorityClass must be " + std::to_string(s->value);
        else if (json::getBool(obj, "globalDefault"))
          why = "globalDefault of " + name + " PriorityClass must be false";
      } else {
        why = name + " is not a known system priority class";
      }
      if (!why.empty())
        errs.forbidden(
            "metadata.name",
            "priority class names with 'system-' prefix are reserved for system use only. error: " + why);
    } else if (value > kHighestUserDefinablePriority) {
      errs.forbidden("value", "maximum allowed value of a user defined priority is " +
                                  std::to_string(kHighestUserDefinablePriority));
    }
    validatePreemptionPolicy(obj, errs);
  }
  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    if (json::getInt(obj, "value") != json::getInt(old, "value"))
      errs.forbidden("value", "may not be changed in an update.");
    std::string_view p = json::getString(obj, "preemptionPolicy");
    if (p != json::getString(old, "preemptionPolicy"))
      errs.invalid("preemptionPolicy", meta::validation::quote(p), "field is immutable");
    validatePreemptionPolicy(obj, errs);
  }
  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Value", "integer", "", "The priority pods of this class receive.", 0},
            {"Global-Default", "boolean", "", "Whether pods naming no class get this one.", 0},
            {"Age", "string", "", "Time since the class was created.", 0},
            {"PreemptionPolicy", "string", "", "Whether pods of this class may preempt lower ones.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::Value(json::getInt(obj, "value").value_or(0)), a);
    cells.PushBack(json::Value(json::getBool(obj, "globalDefault")), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    cells.PushBack(json::str(json::getString(obj, "preemptionPolicy"), a), a);
  }
};

}  // namespace

const std::vector<SystemPriorityClass>& systemPriorityClasses() {
  static const std::vector<SystemPriorityClass> all = {
      {"system-node-critical", 2000001000,
       "Used for system critical pods that must not be moved from their current node."},
      {"system-cluster-critical", 2000000000,
       "Used for system critical pods that must run in the cluster, but can be moved to another node if "
       "necessary."}};
  return all;
}

const SystemPriorityClass* systemPriorityClass(const std::string& name) {
  for (const auto& s : systemPriorityClasses())
    if (s.name == name) return &s;
  return nullptr;
}

std::shared_ptr<const Strategy> priorityClassStrategy() {
  return std::make_shared<PriorityClassStrategy>();
}

}  // namespace shepherd::apis::kinds
