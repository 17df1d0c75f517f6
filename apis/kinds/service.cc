// Service: ClusterIP by default; IPs and node ports are allocated by the registry's
// service allocator, not here (strategies do no I/O).
#include <algorithm>
#include <cctype>
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

bool isHeadlessSelectorless(const json::Value& spec) {
  const json::Value* sel = json::find(spec, "selector");
  return json::getString(spec, "clusterIP") == "None" &&
         (!sel || !sel->IsObject() || sel->MemberCount() == 0);
}

// The IP family fields on this single-stack IPv4 cluster, as upstream's allocator sets
// them (initIPFamilyFields): families follow the given IPs; a headless service without
// selector asks for both families.
void defaultIPFamilies(json::Value& spec, json::Allocator& a) {
  bool headlessNoSelector = isHeadlessSelectorless(spec);
  const json::Value* policy = json::find(spec, "ipFamilyPolicy");
  if (!policy || policy->IsNull())
    json::setString(spec, "ipFamilyPolicy", headlessNoSelector ? "RequireDualStack" : "SingleStack", a);
  const json::Value* fams = json::find(spec, "ipFamilies");
  bool haveFamilies = fams && fams->IsArray() && fams->Size() > 0;
  if (headlessNoSelector) {
    json::Value list(rapidjson::kArrayType);
    if (haveFamilies) list.CopyFrom(*fams, a);
    if (list.Size() == 0) list.PushBack("IPv4", a);
    if (list.Size() < 2 && json::getString(spec, "ipFamilyPolicy") != "SingleStack")
      list.PushBack(json::str(list[0].IsString() && json::view(list[0]) == "IPv6" ? "IPv4" : "IPv6", a), a);
    json::set(spec, "ipFamilies", std::move(list), a);
    return;
  }
  if (haveFamilies) return;
  // Infer from the cluster IPs; an IPv6 one is left for the allocator to refuse.
  json::Value list(rapidjson::kArrayType);
  if (const json::Value* ips = json::find(spec, "clusterIPs"); ips && ips->IsArray())
    for (auto& ip : ips->GetArray()) {
      if (!ip.IsString() || json::view(ip) == "None") break;
      if (meta::validation::ipFamily(json::view(ip)) != 4) return;
      list.PushBack("IPv4", a);
    }
  if (list.Size() == 0) list.PushBack("IPv4", a);
  json::set(spec, "ipFamilies", std::move(list), a);
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
    // An old client's clusterIP alone stands for clusterIPs (normalizeClusterIPs).
    std::string clusterIP(json::getString(spec, "clusterIP"));
    const json::Value* ips = json::find(spec, "clusterIPs");
    if (!clusterIP.empty() && (!ips || !ips->IsArray() || ips->Size() == 0)) {
      json::Value list(rapidjson::kArrayType);
      list.PushBack(json::str(clusterIP, a), a);
      json::set(spec, "clusterIPs", std::move(list), a);
    }
    if (type != "ExternalName") {
      setIfMissing(spec, "internalTrafficPolicy", json::str("Cluster", a), a);
      defaultIPFamilies(spec, a);
    }
    if (type == "NodePort" || type == "LoadBalancer")
      setIfMissing(spec, "externalTrafficPolicy", json::str("Cluster", a), a);
    if (type == "LoadBalancer") setIfMissing(spec, "allocateLoadBalancerNodePorts", json::Value(true), a);
    if (json::getString(spec, "sessionAffinity") == "ClientIP") {
      json::Value& cfg = json::ensureObject(spec, "sessionAffinityConfig", a);
      json::Value& cip = json::ensureObject(cfg, "clientIP", a);
      setIfMissing(cip, "timeoutSeconds", json::Value(10800), a);
    }
    if (json::Value* ports = json::find(spec, "ports"); ports && ports->IsArray()) {
      for (auto& p : ports->GetArray()) {
        if (!p.IsObject()) continue;
        setIfMissing(p, "protocol", json::str("TCP", a), a);
        // targetPort 0 or "" means the same as port.
        const json::Value* port = json::find(p, "port");
        const json::Value* target = json::find(p, "targetPort");
        bool unset = !target || target->IsNull() || (target->IsString() && target->GetStringLength() == 0) ||
                     (target->IsNumber() && target->GetDouble() == 0);
        if (port && unset) json::set(p, "targetPort", json::Value(*port, a), a);
      }
    }
  }

  void validate(const json::Value& obj, FieldErrors& errs) const override {
    using meta::validation::quote;
    static const json::Value empty(rapidjson::kObjectType);
    const json::Value* specp = json::find(obj, "spec");
    const json::Value& spec = specp && specp->IsObject() ? *specp : empty;
    std::string_view type = json::getString(spec, "type");
    const json::Value* ports = json::find(spec, "ports");
    if (ports && !ports->IsArray()) ports = nullptr;
    const json::Value* ips = json::find(spec, "clusterIPs");
    bool headless =
        ips && ips->IsArray() && ips->Size() == 1 && (*ips)[0].IsString() && json::view((*ips)[0]) == "None";
    if ((!ports || ports->Size() == 0) && !headless && type != "ExternalName") errs.required("spec.ports");
    if ((type == "LoadBalancer" || type == "NodePort") && headless)
      errs.invalid("spec.clusterIPs[0]", "\"None\"",
                   "may not be set to 'None' for " + std::string(type) + " services");
    if (type == "ExternalName") {
      if (ips && ips->IsArray() && ips->Size() > 0)
        errs.forbidden("spec.clusterIPs", "may not be set for ExternalName services");
      if (const json::Value* f = json::find(spec, "ipFamilies"); f && f->IsArray() && f->Size() > 0)
        errs.forbidden("spec.ipFamilies", "may not be set for ExternalName services");
      if (const json::Value* pol = json::find(spec, "ipFamilyPolicy"); pol && !pol->IsNull())
        errs.forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services");
      // A trailing dot marks the name fully qualified.
      std::string_view cname = json::getString(spec, "externalName");
      if (!cname.empty() && cname.back() == '.') cname.remove_suffix(1);
      if (cname.empty()) {
        errs.required("spec.externalName");
      } else {
        for (auto& e : meta::validation::dns1123Subdomain(cname))
          errs.invalid("spec.externalName", quote(cname), e);
      }
    }
    if (ports) {
      std::set<std::string> names;
      for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
        const json::Value& p = (*ports)[i];
        std::string pp = "spec.ports[" + std::to_string(i) + "]";
        std::string_view name = json::getString(p, "name");
        if (ports->Size() > 1 && name.empty()) {
          errs.required(pp + ".name");
        } else if (!name.empty()) {
          for (auto& e : meta::validation::dns1123Label(name)) errs.invalid(pp + ".name", quote(name), e);
          if (!names.insert(std::string(name)).second) errs.duplicate(pp + ".name", quote(name));
        }
        int64_t port = json::getInt(p, "port").value_or(0);
        if (port < 1 || port > 65535)
          errs.invalid(pp + ".port", std::to_string(port), meta::validation::inclusiveRange(1, 65535));
        std::string_view proto = json::getString(p, "protocol");
        if (proto.empty())
          errs.required(pp + ".protocol");
        else if (proto != "TCP" && proto != "UDP" && proto != "SCTP")
          errs.notSupported(pp + ".protocol", std::string(proto), {"SCTP", "TCP", "UDP"});
        const json::Value* target = json::find(p, "targetPort");
        if (target && target->IsString()) {
          std::string_view t = json::view(*target);
          for (auto& e : meta::validation::portName(t)) errs.invalid(pp + ".targetPort", quote(t), e);
        } else {
          int64_t t = target && target->IsInt64() ? target->GetInt64() : 0;
          if (t < 1 || t > 65535)
            errs.invalid(pp + ".targetPort", std::to_string(t), meta::validation::inclusiveRange(1, 65535));
        }
        if (const json::Value* ap = json::find(p, "appProtocol"); ap && ap->IsString())
          for (auto& e : meta::validation::qualifiedName(json::view(*ap)))
            errs.invalid(pp + ".appProtocol", quote(json::view(*ap)), e);
      }
    }
    if (const json::Value* sel = json::find(spec, "selector"); sel && sel->IsObject())
      validateLabelMap(sel, "spec.selector", errs);
    std::string_view affinity = json::getString(spec, "sessionAffinity");
    const json::Value* affinityConfig = json::find(spec, "sessionAffinityConfig");
    if (affinityConfig && affinityConfig->IsNull()) affinityConfig = nullptr;
    if (affinity.empty())
      errs.required("spec.sessionAffinity");
    else if (affinity != "ClientIP" && affinity != "None")
      errs.notSupported("spec.sessionAffinity", std::string(affinity), {"ClientIP", "None"});
    if (affinity == "ClientIP") {
      const json::Value* cip = affinityConfig ? json::find(*affinityConfig, "clientIP") : nullptr;
      auto timeout = cip ? json::getInt(*cip, "timeoutSeconds") : std::nullopt;
      if (!affinityConfig)
        errs.required("spec.sessionAffinityConfig", "when session affinity type is ClientIP");
      else if (!cip || cip->IsNull())
        errs.required("spec.sessionAffinityConfig.clientIP", "when session affinity type is ClientIP");
      else if (!timeout)
        errs.required("spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                      "when session affinity type is ClientIP");
      else if (*timeout <= 0 || *timeout > 86400)
        errs.invalid("spec.sessionAffinityConfig.clientIP.timeoutSeconds", std::to_string(*timeout),
                     "must be greater than 0 and less than 86400");
    } else if (affinity == "None" && affinityConfig) {
      errs.forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None");
    }
    validateServiceClusterIPs(spec, errs);
    if (const json::Value* ext = json::find(spec, "externalIPs"); ext && ext->IsArray())
      for (rapidjson::SizeType i = 0; i < ext->Size(); ++i) {
        std::string field = "spec.externalIPs[" + std::to_string(i) + "]";
        std::string_view ip = (*ext)[i].IsString() ? json::view((*ext)[i]) : "";
        if (!meta::validation::ipFamily(ip)) {
          errs.invalid(field, quote(ip), meta::validation::kInvalidIP);
          continue;
        }
        for (auto& e : meta::validation::nonSpecialIP(ip)) errs.invalid(field, quote(ip), e);
      }
    if (type.empty())
      errs.required("spec.type");
    else if (type != "ClusterIP" && type != "NodePort" && type != "LoadBalancer" && type != "ExternalName")
      errs.notSupported("spec.type", std::string(type),
                        {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"});
    if (ports) {
      if (type == "ClusterIP")
        for (rapidjson::SizeType i = 0; i < ports->Size(); ++i)
          if (json::getInt((*ports)[i], "nodePort").value_or(0) != 0)
            errs.forbidden("spec.ports[" + std::to_string(i) + "].nodePort",
                           "may not be used when `type` is 'ClusterIP'");
      std::set<std::string> nodePorts, portKeys;
      for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
        const json::Value& p = (*ports)[i];
        std::string proto(json::getString(p, "protocol"));
        if (int64_t np = json::getInt(p, "nodePort").value_or(0); np != 0)
          if (!nodePorts.insert(proto + "/" + std::to_string(np)).second)
            errs.duplicate("spec.ports[" + std::to_string(i) + "].nodePort", std::to_string(np));
      }
      for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
        const json::Value& p = (*ports)[i];
        std::string proto(json::getString(p, "protocol"));
        int64_t port = json::getInt(p, "port").value_or(0);
        // Upstream prints the ServicePort key it compares, protocol and port only.
        if (!portKeys.insert(proto + "/" + std::to_string(port)).second)
          errs.duplicate("spec.ports[" + std::to_string(i) + "]",
                         "core.ServicePort{Name:\"\", Protocol:" + quote(proto) +
                             ", AppProtocol:(*string)(nil), Port:" + std::to_string(port) +
                             ", TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}");
      }
    }
    if (const json::Value* ranges = json::find(spec, "loadBalancerSourceRanges");
        ranges && ranges->IsArray() && ranges->Size() > 0) {
      // Upstream's path has a capital L here.
      if (type != "LoadBalancer")
        errs.forbidden("spec.LoadBalancerSourceRanges", "may only be used when `type` is 'LoadBalancer'");
      for (rapidjson::SizeType i = 0; i < ranges->Size(); ++i) {
        std::string_view v = (*ranges)[i].IsString() ? json::view((*ranges)[i]) : "";
        while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
        while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
        if (!meta::validation::isCIDR(v))
          errs.invalid("spec.LoadBalancerSourceRanges[" + std::to_string(i) + "]", quote(v),
                       meta::validation::kInvalidCIDR);
      }
    }
    if (const json::Value* alloc = json::find(spec, "allocateLoadBalancerNodePorts");
        alloc && !alloc->IsNull() && type != "LoadBalancer")
      errs.forbidden("spec.allocateLoadBalancerNodePorts", "may only be used when `type` is 'LoadBalancer'");
    if (const json::Value* cls = json::find(spec, "loadBalancerClass"); cls && cls->IsString()) {
      if (type == "LoadBalancer") {
        for (auto& e : meta::validation::qualifiedName(json::view(*cls)))
          errs.invalid("spec.loadBalancerClass", quote(json::view(*cls)), e);
      } else {
        errs.forbidden("spec.loadBalancerClass", "may only be used when `type` is 'LoadBalancer'");
      }
    }
    std::string_view etp = json::getString(spec, "externalTrafficPolicy");
    const json::Value* ext = json::find(spec, "externalIPs");
    bool external = type == "LoadBalancer" || type == "NodePort" ||
                    (type == "ClusterIP" && ext && ext->IsArray() && ext->Size() > 0);
    if (!external) {
      if (!etp.empty())
        errs.invalid("spec.externalTrafficPolicy", quote(etp),
                     "may only be set for externally-accessible services");
    } else if (!etp.empty() && etp != "Cluster" && etp != "Local") {
      errs.notSupported("spec.externalTrafficPolicy", std::string(etp), {"Cluster", "Local"});
    }
    if (int64_t hc = json::getInt(spec, "healthCheckNodePort").value_or(0);
        hc != 0 && !(type == "LoadBalancer" && etp == "Local"))
      errs.invalid("spec.healthCheckNodePort", std::to_string(hc),
                   "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'");
    if (const json::Value* itp = json::find(spec, "internalTrafficPolicy"); itp && itp->IsString()) {
      std::string_view v = json::view(*itp);
      if (v != "Cluster" && v != "Local")
        errs.notSupported("spec.internalTrafficPolicy", std::string(v), {"Cluster", "Local"});
    }
    if (const json::Value* td = json::find(spec, "trafficDistribution");
        td && td->IsString() && json::view(*td) != "PreferClose")
      errs.notSupported("spec.trafficDistribution", std::string(json::view(*td)), {"PreferClose"});
  }

  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    std::string_view type = json::getStringPath(obj, {"spec", "type"});
    std::string_view oldType = json::getStringPath(old, {"spec", "type"});
    // clusterIPs may not change once set (but for ExternalName on either side).
    const json::Value* ips = json::findPath(obj, {"spec", "clusterIPs"});
    const json::Value* oldIPs = json::findPath(old, {"spec", "clusterIPs"});
    if (type != "ExternalName" && oldType != "ExternalName" && oldIPs && oldIPs->IsArray() &&
        oldIPs->Size()) {
      std::string repr = "[]string{";
      size_t n = ips && ips->IsArray() ? ips->Size() : 0;
      for (size_t i = 0; i < n; ++i)
        repr += (i ? ", " : "") +
                meta::validation::quote(json::view((*ips)[static_cast<rapidjson::SizeType>(i)]));
      repr += "}";
      bool oldHeadless = json::view((*oldIPs)[0]) == "None";
      bool newHeadless = n == 1 && json::view((*ips)[0]) == "None";
      if (!(oldHeadless && newHeadless)) {
        if (n == 0)
          errs.invalid("spec.clusterIPs[0]", repr, "primary clusterIP can not be unset");
        else if (json::view((*ips)[0]) != json::view((*oldIPs)[0]))
          errs.invalid("spec.clusterIPs[0]", repr, "may not change once set");
      }
    }
    const json::Value* cls = json::findPath(obj, {"spec", "loadBalancerClass"});
    const json::Value* oldCls = json::findPath(old, {"spec", "loadBalancerClass"});
    bool same = (!cls || cls->IsNull()) == (!oldCls || oldCls->IsNull()) &&
                (!cls || cls->IsNull() || *cls == *oldCls);
    if (type == "LoadBalancer" && oldType == "LoadBalancer" && !same)
      errs.invalid("spec.loadBalancerClass",
                   cls && cls->IsString() ? meta::validation::quote(json::view(*cls)) : "\"null\"",
                   "may not change once set");
    validate(obj, errs);
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

