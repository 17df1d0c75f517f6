// ReplicationController (core/v1): a map selector that defaults to the template labels.
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"

namespace shepherd::apis::kinds {

namespace {

class ReplicationControllerStrategy final : public Strategy {
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
    const json::Value* tl = json::findPath(spec, {"template", "metadata", "labels"});
    if (tl && tl->IsObject()) {
      const json::Value* sel = json::find(spec, "selector");
      if (!sel || !sel->IsObject() || sel->MemberCount() == 0)
        json::set(spec, "selector", json::Value(*tl, a), a);
      json::Value& meta = json::ensureObject(obj, "metadata", a);
      const json::Value* labels = json::find(meta, "labels");
      if (!labels || !labels->IsObject() || labels->MemberCount() == 0)
        json::set(meta, "labels", json::Value(*tl, a), a);
    }
    if (json::Value* ps = json::findPath(spec, {"template", "spec"})) defaultPodSpec(*ps, a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    static const json::Value empty(rapidjson::kObjectType);
    const json::Value* specp = json::find(obj, "spec");
    const json::Value& spec = specp && specp->IsObject() ? *specp : empty;
    if (auto m = json::getInt(spec, "minReadySeconds"); m && *m < 0)
      errs.invalid("spec.minReadySeconds", std::to_string(*m), "must be greater than or equal to 0");
    const json::Value* selector = json::find(spec, "selector");
    bool hasSelector = selector && selector->IsObject() && selector->MemberCount() > 0;
    if (!hasSelector) errs.required("spec.selector");
    if (auto r = json::getInt(spec, "replicas"); r && *r < 0)
      errs.invalid("spec.replicas", std::to_string(*r), "must be greater than or equal to 0");
    const json::Value* tmpl = json::find(spec, "template");
    if (!tmpl || !tmpl->IsObject()) {
      errs.required("spec.template");
      return;
    }
    const json::Value* labels = json::findPath(*tmpl, {"metadata", "labels"});
    if (hasSelector) {
      bool matches = true;
      for (auto& m : selector->GetObject()) {
        const json::Value* v =
            labels && labels->IsObject() ? json::find(*labels, json::view(m.name)) : nullptr;
        if (!v || *v != m.value) matches = false;
      }
      if (!matches)
        errs.invalid("spec.template.metadata.labels", labelMapRepr(labels),
                     "`selector` does not match template `labels`");
    }
    validatePodTemplate(*tmpl, "spec.template", errs);
    const json::Value* ps = json::find(*tmpl, "spec");
    std::string_view rp = ps ? json::getString(*ps, "restartPolicy") : "";
    if (rp != "Always") errs.notSupported("spec.template.spec.restartPolicy", std::string(rp), {"Always"});
    if (ps && json::find(*ps, "activeDeadlineSeconds"))
      errs.forbidden("spec.template.spec.activeDeadlineSeconds",
                     "activeDeadlineSeconds in ReplicationController is not Supported");
  }

  // core/v1 keeps an RC's pods on a DELETE without a policy (upstream, for compatibility).
  bool orphansDependentsByDefault() const override { return true; }

  std::vector<std::string> selectableFieldNames() const override { return {"status.replicas"}; }
  void selectableFields(const json::Value& obj, meta::StringPairs& out) const override {
    const json::Value* st = json::find(obj, "status");
    out.emplace_back("status.replicas", std::to_string(st ? json::getInt(*st, "replicas").value_or(0) : 0));
  }

  std::vector<TableColumn> tableColumns() const override { return replicaTableColumns(); }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    replicaTableRow(obj, formatLabels(json::findPath(obj, {"spec", "selector"})), cells, a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> replicationControllerStrategy() {
  return std::make_shared<ReplicationControllerStrategy>();
}

}  // namespace shepherd::apis::kinds
