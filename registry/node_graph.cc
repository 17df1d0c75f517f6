#include "registry/node_graph.h"

namespace shepherd::registry {

namespace {

bool refersTo(const json::Value* v, std::initializer_list<std::string_view> path, const std::string& name) {
  return v && json::getStringPath(*v, path) == name;
}

}  // namespace

bool podUses(const json::Value& pod, const std::string& resource, const std::string& name) {
  bool secret = resource == "secrets";
  const json::Value* spec = json::find(pod, "spec");
  if (!spec) return false;
  if (resource == "serviceaccounts") {
    std::string_view sa = json::getString(*spec, "serviceAccountName");
    return (sa.empty() ? std::string_view("default") : sa) == name;
  }
  if (secret)
    if (const json::Value* ps = json::find(*spec, "imagePullSecrets"); ps && ps->IsArray())
      for (auto& s : ps->GetArray())
        if (json::getString(s, "name") == name) return true;
  if (const json::Value* vols = json::find(*spec, "volumes"); vols && vols->IsArray())
    for (auto& v : vols->GetArray()) {
      if (secret ? refersTo(&v, {"secret", "secretName"}, name) : refersTo(&v, {"configMap", "name"}, name))
        return true;
      if (const json::Value* sources = json::findPath(v, {"projected", "sources"});
          sources && sources->IsArray())
        for (auto& s : sources->GetArray())
          if (refersTo(&s, {secret ? "secret" : "configMap", "name"}, name)) return true;
    }
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    const json::Value* cs = json::find(*spec, list);
    if (!cs || !cs->IsArray()) continue;
    for (auto& c : cs->GetArray()) {
      if (const json::Value* env = json::find(c, "env"); env && env->IsArray())
        for (auto& e : env->GetArray())
          if (refersTo(&e, {"valueFrom", secret ? "secretKeyRef" : "configMapKeyRef", "name"}, name))
            return true;
      if (const json::Value* from = json::find(c, "envFrom"); from && from->IsArray())
        for (auto& f : from->GetArray())
          if (refersTo(&f, {secret ? "secretRef" : "configMapRef", "name"}, name)) return true;
    }
  }
  return false;
}

bool PodNodeGraph::podOnNode(const std::string& node, const std::string& ns, const std::string& pod) const {
  if (!pods_ || ns.empty() || pod.empty()) return false;
  auto p = pods_->get(ns, pod);
  if (!p.ok()) return false;
  const std::string* bound = (*p)->field("spec.nodeName");
  return bound && *bound == node;
}

bool PodNodeGraph::usedByPodOnNode(const std::string& node, const std::string& resource,
                                   const std::string& ns, const std::string& name) const {
  if (!pods_) return false;
  ListOptions o;
  o.ns = ns;
  o.field_selector = "spec.nodeName=" + node;
  auto page = pods_->list(o);
  if (!page) return false;
  for (auto& item : page->items) {
    json::Document d;
    d.Parse(item->json.data(), item->json.size());
    if (!d.HasParseError() && podUses(d, resource, name)) return true;
  }
  return false;
}

}  // namespace shepherd::registry
