// The Service store's side effects: cluster IPs and node ports are allocated on create,
// kept across updates that omit them (as upstream), and released on delete.
#include "apis/kinds/kinds.h"
#include "meta/validation.h"
#include "registry/registry.h"

namespace shepherd::registry {

namespace {

bool needsNodePorts(const json::Value& spec) {
  std::string_view t = json::getString(spec, "type");
  return t == "NodePort" || t == "LoadBalancer";
}

bool wantsClusterIP(const json::Value& spec) {
  return json::getString(spec, "type") != "ExternalName" && json::getString(spec, "clusterIP") != "None";
}

void releaseAll(ServiceAllocator& alloc, const json::Value& obj) {
  const json::Value* spec = json::find(obj, "spec");
  if (!spec) return;
  std::string_view ip = json::getString(*spec, "clusterIP");
  if (!ip.empty() && ip != "None") alloc.releaseIP(std::string(ip));
  if (const json::Value* ports = json::find(*spec, "ports"); ports && ports->IsArray())
    for (auto& p : ports->GetArray())
      if (auto np = json::getInt(p, "nodePort"); np && *np) alloc.releasePort(static_cast<int>(*np));
}

ApiError allocationError(const std::string& name, const std::string& field, const std::string& value,
                         const std::string& detail) {
  return ApiError::invalid("", "Service", name,
                           {{"FieldValueInvalid", "Invalid value: " + value + ": " + detail, field}});
}

Status allocatePorts(ServiceAllocator& alloc, json::Value& spec, json::Allocator& a, const std::string& name,
                     const json::Value* oldSpec, std::vector<int>& taken) {
  json::Value* ports = json::find(spec, "ports");
  if (!ports || !ports->IsArray()) return okStatus();
  for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
    json::Value& p = (*ports)[i];
    int requested = static_cast<int>(json::getInt(p, "nodePort").value_or(0));
    // An update keeps the node port the same port had before.
    if (!requested && oldSpec) {
      if (const json::Value* ops = json::find(*oldSpec, "ports"); ops && ops->IsArray())
        for (auto& op : ops->GetArray())
          if (json::getInt(op, "port") == json::getInt(p, "port") &&
              json::getString(op, "protocol", "TCP") == json::getString(p, "protocol", "TCP"))
            requested = static_cast<int>(json::getInt(op, "nodePort").value_or(0));
      if (requested) {
        json::set(p, "nodePort", json::Value(requested), a);
        continue;  // already ours
      }
    }
    if (oldSpec && requested) {
      bool owned = false;
      if (const json::Value* ops = json::find(*oldSpec, "ports"); ops && ops->IsArray())
        for (auto& op : ops->GetArray())
          if (json::getInt(op, "nodePort").value_or(0) == requested) owned = true;
      if (owned) continue;
    }
    auto port = alloc.allocatePort(requested);
    if (!port) {
      for (int t : taken) alloc.releasePort(t);
      return allocationError(name, "spec.ports[" + std::to_string(i) + "].nodePort",
                             std::to_string(requested), port.error().message);
    }
    taken.push_back(port.value());
    json::set(p, "nodePort", json::Value(port.value()), a);
  }
  return okStatus();
}

// The IP family checks upstream's allocator makes before it allocates (initIPFamilyFields)
// on this single-stack IPv4 cluster: the fields must hang together, may not ask for two
// families, and may not name IPv6.
Status checkIPFamilies(const json::Value& spec, const std::string& name) {
  if (json::getString(spec, "type") == "ExternalName") return okStatus();
  apis::FieldErrors errs;
  apis::kinds::validateServiceClusterIPs(spec, errs);
  if (!errs.empty()) return ApiError::invalid("", "Service", name, std::move(errs.causes()));
  using meta::validation::quote;
  std::string_view policy = json::getString(spec, "ipFamilyPolicy");
  std::vector<std::string> ips, families;
  if (const json::Value* l = json::find(spec, "clusterIPs"); l && l->IsArray())
    for (auto& ip : l->GetArray()) ips.emplace_back(ip.IsString() ? json::view(ip) : "");
  if (const json::Value* l = json::find(spec, "ipFamilies"); l && l->IsArray())
    for (auto& f : l->GetArray()) families.emplace_back(f.IsString() ? json::view(f) : "");
  if (policy == "SingleStack") {
    if (ips.size() == 2)
      errs.invalid("spec.ipFamilyPolicy", quote(policy),
                   "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified");
    if (families.size() == 2)
      errs.invalid("spec.ipFamilyPolicy", quote(policy),
                   "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified");
  }
  std::string repr = "[]string{";
  for (size_t i = 0; i < ips.size(); ++i) repr += (i ? ", " : "") + quote(ips[i]);
  repr += "}";
  for (size_t i = 0; i < ips.size() && ips[i] != "None"; ++i)
    if (i >= families.size() && meta::validation::ipFamily(ips[i]) == 6)
      errs.invalid("spec.clusterIPs[" + std::to_string(i) + "]", repr,
                   "IPv6 is not configured on this cluster");
  if (!errs.empty()) return ApiError::invalid("", "Service", name, std::move(errs.causes()));
  // A headless service without selector may name both families.
  const json::Value* sel = json::find(spec, "selector");
  if (json::getString(spec, "clusterIP") == "None" && (!sel || !sel->IsObject() || sel->MemberCount() == 0))
    return okStatus();
  if (policy == "RequireDualStack")
    errs.invalid("spec.ipFamilyPolicy", quote(policy),
                 "this cluster is not configured for dual-stack services");
  for (size_t i = 0; i < families.size(); ++i)
    if (families[i] != "IPv4")
      errs.invalid("spec.ipFamilies[" + std::to_string(i) + "]", quote(families[i]),
                   "not configured on this cluster");
  if (!errs.empty()) return ApiError::invalid("", "Service", name, std::move(errs.causes()));
  return okStatus();
}

}  // namespace

