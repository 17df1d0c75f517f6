#include "handlers/discovery.h"

#include <algorithm>

#include "common/json.h"

namespace shepherd::handlers {

namespace {

std::vector<std::string> subresourceVerbs(const std::string& sub) {
  if (sub == "status" || sub == "scale") return {"get", "patch", "update"};
  if (sub == "finalize") return {"update"};
  if (sub == "binding" || sub == "eviction" || sub == "token") return {"create"};
  if (sub == "log") return {"get"};
  if (sub == "exec" || sub == "attach" || sub == "portforward") return {"create", "get"};
  return {"get"};
}

// The kind a subresource reads and writes: its resource's own, or another for scale,
// binding, eviction and token.
struct SubresourceKind {
  std::string group, version, kind;
};

SubresourceKind subresourceKind(const apis::Resource& r, const std::string& sub) {
  if (sub == "scale") return {"autoscaling", "v1", "Scale"};
  if (sub == "binding") return {"", "v1", "Binding"};
  if (sub == "eviction") return {"policy", "v1", "Eviction"};
  if (sub == "token") return {"authentication.k8s.io", "v1", "TokenRequest"};
  if (sub == "exec") return {"", "v1", "PodExecOptions"};
  if (sub == "attach") return {"", "v1", "PodAttachOptions"};
  if (sub == "portforward") return {"", "v1", "PodPortForwardOptions"};
  return {r.group, r.version, r.kind};
}

json::Value strArray(const std::vector<std::string>& v, json::Allocator& a) {
  json::Value arr(rapidjson::kArrayType);
  for (const auto& s : v) arr.PushBack(json::str(s, a), a);
  return arr;
}

json::Value groupVersion(const std::string& group, const std::string& version, json::Allocator& a) {
  json::Value gv(rapidjson::kObjectType);
  gv.AddMember("groupVersion", json::str(group.empty() ? version : group + "/" + version, a), a);
  gv.AddMember("version", json::str(version, a), a);
  return gv;
}

json::Value groupObject(const apis::Catalog& c, const std::string& group, json::Allocator& a) {
  json::Value g(rapidjson::kObjectType);
  g.AddMember("name", json::str(group, a), a);
  json::Value versions(rapidjson::kArrayType);
  std::string preferred;
  for (const auto& gv : c.groupVersions()) {
    if (gv.group != group) continue;
    versions.PushBack(groupVersion(group, gv.version, a), a);
    if (preferred.empty()) preferred = gv.version;
  }
  g.AddMember("versions", versions, a);
  g.AddMember("preferredVersion", groupVersion(group, preferred, a), a);
  return g;
}

}  // namespace

std::string versionJson(const VersionInfo& v) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  d.AddMember("major", json::str(v.major, a), a);
  d.AddMember("minor", json::str(v.minor, a), a);
  d.AddMember("gitVersion", json::str(v.git_version, a), a);
  d.AddMember("gitCommit", "0000000000000000000000000000000000000000", a);
  d.AddMember("gitTreeState", "clean", a);
  d.AddMember("buildDate", "2026-11-29T00:00:00Z", a);
  d.AddMember("goVersion", "n/a (C++)", a);
  d.AddMember("compiler", "g++", a);
  d.AddMember("platform", "linux/amd64", a);
  return json::serialize(d);
}

std::string apiVersionsJson(const std::string& server_address) {
  return R"({"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":")" +
         server_address + R"("}]})";
}

std::string apiGroupListJson(const apis::Catalog& c) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  d.AddMember("kind", "APIGroupList", a);
  d.AddMember("apiVersion", "v1", a);
  json::Value groups(rapidjson::kArrayType);
  std::vector<std::string> seen;
  for (const auto& gv : c.groupVersions()) {
    if (gv.group.empty() || std::find(seen.begin(), seen.end(), gv.group) != seen.end()) continue;
    seen.push_back(gv.group);
    groups.PushBack(groupObject(c, gv.group, a), a);
  }
  d.AddMember("groups", groups, a);
  return json::serialize(d);
}

std::string apiGroupJson(const apis::Catalog& c, const std::string& group) {
  bool known = false;
  for (const auto& gv : c.groupVersions())
    if (gv.group == group && !group.empty()) known = true;
  if (!known) return "";
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  d.AddMember("kind", "APIGroup", a);
  d.AddMember("apiVersion", "v1", a);
  json::Value g = groupObject(c, group, a);
  for (auto& m : g.GetObject()) d.AddMember(json::Value(m.name, a), json::Value(m.value, a), a);
  return json::serialize(d);
}

