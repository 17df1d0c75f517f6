// Service: ClusterIP by default; IPs and node ports are allocated by the registry's
// service allocator, not here (strategies do no I/O).
#include <set>

#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

void setIfMissing(json::Value& obj, std::string_view key, json::Value v, json::Allocator& a) {
  const json::Value* cur = json::find(obj, key);
  if (!cur || cur->IsNull()) json::set(obj, key, std::move(v), a);
}

class ServiceStrategy final : public Strategy {
 public:
  NameRule nameRule() const override { return NameRule::Label1035; }

  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    auto& a = obj.GetAllocator();
    json::Value status(rapidjson::kObjectType);
    status.AddMember("loadBalancer", json::Value(rapidjson::kObjectType), a);
    json::set(obj, "status", std::move(status), a);
  }

  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    json::Value& spec = json::ensureObject(obj, "spec", a);
    setIfMissing(spec, "type", json::str("ClusterIP", a), a);
    setIfMissing(spec, "sessionAffinity", json::str("None", a), a);
    std::string_view type = json::getString(spec, "type");
    if (type != "ExternalName") {
      setIfMissing(spec, "internalTrafficPolicy", json::str("Cluster", a), a);
      json::Value fams(rapidjson::kArrayType);
      fams.PushBack("IPv4", a);
      if (json::getString(spec, "clusterIP") != "None" || json::find(spec, "selector"))
        setIfMissing(spec, "ipFamilies", std::move(fams), a);
      setIfMissing(spec, "ipFamilyPolicy", json::str("SingleStack", a), a);
    }
    if (type == "NodePort" || type == "LoadBalancer")
      setIfMissing(spec, "externalTrafficPolicy", json::str("Cluster", a), a);
    if (type == "LoadBalancer") setIfMissing(spec, "allocateLoadBalancerNodePorts", json::Value(true), a);
    if (json::Value* ports = json::find(spec, "ports"); ports && ports->IsArray()) {
      for (auto& p : ports->GetArray()) {
        if (!p.IsObject()) continue;
        setIfMissing(p, "protocol", json::str("TCP", a), a);
        const json::Value* port = json::find(p, "port");
        if (port && !json::find(p, "targetPort")) json::set(p, "targetPort", json::Value(*port, a), a);
      }
    }
  }

  void validate(const json::Value& obj, FieldErrors& errs) const override {
    const json::Value* spec = json::find(obj, "spec");
    if (!spec) return;
    std::string_view type = json::getString(*spec, "type");
    if (type != "ClusterIP" && type != "NodePort" && type != "LoadBalancer" && type != "ExternalName")
      errs.notSupported("spec.type", std::string(type),
                        {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"});
    const json::Value* ports = json::find(*spec, "ports");
    bool headless = json::getString(*spec, "clusterIP") == "None";
    if (type == "ExternalName") {
      if (json::getString(*spec, "externalName").empty()) errs.required("spec.externalName");
    } else if ((!ports || !ports->IsArray() || ports->Size() == 0) && !headless) {
      errs.required("spec.ports");
    }
    if (ports && ports->IsArray()) {
      std::set<std::string> names;
      for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
        const json::Value& p = (*ports)[i];
        std::string pp = "spec.ports[" + std::to_string(i) + "]";
        auto port = json::getInt(p, "port");
        if (!port)
          errs.required(pp + ".port");
        else if (*port < 1 || *port > 65535)
          errs.invalid(pp + ".port", std::to_string(*port), "must be between 1 and 65535, inclusive");
        std::string_view name = json::getString(p, "name");
        if (ports->Size() > 1 && name.empty()) errs.required(pp + ".name");
        if (!name.empty()) {
          for (auto& e : meta::validation::dns1123Label(name))
            errs.invalid(pp + ".name", meta::validation::quote(name), e);
          if (!names.insert(std::string(name)).second)
            errs.duplicate(pp + ".name", meta::validation::quote(name));
        }
        std::string_view proto = json::getString(p, "protocol", "TCP");
        if (proto != "TCP" && proto != "UDP" && proto != "SCTP")
          errs.notSupported(pp + ".protocol", std::string(proto), {"SCTP", "TCP", "UDP"});
        if (auto np = json::getInt(p, "nodePort"); np && *np != 0 && type == "ClusterIP")
          errs.forbidden(pp + ".nodePort", "may not be used when `type` is 'ClusterIP'");
      }
    }
  }

  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validate(obj, errs);
    std::string_view oldIP = json::getStringPath(old, {"spec", "clusterIP"});
    std::string_view newIP = json::getStringPath(obj, {"spec", "clusterIP"});
    if (!oldIP.empty() && newIP != oldIP && json::getStringPath(obj, {"spec", "type"}) != "ExternalName")
      errs.invalid("spec.clusterIPs[0]", "[]string{" + meta::validation::quote(newIP) + "}",
                   "may not change once set");
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Type", "string", "", "The type of the service.", 0},
            {"Cluster-IP", "string", "", "The IP address of the service in the cluster.", 0},
            {"External-IP", "string", "", "External IP addresses of the service.", 0},
            {"Port(s)", "string", "", "The ports the service exposes.", 0},
            {"Age", "string", "", "Time since the service was created.", 0},
            {"Selector", "string", "", "The labels of the pods this service routes traffic to.", 1}};
  }

  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    static const json::Value empty(rapidjson::kObjectType);
    const json::Value* spec = json::find(obj, "spec");
    if (!spec) spec = &empty;
    std::string type(json::getString(*spec, "type"));
    std::string clusterIP(json::getString(*spec, "clusterIP"));
    if (clusterIP.empty()) clusterIP = "<none>";
    std::string external;
    if (type == "ExternalName") {
      external = json::getString(*spec, "externalName");
    } else {
      std::vector<std::string> ips;
      if (const json::Value* ing = json::findPath(obj, {"status", "loadBalancer", "ingress"});
          ing && ing->IsArray())
        for (auto& i : ing->GetArray()) {
          std::string_view ip = json::getString(i, "ip");
          if (ip.empty()) ip = json::getString(i, "hostname");
          if (!ip.empty()) ips.emplace_back(ip);
        }
      if (const json::Value* ext = json::find(*spec, "externalIPs"); ext && ext->IsArray())
        for (auto& e : ext->GetArray()) ips.emplace_back(json::view(e));
      for (auto& ip : ips) external += (external.empty() ? "" : ",") + ip;
      if (external.empty()) external = type == "LoadBalancer" ? "<pending>" : "<none>";
    }
    std::string ports;
    if (const json::Value* ps = json::find(*spec, "ports"); ps && ps->IsArray())
      for (auto& p : ps->GetArray()) {
        std::string s = std::to_string(json::getInt(p, "port").value_or(0));
        if (auto np = json::getInt(p, "nodePort"); np && *np) s += ":" + std::to_string(*np);
        s += "/" + std::string(json::getString(p, "protocol", "TCP"));
        ports += (ports.empty() ? "" : ",") + s;
      }
    if (ports.empty()) ports = "<none>";
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(type, a), a);
    cells.PushBack(json::str(clusterIP, a), a);
    cells.PushBack(json::str(external, a), a);
    cells.PushBack(json::str(ports, a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    cells.PushBack(json::str(formatLabels(json::find(*spec, "selector")), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> serviceStrategy() {
  return std::make_shared<ServiceStrategy>();
}

}  // namespace shepherd::apis::kinds
