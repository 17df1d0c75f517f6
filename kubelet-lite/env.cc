#include "kubelet-lite/env.h"

#include <cmath>
#include <cstdint>

#include "meta/quantity.h"
#include "meta/validation.h"

namespace shepherd::kubelet {

std::string expand(const std::string& in, const std::map<std::string, std::string>& env) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '$' || i + 1 >= in.size()) {
      out += in[i];
      continue;
    }
    char next = in[i + 1];
    if (next == '$') {  // escaped
      out += '$';
      ++i;
      continue;
    }
    if (next == '(') {
      size_t close = in.find(')', i + 2);
      if (close != std::string::npos) {
        std::string name = in.substr(i + 2, close - i - 2);
        auto it = env.find(name);
        if (it != env.end())
          out += it->second;
        else
          out += in.substr(i, close - i + 1);  // unresolved: kept as written
        i = close;
        continue;
      }
    }
    out += in[i];
  }
  return out;
}

std::optional<std::string> fieldRef(const PodFacts& facts, const std::string& path) {
  const json::Value& pod = *facts.pod;
  auto bracket = [&](const std::string& prefix,
                     std::initializer_list<std::string_view> mapPath) -> std::optional<std::string> {
    if (path.rfind(prefix + "['", 0) != 0 || path.size() < prefix.size() + 4) return std::nullopt;
    std::string key = path.substr(prefix.size() + 2, path.size() - prefix.size() - 4);
    const json::Value* m = json::findPath(pod, mapPath);
    if (!m || !m->IsObject()) return std::string();
    return std::string(json::getString(*m, key));
  };
  if (path == "metadata.name") return std::string(json::getStringPath(pod, {"metadata", "name"}));
  if (path == "metadata.namespace") return std::string(json::getStringPath(pod, {"metadata", "namespace"}));
  if (path == "metadata.uid") return std::string(json::getStringPath(pod, {"metadata", "uid"}));
  if (path == "spec.nodeName") return facts.node_name;
  if (path == "spec.serviceAccountName")
    return std::string(json::getStringPath(pod, {"spec", "serviceAccountName"}));
  if (path == "status.hostIP" || path == "status.hostIPs") return facts.host_ip;
  if (path == "status.podIP" || path == "status.podIPs") return facts.pod_ip;
  if (auto v = bracket("metadata.labels", {"metadata", "labels"})) return v;
  if (auto v = bracket("metadata.annotations", {"metadata", "annotations"})) return v;
  if (path == "metadata.labels" || path == "metadata.annotations") {
    // Upstream's fieldpath.FormatMap: keys sorted, `key=%q` lines, no final newline.
    const json::Value* m =
        json::findPath(pod, {"metadata", path == "metadata.labels" ? "labels" : "annotations"});
    std::map<std::string, std::string> sorted;
    if (m && m->IsObject())
      for (auto& kv : m->GetObject())
        sorted[std::string(json::view(kv.name))] = std::string(json::view(kv.value));
    std::string out;
    for (const auto& [k, v] : sorted) {
      if (!out.empty()) out += '\n';
      out += k + "=" + meta::validation::quote(v);
    }
    return out;
  }
  return std::nullopt;
}

std::optional<std::string> resourceFieldRef(const json::Value& container, const PodFacts& facts,
                                            const std::string& resource, const std::string& divisor) {
  // requests.x / limits.x; limits fall back to node allocatable, requests to 0 (upstream).
  auto dot = resource.find('.');
  if (dot == std::string::npos) return std::nullopt;
  std::string kind = resource.substr(0, dot), name = resource.substr(dot + 1);
  const json::Value* q =
      json::findPath(container, {"resources", kind == "limits" ? "limits" : "requests", name});
  std::optional<long double> value;
  if (q) value = meta::quantityValue(*q);
  // Upstream's MergeContainerResourceLimits: an unset or zero limit is node allocatable.
  if ((!value || *value == 0) && kind == "limits") {
    if (name == "cpu")
      value = meta::parseQuantity(facts.node_cpu);
    else if (name == "memory")
      value = meta::parseQuantity(facts.node_memory);
  }
  if (!value) value = 0;
  long double div = 1;
  if (!divisor.empty()) {
    auto d = meta::parseQuantity(divisor);
    if (d && *d > 0) div = *d;
  }
  // Upstream rounds up to the next integer of the divisor unit (at least 1 for cpu).
  long double units = std::ceil(*value / div - 1e-12L);
  if (name == "cpu" && units < 1 && *value > 0) units = 1;
  return std::to_string(static_cast<long long>(units));
}