std::string apiResourceListJson(const apis::Catalog& c, const std::string& group,
                                const std::string& version) {
  auto resources = c.resourcesOf(group, version);
  if (resources.empty()) return "";
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  d.AddMember("kind", "APIResourceList", a);
  d.AddMember("apiVersion", "v1", a);
  d.AddMember("groupVersion", json::str(group.empty() ? version : group + "/" + version, a), a);
  json::Value list(rapidjson::kArrayType);
  for (const auto& r : resources) {
    json::Value e(rapidjson::kObjectType);
    e.AddMember("name", json::str(r->plural, a), a);
    e.AddMember("singularName", json::str(r->singular, a), a);
    e.AddMember("namespaced", r->namespaced, a);
    e.AddMember("kind", json::str(r->kind, a), a);
    e.AddMember("verbs", strArray(r->verbs, a), a);
    if (!r->short_names.empty()) e.AddMember("shortNames", strArray(r->short_names, a), a);
    if (!r->categories.empty()) e.AddMember("categories", strArray(r->categories, a), a);
    list.PushBack(e, a);
    for (const auto& sub : r->subresources) {
      json::Value s(rapidjson::kObjectType);
      s.AddMember("name", json::str(r->plural + "/" + sub, a), a);
      s.AddMember("singularName", "", a);
      s.AddMember("namespaced", r->namespaced, a);
      SubresourceKind k = subresourceKind(*r, sub);
      if (k.group != r->group || k.version != r->version) {  // named only when it differs, as upstream
        s.AddMember("group", json::str(k.group, a), a);
        s.AddMember("version", json::str(k.version, a), a);
      }
      s.AddMember("kind", json::str(k.kind, a), a);
      s.AddMember("verbs", strArray(subresourceVerbs(sub), a), a);
      list.PushBack(s, a);
    }
  }
  d.AddMember("resources", list, a);
  return json::serialize(d);
}

std::string aggregatedDiscoveryJson(const apis::Catalog& c, bool core, const std::string& version) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  d.AddMember("kind", "APIGroupDiscoveryList", a);
  d.AddMember("apiVersion", json::str("apidiscovery.k8s.io/" + version, a), a);
  d.AddMember("metadata", json::Value(rapidjson::kObjectType), a);
  json::Value items(rapidjson::kArrayType);
  std::vector<std::string> groups;
  for (const auto& gv : c.groupVersions())
    if ((gv.group.empty() == core) && std::find(groups.begin(), groups.end(), gv.group) == groups.end())
      groups.push_back(gv.group);
  for (const auto& g : groups) {
    json::Value item(rapidjson::kObjectType);
    json::Value meta(rapidjson::kObjectType);
    if (!g.empty()) meta.AddMember("name", json::str(g, a), a);
    item.AddMember("metadata", meta, a);
    json::Value versions(rapidjson::kArrayType);
    for (const auto& gv : c.groupVersions()) {
      if (gv.group != g) continue;
      json::Value v(rapidjson::kObjectType);
      v.AddMember("version", json::str(gv.version, a), a);
      json::Value resources(rapidjson::kArrayType);
      for (const auto& r : c.resourcesOf(gv.group, gv.version)) {
        json::Value e(rapidjson::kObjectType);
        e.AddMember("resource", json::str(r->plural, a), a);
        json::Value kind(rapidjson::kObjectType);
        kind.AddMember("group", json::str(r->group, a), a);
        kind.AddMember("version", json::str(r->version, a), a);
        kind.AddMember("kind", json::str(r->kind, a), a);
        e.AddMember("responseKind", json::Value(kind, a), a);
        e.AddMember("scope", json::str(r->namespaced ? "Namespaced" : "Cluster", a), a);
        e.AddMember("singularResource", json::str(r->singular, a), a);
        e.AddMember("verbs", strArray(r->verbs, a), a);
        if (!r->short_names.empty()) e.AddMember("shortNames", strArray(r->short_names, a), a);
        if (!r->categories.empty()) e.AddMember("categories", strArray(r->categories, a), a);
        if (!r->subresources.empty()) {
          json::Value subs(rapidjson::kArrayType);
          for (const auto& sub : r->subresources) {
            json::Value s(rapidjson::kObjectType);
            s.AddMember("subresource", json::str(sub, a), a);
            SubresourceKind k = subresourceKind(*r, sub);
            json::Value sk(rapidjson::kObjectType);
            sk.AddMember("group", json::str(k.group, a), a);
            sk.AddMember("version", json::str(k.version, a), a);
            sk.AddMember("kind", json::str(k.kind, a), a);
            s.AddMember("responseKind", sk, a);
            s.AddMember("verbs", strArray(subresourceVerbs(sub), a), a);
            subs.PushBack(s, a);
          }
          e.AddMember("subresources", subs, a);
        }
        resources.PushBack(e, a);
      }
      v.AddMember("resources", resources, a);
      v.AddMember("freshness", "Current", a);
      versions.PushBack(v, a);
    }
    item.AddMember("versions", versions, a);
    items.PushBack(item, a);
  }
  d.AddMember("items", items, a);
  return json::serialize(d);
}

std::string wantsAggregatedDiscovery(std::string_view accept) {
  // Media ranges in order; the first one we can produce wins.
  size_t start = 0;
  while (start < accept.size()) {
    size_t comma = accept.find(',', start);
    if (comma == std::string_view::npos) comma = accept.size();
    std::string_view part = accept.substr(start, comma - start);
    start = comma + 1;
    bool aggregated = part.find("as=APIGroupDiscoveryList") != std::string_view::npos &&
                      part.find("g=apidiscovery.k8s.io") != std::string_view::npos;
    if (aggregated) {
      if (part.find("v=v2beta1") != std::string_view::npos) return "v2beta1";
      if (part.find("v=v2") != std::string_view::npos) return "v2";
      continue;
    }
    if (part.find("application/json") != std::string_view::npos || part.find("*/*") != std::string_view::npos)
      return "";
  }
  return "";
}

}  // namespace shepherd::handlers
