// Role and ClusterRole (rbac.authorization.k8s.io/v1): lists of policy rules, validated
// as upstream (verbs required; resource rules need groups and resources; non-resource
// URLs only in ClusterRoles and never mixed with resources).
#include "apis/kinds/kinds.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

bool nonEmptyArray(const json::Value& obj, std::string_view key) {
  const json::Value* v = json::find(obj, key);
  return v && v->IsArray() && !v->Empty();
}

class RoleStrategy final : public Strategy {
 public:
  explicit RoleStrategy(bool cluster) : cluster_(cluster) {}
  NameRule nameRule() const override { return NameRule::PathSegment; }

  void validate(const json::Value& obj, FieldErrors& errs) const override {
    if (const json::Value* rules = json::find(obj, "rules"); rules && rules->IsArray())
      for (rapidjson::SizeType i = 0; i < rules->Size(); ++i) {
        const json::Value& r = (*rules)[i];
        std::string at = "rules[" + std::to_string(i) + "]";
        if (!nonEmptyArray(r, "verbs")) errs.required(at + ".verbs", "verbs must contain at least one value");
        if (nonEmptyArray(r, "nonResourceURLs")) {
          std::string urls = json::serialize(*json::find(r, "nonResourceURLs"));
          if (!cluster_)
            errs.invalid(at + ".nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs");
          if (nonEmptyArray(r, "apiGroups") || nonEmptyArray(r, "resources") ||
              nonEmptyArray(r, "resourceNames"))
            errs.invalid(at + ".nonResourceURLs", urls,
                         "rules cannot apply to both regular resources and non-resource URLs");
          continue;
        }
        if (!nonEmptyArray(r, "apiGroups"))
          errs.required(at + ".apiGroups", "resource rules must supply at least one api group");
        if (!nonEmptyArray(r, "resources"))
          errs.required(at + ".resources", "resource rules must supply at least one resource");
      }
    if (const json::Value* agg = json::find(obj, "aggregationRule"); cluster_ && agg && agg->IsObject()) {
      const json::Value* sel = json::find(*agg, "clusterRoleSelectors");
      if (!sel || !sel->IsArray() || sel->Empty())
        errs.required("aggregationRule.clusterRoleSelectors",
                      "at least one clusterRoleSelector required if aggregationRule is non-nil");
    }
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Created At", "date", "", "Time when the role was created.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "creationTimestamp"}), a), a);
  }

 private:
  bool cluster_;
};

}  // namespace

std::shared_ptr<const Strategy> roleStrategy() {
  return std::make_shared<RoleStrategy>(false);
}
std::shared_ptr<const Strategy> clusterRoleStrategy() {
  return std::make_shared<RoleStrategy>(true);
}

}  // namespace shepherd::apis::kinds