Result<EnvList> buildEnv(const json::Value& container, const PodFacts& facts, const DataLookup& lookup) {
  EnvList env;
  std::map<std::string, std::string> known;
  auto set = [&](const std::string& k, const std::string& v) {
    for (auto& [ek, ev] : env)
      if (ek == k) {
        ev = v;
        known[k] = v;
        return;
      }
    env.emplace_back(k, v);
    known[k] = v;
  };
  std::string ns(json::getStringPath(*facts.pod, {"metadata", "namespace"}));
  auto missing = [](const std::string& msg) {
    ApiError e = ApiError::make(400, "CreateContainerConfigError", msg);
    return e;
  };
  if (const json::Value* from = json::find(container, "envFrom"); from && from->IsArray()) {
    for (auto& src : from->GetArray()) {
      std::string prefix(json::getString(src, "prefix"));
      for (const char* kind : {"configMapRef", "secretRef"}) {
        const json::Value* ref = json::find(src, kind);
        if (!ref) continue;
        std::string name(json::getString(*ref, "name"));
        bool optional = json::getBool(*ref, "optional");
        auto data = lookup(std::string(kind) == "configMapRef" ? "configmaps" : "secrets", ns, name);
        if (!data) {
          if (optional) continue;
          return missing(std::string(std::string(kind) == "configMapRef" ? "configmap" : "secret") + " \"" +
                         name + "\" not found");
        }
        for (const auto& [k, v] : *data) set(prefix + k, v);
      }
    }
  }
  if (const json::Value* vars = json::find(container, "env"); vars && vars->IsArray()) {
    for (auto& e : vars->GetArray()) {
      std::string name(json::getString(e, "name"));
      const json::Value* from = json::find(e, "valueFrom");
      if (!from) {
        set(name, expand(std::string(json::getString(e, "value")), known));
        continue;
      }
      if (const json::Value* f = json::find(*from, "fieldRef")) {
        auto v = fieldRef(facts, std::string(json::getString(*f, "fieldPath")));
        set(name, v.value_or(""));
      } else if (const json::Value* r = json::find(*from, "resourceFieldRef")) {
        const json::Value* target = &container;
        std::string_view cname = json::getString(*r, "containerName");
        if (!cname.empty()) {
          for (const char* list : {"containers", "initContainers"})
            if (const json::Value* cs = json::findPath(*facts.pod, {"spec", list}); cs && cs->IsArray())
              for (auto& c : cs->GetArray())
                if (json::getString(c, "name") == cname) target = &c;
        }
        std::string divisor;
        if (const json::Value* d = json::find(*r, "divisor"))
          divisor = d->IsString() ? std::string(json::view(*d)) : json::serialize(*d);
        auto v = resourceFieldRef(*target, facts, std::string(json::getString(*r, "resource")), divisor);
        set(name, v.value_or(""));
      } else {
        for (const char* kind : {"configMapKeyRef", "secretKeyRef"}) {
          const json::Value* ref = json::find(*from, kind);
          if (!ref) continue;
          std::string objName(json::getString(*ref, "name"));
          std::string key(json::getString(*ref, "key"));
          bool optional = json::getBool(*ref, "optional");
          bool isCm = std::string(kind) == "configMapKeyRef";
          auto data = lookup(isCm ? "configmaps" : "secrets", ns, objName);
          if (!data) {
            if (optional) break;
            return missing(std::string(isCm ? "configmap" : "secret") + " \"" + objName + "\" not found");
          }
          auto it = data->find(key);
          if (it == data->end()) {
            if (optional) break;
            return missing("couldn't find key " + key + " in " + (isCm ? "ConfigMap " : "Secret ") + ns +
                           "/" + objName);
          }
          set(name, it->second);
        }
      }
    }
  }
  return env;
}

}  // namespace shepherd::kubelet
