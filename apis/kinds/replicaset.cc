// ReplicaSet (apps/v1): an immutable LabelSelector that must select the template.
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"

namespace shepherd::apis::kinds {

namespace {

class ReplicaSetStrategy final : public Strategy {
 public:
  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    auto& a = obj.GetAllocator();
    json::Value status(rapidjson::kObjectType);
    status.AddMember("replicas", 0, a);
    json::set(obj, "status", std::move(status), a);
  }
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    json::Value& spec = json::ensureObject(obj, "spec", a);
    if (!json::find(spec, "replicas")) json::set(spec, "replicas", json::Value(1), a);
    if (json::Value* ps = json::findPath(spec, {"template", "spec"})) defaultPodSpec(*ps, a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    static const json::Value empty(rapidjson::kObjectType);
    const json::Value* specp = json::find(obj, "spec");
    const json::Value& spec = specp && specp->IsObject() ? *specp : empty;
    if (auto r = json::getInt(spec, "replicas"); r && *r < 0)
      errs.invalid("spec.replicas", std::to_string(*r), "must be greater than or equal to 0");
    if (auto m = json::getInt(spec, "minReadySeconds"); m && *m < 0)
      errs.invalid("spec.minReadySeconds", std::to_string(*m), "must be greater than or equal to 0");
    validateSelectorAndTemplate(spec, "ReplicaSet", errs);
  }

  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validate(obj, errs);
    const json::Value* a = json::findPath(obj, {"spec", "selector"});
    const json::Value* b = json::findPath(old, {"spec", "selector"});
    if (a && b && *a != *b) errs.invalid("spec.selector", labelSelectorRepr(a), "field is immutable");
  }

  std::vector<std::string> selectableFieldNames() const override { return {"status.replicas"}; }
  void selectableFields(const json::Value& obj, meta::StringPairs& out) const override {
    const json::Value* st = json::find(obj, "status");
    out.emplace_back("status.replicas", std::to_string(st ? json::getInt(*st, "replicas").value_or(0) : 0));
  }

  std::vector<TableColumn> tableColumns() const override { return replicaTableColumns(); }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    replicaTableRow(obj, formatLabelSelector(json::findPath(obj, {"spec", "selector"})), cells, a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> replicaSetStrategy() {
  return std::make_shared<ReplicaSetStrategy>();
}

}  // namespace shepherd::apis::kinds