void Registry::wireServiceHooks(Store& services) {
  ServiceAllocator& alloc = *allocator_;
  // Rebuild what is allocated from what is stored.
  storage::CacheListRequest req;
  req.prefix = services.resource().storage_prefix;
  storage::CacheListResponse resp;
  services.cache().list(req, resp);
  for (auto& o : resp.items) {
    json::Document d;
    d.Parse(o->json.data(), o->json.size());
    const json::Value* spec = json::find(d, "spec");
    if (!spec) continue;
    std::string_view ip = json::getString(*spec, "clusterIP");
    if (!ip.empty() && ip != "None") alloc.markIP(std::string(ip));
    if (const json::Value* ports = json::find(*spec, "ports"); ports && ports->IsArray())
      for (auto& p : ports->GetArray())
        if (auto np = json::getInt(p, "nodePort"); np && *np) alloc.markPort(static_cast<int>(*np));
  }

  StoreHooks hooks;
  hooks.before_create = [&alloc](json::Document& obj, bool) -> Status {
    auto& a = obj.GetAllocator();
    std::string name(json::getStringPath(obj, {"metadata", "name"}));
    json::Value& spec = json::ensureObject(obj, "spec", a);
    if (auto st = checkIPFamilies(spec, name); !st) return st;
    if (json::getString(spec, "clusterIP") == "None") {
      json::Value ips(rapidjson::kArrayType);
      ips.PushBack("None", a);
      json::set(spec, "clusterIPs", std::move(ips), a);
    } else if (wantsClusterIP(spec)) {
      std::string requested(json::getString(spec, "clusterIP"));
      if (requested.empty())
        if (const json::Value* ips = json::find(spec, "clusterIPs"); ips && ips->IsArray() && ips->Size())
          requested = json::view((*ips)[0]);
      auto ip = alloc.allocateIP(requested);
      if (!ip)
        return allocationError(name, "spec.clusterIPs", "[]string{\"" + requested + "\"}",
                               ip.error().message);
      json::setString(spec, "clusterIP", ip.value(), a);
      json::Value ips(rapidjson::kArrayType);
      ips.PushBack(json::str(ip.value(), a), a);
      json::set(spec, "clusterIPs", std::move(ips), a);
    }
    if (needsNodePorts(spec)) {
      std::vector<int> taken;
      if (auto st = allocatePorts(alloc, spec, a, name, nullptr, taken); !st) {
        std::string ip(json::getString(spec, "clusterIP"));
        if (!ip.empty() && ip != "None") alloc.releaseIP(ip);
        return st;
      }
    }
    return okStatus();
  };
  hooks.create_failed = [&alloc](const json::Value& obj) { releaseAll(alloc, obj); };
  hooks.after_delete = [&alloc](const json::Value& obj) { releaseAll(alloc, obj); };
  hooks.before_update = [&alloc](json::Document& obj, const json::Value& old, bool dry_run) -> Status {
    auto& a = obj.GetAllocator();
    std::string name(json::getStringPath(obj, {"metadata", "name"}));
    json::Value& spec = json::ensureObject(obj, "spec", a);
    const json::Value* oldSpec = json::find(old, "spec");
    if (oldSpec && json::getString(spec, "clusterIP").empty() && wantsClusterIP(spec)) {
      if (const json::Value* ip = json::find(*oldSpec, "clusterIP"))
        json::set(spec, "clusterIP", json::Value(*ip, a), a);
      if (const json::Value* ips = json::find(*oldSpec, "clusterIPs"))
        json::set(spec, "clusterIPs", json::Value(*ips, a), a);
    }
    if (auto st = checkIPFamilies(spec, name); !st) return st;
    if (needsNodePorts(spec) && !dry_run) {
      std::vector<int> taken;
      if (auto st = allocatePorts(alloc, spec, a, name, oldSpec, taken); !st) return st;
    } else if (!needsNodePorts(spec)) {
      if (json::Value* ports = json::find(spec, "ports"); ports && ports->IsArray())
        for (auto& p : ports->GetArray()) {
          if (auto np = json::getInt(p, "nodePort"); np && *np && !dry_run)
            alloc.releasePort(static_cast<int>(*np));
          json::remove(p, "nodePort");
        }
    }
    return okStatus();
  };
  services.setHooks(std::move(hooks));
}

}  // namespace shepherd::registry
