// RoleBinding and ClusterRoleBinding (rbac.authorization.k8s.io/v1): who gets a role.
// roleRef is immutable; subjects are users, groups (apiGroup rbac.authorization.k8s.io)
// or service accounts (apiGroup "", namespaced), as upstream validates them.
#include "apis/kinds/kinds.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

constexpr const char* kRbacGroup = "rbac.authorization.k8s.io";

class BindingStrategy final : public Strategy {
 public:
  explicit BindingStrategy(bool cluster) : cluster_(cluster) {}
  NameRule nameRule() const override { return NameRule::PathSegment; }

  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    if (json::Value* ref = json::find(obj, "roleRef");
        ref && ref->IsObject() && json::getString(*ref, "apiGroup").empty())
      json::setString(*ref, "apiGroup", kRbacGroup, a);
    if (json::Value* subjects = json::find(obj, "subjects"); subjects && subjects->IsArray())
      for (auto& s : subjects->GetArray()) {
        if (!s.IsObject() || !json::getString(s, "apiGroup").empty()) continue;
        std::string_view kind = json::getString(s, "kind");
        if (kind == "User" || kind == "Group") json::setString(s, "apiGroup", kRbacGroup, a);
        if (kind == "ServiceAccount") json::setString(s, "apiGroup", "", a);
      }
  }

  void validate(const json::Value& obj, FieldErrors& errs) const override {
    const json::Value* ref = json::find(obj, "roleRef");
    std::string group(ref ? json::getString(*ref, "apiGroup") : "");
    std::string kind(ref ? json::getString(*ref, "kind") : "");
    std::string name(ref ? json::getString(*ref, "name") : "");
    if (group != kRbacGroup) errs.notSupported("roleRef.apiGroup", group, {kRbacGroup});
    if (cluster_ && kind != "ClusterRole")
      errs.notSupported("roleRef.kind", kind, {"ClusterRole"});
    else if (!cluster_ && kind != "Role" && kind != "ClusterRole")
      errs.notSupported("roleRef.kind", kind, {"ClusterRole", "Role"});
    if (name.empty())
      errs.required("roleRef.name");
    else
      for (auto& m : meta::validation::pathSegmentName(name))
        errs.invalid("roleRef.name", meta::validation::quote(name), m);
    const json::Value* subjects = json::find(obj, "subjects");
    if (!subjects || !subjects->IsArray()) return;
    for (rapidjson::SizeType i = 0; i < subjects->Size(); ++i) {
      const json::Value& s = (*subjects)[i];
      std::string at = "subjects[" + std::to_string(i) + "]";
      std::string sname(json::getString(s, "name")), skind(json::getString(s, "kind"));
      std::string sgroup(json::getString(s, "apiGroup"));
      if (sname.empty()) errs.required(at + ".name");
      if (skind == "ServiceAccount") {
        if (!sname.empty())
          for (auto& m : meta::validation::dns1123Subdomain(sname))
            errs.invalid(at + ".name", meta::validation::quote(sname), m);
        if (!sgroup.empty()) errs.notSupported(at + ".apiGroup", sgroup, {""});
        if (cluster_ && json::getString(s, "namespace").empty()) errs.required(at + ".namespace");
      } else if (skind == "User" || skind == "Group") {
        if (sgroup != kRbacGroup) errs.notSupported(at + ".apiGroup", sgroup, {kRbacGroup});
      } else {
        errs.notSupported(at + ".kind", skind, {"ServiceAccount", "User", "Group"});
      }
    }
  }

  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validate(obj, errs);
    const json::Value* now = json::find(obj, "roleRef");
    const json::Value* was = json::find(old, "roleRef");
    if (now && was && *now != *was) errs.invalid("roleRef", json::serialize(*now), "cannot change roleRef");
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Role", "string", "", "Role of the binding.", 0},
            {"Age", "string", "", "Time since the binding was created.", 0},
            {"Users", "string", "", "Users in the binding.", 1},
            {"Groups", "string", "", "Groups in the binding.", 1},
            {"ServiceAccounts", "string", "", "ServiceAccounts in the binding.", 1}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    std::string users, groups, sas;
    auto append = [](std::string& list, std::string_view item) {
      list += (list.empty() ? "" : ", ") + std::string(item);
    };
    if (const json::Value* subjects = json::find(obj, "subjects"); subjects && subjects->IsArray())
      for (auto& s : subjects->GetArray()) {
        std::string_view kind = json::getString(s, "kind");
        if (kind == "User") append(users, json::getString(s, "name"));
        if (kind == "Group") append(groups, json::getString(s, "name"));
        if (kind == "ServiceAccount")
          append(sas, std::string(json::getString(s, "namespace")) + "/" +
                          std::string(json::getString(s, "name")));
      }
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(std::string(json::getStringPath(obj, {"roleRef", "kind"})) + "/" +
                                 std::string(json::getStringPath(obj, {"roleRef", "name"})),
                             a),
                   a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    cells.PushBack(json::str(users, a), a);
    cells.PushBack(json::str(groups, a), a);
    cells.PushBack(json::str(sas, a), a);
  }

 private:
  bool cluster_;
};

}  // namespace

std::shared_ptr<const Strategy> roleBindingStrategy() {
  return std::make_shared<BindingStrategy>(false);
}
std::shared_ptr<const Strategy> clusterRoleBindingStrategy() {
  return std::make_shared<BindingStrategy>(true);
}

}  // namespace shepherd::apis::kinds
