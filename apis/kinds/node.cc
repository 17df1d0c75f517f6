// Node: cluster-scoped; its status is written by its kubelet through nodes/status.
#include <algorithm>
#include <set>

#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

class NodeStrategy final : public Strategy {
 public:
  static void validateTaints(const json::Value& obj, FieldErrors& errs) {
    using meta::validation::quote;
    // Upstream builds the taint paths from the metadata path: metadata.taints[i].
    if (const json::Value* taints = json::findPath(obj, {"spec", "taints"}); taints && taints->IsArray()) {
      std::set<std::pair<std::string, std::string>> seen;
      for (rapidjson::SizeType i = 0; i < taints->Size(); ++i) {
        std::string p = "metadata.taints[" + std::to_string(i) + "]";
        const json::Value& t = (*taints)[i];
        std::string_view key = json::getString(t, "key"), value = json::getString(t, "value");
        for (auto& e : meta::validation::qualifiedName(key)) errs.invalid(p + ".key", quote(key), e);
        if (auto problems = meta::validation::labelValue(value); !problems.empty()) {
          std::string msg;
          for (size_t k = 0; k < problems.size(); ++k) msg += (k ? ";" : "") + problems[k];
          errs.invalid(p + ".value", quote(value), msg);
        }
        std::string_view eff = json::getString(t, "effect");
        if (eff.empty())
          errs.required(p + ".effect");
        else if (eff != "NoSchedule" && eff != "PreferNoSchedule" && eff != "NoExecute")
          errs.notSupported(p + ".effect", std::string(eff), {"NoSchedule", "PreferNoSchedule", "NoExecute"});
        if (!seen.insert({std::string(key), std::string(eff)}).second) {
          std::string added = json::find(t, "timeAdded") ? "(*v1.Time)(0xc000000000)" : "(*v1.Time)(nil)";
          errs.duplicate(p, "core.Taint{Key:" + quote(key) + ", Value:" + quote(value) +
                                ", Effect:" + quote(eff) + ", TimeAdded:" + added +
                                "}: taints must be unique by key and effect pair");
        }
      }
    }
  }

  void validate(const json::Value& obj, FieldErrors& errs) const override {
    using meta::validation::quote;
    validateTaints(obj, errs);
    if (const json::Value* cidrs = json::findPath(obj, {"spec", "podCIDRs"}); cidrs && cidrs->IsArray()) {
      std::vector<std::string> list;
      for (auto& c : cidrs->GetArray()) list.emplace_back(c.IsString() ? json::view(c) : "");
      for (size_t i = 0; i < list.size(); ++i)
        if (!meta::validation::isCIDR(list[i]))
          errs.invalid("spec.podCIDRs[" + std::to_string(i) + "]", quote(list[i]),
                       meta::validation::kInvalidCIDR);
      if (list.size() > 1) {
        auto family = [](const std::string& c) {
          return meta::validation::ipFamily(c.substr(0, c.find('/')));
        };
        if (list.size() > 2 || family(list[0]) == family(list[1])) {
          std::string repr = "[]string{";
          for (size_t i = 0; i < list.size(); ++i) repr += (i ? ", " : "") + quote(list[i]);
          errs.invalid("spec.podCIDRs", repr + "}", "may specify no more than one CIDR for each IP family");
        }
        for (size_t i = 1; i < list.size(); ++i)
          if (std::find(list.begin(), list.begin() + static_cast<long>(i), list[i]) !=
              list.begin() + static_cast<long>(i))
            errs.duplicate("spec.podCIDRs[" + std::to_string(i) + "]", quote(list[i]));
      }
    }
  }

  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    // ValidateNodeUpdate: no format checks of podCIDRs here, but they and providerID
    // may only go from unset to set.
    if (const json::Value* addrs = json::findPath(obj, {"status", "addresses"}); addrs && addrs->IsArray())
      for (rapidjson::SizeType i = 0; i < addrs->Size(); ++i)
        for (rapidjson::SizeType j = 0; j < i; ++j)
          if ((*addrs)[j] == (*addrs)[i]) {
            errs.duplicate(
                "status.addresses[" + std::to_string(i) + "]",
                "core.NodeAddress{Type:" + meta::validation::quote(json::getString((*addrs)[i], "type")) +
                    ", Address:" + meta::validation::quote(json::getString((*addrs)[i], "address")) + "}");
            break;
          }
    const json::Value* cidrs = json::findPath(obj, {"spec", "podCIDRs"});
    const json::Value* oldCidrs = json::findPath(old, {"spec", "podCIDRs"});
    const char* cidrMsg = "node updates may not change podCIDR except from \"\" to valid";
    if (oldCidrs && oldCidrs->IsArray() && oldCidrs->Size() > 0) {
      if (!cidrs || !cidrs->IsArray() || cidrs->Size() != oldCidrs->Size()) {
        errs.forbidden("spec.podCIDRs", cidrMsg);
      } else {
        for (rapidjson::SizeType i = 0; i < cidrs->Size(); ++i)
          if ((*cidrs)[i] != (*oldCidrs)[i]) errs.forbidden("spec.podCIDRs", cidrMsg);
      }
    }
    std::string_view provider = json::getStringPath(obj, {"spec", "providerID"});
    std::string_view oldProvider = json::getStringPath(old, {"spec", "providerID"});
    if (!oldProvider.empty() && oldProvider != provider)
      errs.forbidden("spec.providerID", "node updates may not change providerID except from \"\" to valid");
    validateTaints(obj, errs);
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
