// Endpoints: the addresses behind a Service (written by the endpoints controller).
#include "apis/kinds/kinds.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

void validateAddress(const json::Value& a, const std::string& path, FieldErrors& errs) {
  using meta::validation::quote;
  std::string_view ip = json::getString(a, "ip");
  if (!meta::validation::ipFamily(ip)) errs.invalid(path + ".ip", quote(ip), meta::validation::kInvalidIP);
  std::string_view host = json::getString(a, "hostname");
  if (!host.empty())
    for (auto& e : meta::validation::dns1123Label(host)) errs.invalid(path + ".hostname", quote(host), e);
  if (const json::Value* node = json::find(a, "nodeName"); node && node->IsString())
    for (auto& e : meta::validation::dns1123Subdomain(json::view(*node)))
      errs.invalid(path + ".nodeName", quote(json::view(*node)), e);
  // Unlike upstream, loopback addresses pass: a single-host Shepherd advertises the API
  // server and its nodes on 127.0.0.1, and its own components write those endpoints.
  for (auto& e : meta::validation::nonSpecialIP(ip))
    if (e.find("loopback") == std::string::npos) errs.invalid(path + ".ip", quote(ip), e);
}

class EndpointsStrategy final : public Strategy {
 public:
  bool allowCreateOnUpdate() const override { return true; }
  // ValidateEndpoints: every subset has addresses, each usable; named ports.
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    using meta::validation::quote;
    const json::Value* subsets = json::find(obj, "subsets");
    if (!subsets || !subsets->IsArray()) return;
    for (rapidjson::SizeType i = 0; i < subsets->Size(); ++i) {
      const json::Value& ss = (*subsets)[i];
      std::string sp = "subsets[" + std::to_string(i) + "]";
      const json::Value* ready = json::find(ss, "addresses");
      const json::Value* notReady = json::find(ss, "notReadyAddresses");
      size_t nr = ready && ready->IsArray() ? ready->Size() : 0,
             nn = notReady && notReady->IsArray() ? notReady->Size() : 0;
      if (nr == 0 && nn == 0) errs.required(sp, "must specify `addresses` or `notReadyAddresses`");
      for (size_t j = 0; j < nr; ++j)
        validateAddress((*ready)[static_cast<rapidjson::SizeType>(j)],
                        sp + ".addresses[" + std::to_string(j) + "]", errs);
      for (size_t j = 0; j < nn; ++j)
        validateAddress((*notReady)[static_cast<rapidjson::SizeType>(j)],
                        sp + ".notReadyAddresses[" + std::to_string(j) + "]", errs);
      const json::Value* ports = json::find(ss, "ports");
      if (!ports || !ports->IsArray()) continue;
      for (rapidjson::SizeType j = 0; j < ports->Size(); ++j) {
        const json::Value& p = (*ports)[j];
        std::string pp = sp + ".ports[" + std::to_string(j) + "]";
        std::string_view name = json::getString(p, "name");
        if (ports->Size() > 1 && name.empty()) {
          errs.required(pp + ".name");
        } else if (!name.empty()) {
          for (auto& e : meta::validation::dns1123Label(name)) errs.invalid(pp + ".name", quote(name), e);
        }
        int64_t port = json::getInt(p, "port").value_or(0);
        if (port < 1 || port > 65535)
          errs.invalid(pp + ".port", std::to_string(port), meta::validation::inclusiveRange(1, 65535));
        std::string_view proto = json::getString(p, "protocol");
        if (proto.empty())
          errs.required(pp + ".protocol");
        else if (proto != "TCP" && proto != "UDP" && proto != "SCTP")
          errs.notSupported(pp + ".protocol", std::string(proto), {"SCTP", "TCP", "UDP"});
        if (const json::Value* ap = json::find(p, "appProtocol"); ap && ap->IsString())
          for (auto& e : meta::validation::qualifiedName(json::view(*ap)))
            errs.invalid(pp + ".appProtocol", quote(json::view(*ap)), e);
      }
    }
  }

  // Ports default to TCP (SetDefaults_EndpointPort).
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    json::Value* subsets = json::find(obj, "subsets");
    if (!subsets || !subsets->IsArray()) return;
    for (auto& ss : subsets->GetArray())
      if (json::Value* ports = json::find(ss, "ports"); ports && ports->IsArray())
        for (auto& p : ports->GetArray())
          if (p.IsObject() && json::getString(p, "protocol").empty())
            json::setString(p, "protocol", "TCP", a);
  }

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
            for (auto& p : ports->GetArray())
              eps.push_back(ip + ":" + std::to_string(json::getInt(p, "port").value_or(0)));
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

std::shared_ptr<const Strategy> endpointsStrategy() {
  return std::make_shared<EndpointsStrategy>();
}

}  // namespace shepherd::apis::kinds