void validateServiceClusterIPs(const json::Value& spec, FieldErrors& errs) {
  using meta::validation::quote;
  if (json::getString(spec, "type") == "ExternalName") return;
  std::vector<std::string> ips;
  const json::Value* list = json::find(spec, "clusterIPs");
  if (list && list->IsArray())
    for (auto& ip : list->GetArray()) ips.emplace_back(ip.IsString() ? json::view(ip) : "");
  std::string repr = "[]string{";
  for (size_t i = 0; i < ips.size(); ++i) repr += (i ? ", " : "") + quote(ips[i]);
  repr += "}";
  std::string_view clusterIP = json::getString(spec, "clusterIP");
  if (!clusterIP.empty()) {
    if (ips.empty())
      errs.required("spec.clusterIPs");
    else if (ips[0] != clusterIP)
      errs.invalid("spec.clusterIPs", repr, "first value must match `clusterIP`");
  } else if (!ips.empty()) {
    errs.invalid("spec.clusterIPs", repr, "must be empty when `clusterIP` is not specified");
  }
  std::vector<std::string> families;
  if (const json::Value* f = json::find(spec, "ipFamilies"); f && f->IsArray())
    for (auto& fam : f->GetArray()) families.emplace_back(fam.IsString() ? json::view(fam) : "");
  for (size_t i = 0; i < families.size(); ++i) {
    std::string field = "spec.ipFamilies[" + std::to_string(i) + "]";
    if (families[i] != "IPv4" && families[i] != "IPv6")
      errs.notSupported(field, families[i], {"IPv4", "IPv6"});
    if (std::find(families.begin(), families.begin() + static_cast<long>(i), families[i]) !=
        families.begin() + static_cast<long>(i))
      errs.duplicate(field, quote(families[i]));
  }
  if (const json::Value* policy = json::find(spec, "ipFamilyPolicy"); policy && policy->IsString()) {
    std::string_view p = json::view(*policy);
    if (p != "SingleStack" && p != "PreferDualStack" && p != "RequireDualStack")
      errs.notSupported("spec.ipFamilyPolicy", std::string(p),
                        {"PreferDualStack", "RequireDualStack", "SingleStack"});
  }
  bool invalidIPs = false;
  for (size_t i = 0; i < ips.size(); ++i) {
    if (i == 0 && ips[i] == "None") {
      if (ips.size() > 1) {
        invalidIPs = true;
        errs.invalid("spec.clusterIPs", repr, "'None' must be the first and only value");
      }
      continue;
    }
    if (!meta::validation::ipFamily(ips[i])) {
      invalidIPs = true;
      errs.invalid("spec.clusterIPs[" + std::to_string(i) + "]", quote(ips[i]), meta::validation::kInvalidIP);
    }
  }
  if (ips.size() > 2) errs.invalid("spec.clusterIPs", repr, "may only hold up to 2 values");
  // Further checks would only repeat what is wrong with the addresses.
  if (invalidIPs) return;
  if (ips.size() > 1 && meta::validation::ipFamily(ips[0]) == meta::validation::ipFamily(ips[1]))
    errs.invalid("spec.clusterIPs", repr, "may specify no more than one IP for each IP family");
  bool headless = ips.size() == 1 && ips[0] == "None";
  if (!headless)
    for (size_t i = 0; i < ips.size() && i < families.size(); ++i) {
      int fam = meta::validation::ipFamily(ips[i]);
      std::string field = "spec.clusterIPs[" + std::to_string(i) + "]";
      if (families[i] == "IPv4" && fam == 6)
        errs.invalid(field, quote(ips[i]),
                     "expected an IPv4 value as indicated by `ipFamilies[" + std::to_string(i) + "]`");
      if (families[i] == "IPv6" && fam != 6)
        errs.invalid(field, quote(ips[i]),
                     "expected an IPv6 value as indicated by `ipFamilies[" + std::to_string(i) + "]`");
    }
}

std::shared_ptr<const Strategy> serviceStrategy() {
  return std::make_shared<ServiceStrategy>();
}

}  // namespace shepherd::apis::kinds
