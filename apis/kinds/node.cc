// Node: cluster-scoped; its status is written by its kubelet through nodes/status.
#include <algorithm>

#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"

namespace shepherd::apis::kinds {

namespace {

class NodeStrategy final : public Strategy {
 public:
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    if (const json::Value* taints = json::findPath(obj, {"spec", "taints"}); taints && taints->IsArray()) {
      for (rapidjson::SizeType i = 0; i < taints->Size(); ++i) {
        std::string p = "spec.taints[" + std::to_string(i) + "]";
        const json::Value& t = (*taints)[i];
        if (json::getString(t, "key").empty()) errs.required(p + ".key");
        std::string_view eff = json::getString(t, "effect");
        if (eff.empty())
          errs.required(p + ".effect");
        else if (eff != "NoSchedule" && eff != "PreferNoSchedule" && eff != "NoExecute")
          errs.notSupported(p + ".effect", std::string(eff), {"NoSchedule", "PreferNoSchedule", "NoExecute"});
      }
    }
  }

  std::vector<std::string> selectableFieldNames() const override { return {"spec.unschedulable"}; }
  void selectableFields(const json::Value& obj, meta::StringPairs& out) const override {
    const json::Value* u = json::findPath(obj, {"spec", "unschedulable"});
    out.emplace_back("spec.unschedulable", u && u->IsBool() && u->GetBool() ? "true" : "false");
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Status", "string", "", "The status of the node", 0},
            {"Roles", "string", "", "The roles of the node", 0},
            {"Age", "string", "", "Time since the node was created.", 0},
            {"Version", "string", "", "Kubelet Version reported by the node.", 0},
            {"Internal-IP", "string", "", "List of internal IPs for the node.", 1},
            {"External-IP", "string", "", "List of external IPs for the node.", 1},
            {"OS-Image", "string", "", "OS image reported by the node.", 1},
            {"Kernel-Version", "string", "", "Kernel version reported by the node.", 1},
            {"Container-Runtime", "string", "", "Container runtime reported by the node.", 1}};
  }

  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    std::string status;
    if (const json::Value* conds = json::findPath(obj, {"status", "conditions"}); conds && conds->IsArray())
      for (auto& c : conds->GetArray())
        if (json::getString(c, "type") == "Ready")
          status = json::getString(c, "status") == "True" ? "Ready" : "NotReady";
    if (status.empty()) status = "Unknown";
    const json::Value* u = json::findPath(obj, {"spec", "unschedulable"});
    if (u && u->IsBool() && u->GetBool()) status += ",SchedulingDisabled";

    std::vector<std::string> roles;
    if (const json::Value* labels = json::findPath(obj, {"metadata", "labels"}); labels && labels->IsObject())
      for (auto& m : labels->GetObject()) {
        std::string_view k = json::view(m.name);
        if (k.rfind("node-role.kubernetes.io/", 0) == 0) {
          std::string r(k.substr(24));
          if (!r.empty()) roles.push_back(r);
        } else if (k == "kubernetes.io/role" && m.value.IsString() && m.value.GetStringLength()) {
          roles.emplace_back(json::view(m.value));
        }
      }
    std::sort(roles.begin(), roles.end());
    std::string rolesStr;
    for (auto& r : roles) rolesStr += (rolesStr.empty() ? "" : ",") + r;
    if (rolesStr.empty()) rolesStr = "<none>";

    auto address = [&](std::string_view type) {
      if (const json::Value* as = json::findPath(obj, {"status", "addresses"}); as && as->IsArray())
        for (auto& ad : as->GetArray())
          if (json::getString(ad, "type") == type) return std::string(json::getString(ad, "address"));
      return std::string("<none>");
    };
    auto info = [&](std::string_view k) {
      std::string_view v = json::getStringPath(obj, {"status", "nodeInfo", k});
      return v.empty() ? std::string("<unknown>") : std::string(v);
    };
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(status, a), a);
    cells.PushBack(json::str(rolesStr, a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    cells.PushBack(json::str(json::getStringPath(obj, {"status", "nodeInfo", "kubeletVersion"}), a), a);
    cells.PushBack(json::str(address("InternalIP"), a), a);
    cells.PushBack(json::str(address("ExternalIP"), a), a);
    cells.PushBack(json::str(info("osImage"), a), a);
    cells.PushBack(json::str(info("kernelVersion"), a), a);
    cells.PushBack(json::str(info("containerRuntimeVersion"), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> nodeStrategy() {
  return std::make_shared<NodeStrategy>();
}

}  // namespace shepherd::apis::kinds
