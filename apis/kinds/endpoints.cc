// Endpoints: the addresses behind a Service (written by the endpoints controller).
#include "apis/kinds/kinds.h"

namespace shepherd::apis::kinds {

namespace {

class EndpointsStrategy final : public Strategy {
 public:
  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Endpoints", "string", "", "Endpoints of the service.", 0},
            {"Age", "string", "", "Time since the endpoints object was created.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    std::vector<std::string> eps;
    if (const json::Value* subsets = json::find(obj, "subsets"); subsets && subsets->IsArray())
      for (auto& s : subsets->GetArray()) {
        const json::Value* addrs = json::find(s, "addresses");
        const json::Value* ports = json::find(s, "ports");
        if (!addrs || !addrs->IsArray()) continue;
        for (auto& ad : addrs->GetArray()) {
          std::string ip(json::getString(ad, "ip"));
          if (ports && ports->IsArray() && ports->Size())
            for (auto& p : ports->GetArray()) eps.push_back(ip + ":" + std::to_string(json::getInt(p, "port").value_or(0)));
          else
            eps.push_back(ip);
        }
      }
    std::string out;
    for (size_t i = 0; i < eps.size() && i < 3; ++i) out += (i ? "," : "") + eps[i];
    if (eps.size() > 3) out += " + " + std::to_string(eps.size() - 3) + " more...";
    if (out.empty()) out = "<none>";
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(out, a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> endpointsStrategy() { return std::make_shared<EndpointsStrategy>(); }

}  // namespace shepherd::apis::kinds
