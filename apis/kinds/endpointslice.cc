// EndpointSlice (discovery.k8s.io/v1): a Service's endpoints in slices of bounded size,
// validated with upstream's limits (1000 endpoints, 100 addresses, 100 ports).
#include <arpa/inet.h>

#include <set>

#include "apis/kinds/kinds.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

constexpr size_t kMaxEndpoints = 1000;
constexpr size_t kMaxAddresses = 100;
constexpr size_t kMaxPorts = 100;
constexpr size_t kMaxZoneHints = 8;

bool isIPv4(std::string_view s) {
  in_addr out{};
  return inet_pton(AF_INET, std::string(s).c_str(), &out) == 1;
}
bool isIPv6(std::string_view s) {
  in6_addr out{};
  return inet_pton(AF_INET6, std::string(s).c_str(), &out) == 1;
}

void validateAddress(std::string_view type, std::string_view addr, const std::string& field,
                     FieldErrors& errs) {
  if (type == "IPv4" && !isIPv4(addr)) {
    errs.invalid(field, meta::validation::quote(addr), "must be a valid IPv4 address");
  } else if (type == "IPv6" && !isIPv6(addr)) {
    errs.invalid(field, meta::validation::quote(addr), "must be a valid IPv6 address");
  } else if (type == "FQDN") {
    for (auto& m : meta::validation::dns1123Subdomain(addr))
      errs.invalid(field, meta::validation::quote(addr), m);
  }
}

void validateEndpoint(std::string_view type, const json::Value& ep, const std::string& at,
                      FieldErrors& errs) {
  const json::Value* addrs = json::find(ep, "addresses");
  if (!addrs || !addrs->IsArray() || addrs->Empty()) {
    errs.required(at + ".addresses", "must contain at least 1 address");
  } else if (addrs->Size() > kMaxAddresses) {
    errs.add({"FieldValueTooMany",
              "Too many: " + std::to_string(addrs->Size()) + ": must have at most " +
                  std::to_string(kMaxAddresses) + " items",
              at + ".addresses"});
  } else {
    for (rapidjson::SizeType i = 0; i < addrs->Size(); ++i)
      validateAddress(type, json::view((*addrs)[i]), at + ".addresses[" + std::to_string(i) + "]", errs);
  }
  if (std::string_view node = json::getString(ep, "nodeName"); !node.empty())
    for (auto& m : meta::validation::dns1123Subdomain(node))
      errs.invalid(at + ".nodeName", meta::validation::quote(node), m);
  if (std::string_view host = json::getString(ep, "hostname"); !host.empty())
    for (auto& m : meta::validation::dns1123Label(host))
      errs.invalid(at + ".hostname", meta::validation::quote(host), m);
  if (const json::Value* zones = json::findPath(ep, {"hints", "forZones"}); zones && zones->IsArray()) {
    if (zones->Size() > kMaxZoneHints)
      errs.add({"FieldValueTooMany",
                "Too many: " + std::to_string(zones->Size()) + ": must have at most " +
                    std::to_string(kMaxZoneHints) + " items",
                at + ".hints.forZones"});
    std::set<std::string> seen;
    for (rapidjson::SizeType i = 0; i < zones->Size(); ++i) {
      std::string name(json::getString((*zones)[i], "name"));
      if (!seen.insert(name).second)
        errs.duplicate(at + ".hints.forZones[" + std::to_string(i) + "].name", meta::validation::quote(name));
    }
  }
}

void validatePorts(const json::Value& ports, FieldErrors& errs) {
  if (ports.Size() > kMaxPorts) {
    errs.add({"FieldValueTooMany",
              "Too many: " + std::to_string(ports.Size()) + ": must have at most " +
                  std::to_string(kMaxPorts) + " items",
              "ports"});
    return;
  }
  std::set<std::string> names;
  for (rapidjson::SizeType i = 0; i < ports.Size(); ++i) {
    const json::Value& p = ports[i];
    std::string at = "ports[" + std::to_string(i) + "]";
    std::string name(json::getString(p, "name"));
    if (!name.empty())
      for (auto& m : meta::validation::dns1123Label(name))
        errs.invalid(at + ".name", meta::validation::quote(name), m);
    if (!names.insert(name).second) errs.duplicate(at + ".name", meta::validation::quote(name));
    std::string proto(json::getString(p, "protocol", "TCP"));
    if (proto != "TCP" && proto != "UDP" && proto != "SCTP")
      errs.notSupported(at + ".protocol", proto, {"SCTP", "TCP", "UDP"});
    if (auto port = json::getInt(p, "port"); port && (*port < 1 || *port > 65535))
      errs.invalid(at + ".port", std::to_string(*port), "must be between 1 and 65535, inclusive");
    if (std::string_view ap = json::getString(p, "appProtocol"); !ap.empty())
      for (auto& m : meta::validation::qualifiedName(ap))
        errs.invalid(at + ".appProtocol", meta::validation::quote(ap), m);
  }
}

class EndpointSliceStrategy final : public Strategy {
 public:
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    if (json::Value* ports = json::find(obj, "ports"); ports && ports->IsArray())
      for (auto& p : ports->GetArray()) {
        if (!p.IsObject()) continue;
        if (!json::find(p, "name")) json::setString(p, "name", "", a);
        if (!json::find(p, "protocol")) json::setString(p, "protocol", "TCP", a);
      }
  }

  void validate(const json::Value& obj, FieldErrors& errs) const override {
    std::string type(json::getString(obj, "addressType"));
    if (type.empty())
      errs.required("addressType");
    else if (type != "IPv4" && type != "IPv6" && type != "FQDN")
      errs.notSupported("addressType", type, {"FQDN", "IPv4", "IPv6"});
    if (const json::Value* eps = json::find(obj, "endpoints"); eps && eps->IsArray()) {
      if (eps->Size() > kMaxEndpoints)
        errs.add({"FieldValueTooMany",
                  "Too many: " + std::to_string(eps->Size()) + ": must have at most " +
                      std::to_string(kMaxEndpoints) + " items",
                  "endpoints"});
      else
        for (rapidjson::SizeType i = 0; i < eps->Size(); ++i)
          validateEndpoint(type, (*eps)[i], "endpoints[" + std::to_string(i) + "]", errs);
    }
    if (const json::Value* ports = json::find(obj, "ports"); ports && ports->IsArray())
      validatePorts(*ports, errs);
  }

  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validate(obj, errs);
    std::string_view was = json::getString(old, "addressType");
    std::string_view now = json::getString(obj, "addressType");
    if (was != now) errs.invalid("addressType", meta::validation::quote(now), "field is immutable");
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"AddressType", "string", "", "Type of address carried by this EndpointSlice.", 0},
            {"Ports", "string", "", "Ports served by the endpoints of this EndpointSlice.", 0},
            {"Endpoints", "string", "", "Addresses of the endpoints in this EndpointSlice.", 0},
            {"Age", "string", "", "Time since the EndpointSlice was created.", 0}};
  }

  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    // Up to three entries, then "+ N more...", as upstream's printer; "<unset>" if none.
    auto summarize = [](const std::vector<std::string>& items) {
      if (items.empty()) return std::string("<unset>");
      std::string out;
      for (size_t i = 0; i < items.size() && i < 3; ++i) out += (i ? "," : "") + items[i];
      if (items.size() > 3) out += " + " + std::to_string(items.size() - 3) + " more...";
      return out;
    };
    std::vector<std::string> ports, addrs;
    if (const json::Value* ps = json::find(obj, "ports"); ps && ps->IsArray())
      for (auto& p : ps->GetArray()) {
        auto port = json::getInt(p, "port");
        ports.push_back(port ? std::to_string(*port) : "<unset>");
      }
    if (const json::Value* eps = json::find(obj, "endpoints"); eps && eps->IsArray())
      for (auto& ep : eps->GetArray())
        if (const json::Value* as = json::find(ep, "addresses"); as && as->IsArray())
          for (auto& ad : as->GetArray())
            if (ad.IsString()) addrs.emplace_back(json::view(ad));
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(json::getString(obj, "addressType"), a), a);
    cells.PushBack(json::str(summarize(ports), a), a);
    cells.PushBack(json::str(summarize(addrs), a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> endpointSliceStrategy() {
  return std::make_shared<EndpointSliceStrategy>();
}

}  // namespace shepherd::apis::kinds
