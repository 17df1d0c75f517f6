#include "meta/quota.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "common/clock.h"
#include "meta/quantity.h"

namespace shepherd::meta::quota {

namespace {

constexpr const char* kClassSuffixClaims = ".storageclass.storage.k8s.io/persistentvolumeclaims";
constexpr const char* kClassSuffixStorage = ".storageclass.storage.k8s.io/requests.storage";

bool startsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

bool isNative(std::string_view n) {
  return n.find('/') == std::string_view::npos || n.find("kubernetes.io/") != std::string_view::npos;
}

Amount amountOf(const json::Value& q) {
  std::string text = quantityText(q);
  Amount a;
  a.value = parseQuantity(text).value_or(0);
  a.binary = text.find('i') != std::string::npos;
  return a;
}

void add(ResourceList& l, const std::string& k, const Amount& a) {
  auto it = l.find(k);
  if (it == l.end())
    l[k] = a;
  else
    it->second.value += a.value;
}

// The container's requests and limits (requests default to limits, as the API's pod
// defaulting makes them).
std::pair<ResourceList, ResourceList> containerResources(const json::Value& c) {
  ResourceList req = parseList(json::findPath(c, {"resources", "requests"}));
  ResourceList lim = parseList(json::findPath(c, {"resources", "limits"}));
  for (const auto& [k, v] : lim)
    if (!req.count(k)) req[k] = v;
  return {req, lim};
}

void maxInto(ResourceList& m, const ResourceList& l) {
  for (const auto& [k, v] : l) {
    auto it = m.find(k);
    if (it == m.end())
      m[k] = v;
    else
      it->second.value = std::max(it->second.value, v.value);
  }
}

}  // namespace

std::pair<ResourceList, ResourceList> podRequestsAndLimits(const json::Value& pod, bool with_overhead) {
  ResourceList req, lim, initReq, initLim;
  for (const char* list : {"containers", "initContainers"}) {
    const json::Value* cs = json::findPath(pod, {"spec", list});
    if (!cs || !cs->IsArray()) continue;
    for (const auto& c : cs->GetArray()) {
      auto [r, l] = containerResources(c);
      bool regularInit =
          std::string_view(list) == "initContainers" && json::getString(c, "restartPolicy") != "Always";
      if (regularInit) {
        maxInto(initReq, r);
        maxInto(initLim, l);
        continue;
      }
      for (const auto& [k, v] : r) add(req, k, v);
      for (const auto& [k, v] : l) add(lim, k, v);
    }
  }
  maxInto(req, initReq);
  maxInto(lim, initLim);
  if (with_overhead)
    for (const auto& [k, v] : parseList(json::findPath(pod, {"spec", "overhead"}))) {
      add(req, k, v);
      if (lim.count(k)) add(lim, k, v);
    }
  return {req, lim};
}

namespace {

bool bestEffort(const json::Value& pod) {
  for (const char* list : {"containers", "initContainers"}) {
    const json::Value* cs = json::findPath(pod, {"spec", list});
    if (!cs || !cs->IsArray()) continue;
    for (const auto& c : cs->GetArray())
      for (const char* part : {"requests", "limits"})
        if (const json::Value* m = json::findPath(c, {"resources", part}); m && m->IsObject())
          for (const char* res : {"cpu", "memory"})
            if (json::find(*m, res)) return false;
  }
  return true;
}

bool crossNamespaceAffinity(const json::Value& pod) {
  for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
    const json::Value* a = json::findPath(pod, {"spec", "affinity", kind});
    if (!a || !a->IsObject()) continue;
    auto termCrosses = [](const json::Value& t) {
      const json::Value* ns = json::find(t, "namespaces");
      const json::Value* sel = json::find(t, "namespaceSelector");
      return (ns && ns->IsArray() && !ns->Empty()) || (sel && !sel->IsNull());
    };
    if (const json::Value* req = json::find(*a, "requiredDuringSchedulingIgnoredDuringExecution");
        req && req->IsArray())
      for (const auto& t : req->GetArray())
        if (termCrosses(t)) return true;
    if (const json::Value* pref = json::find(*a, "preferredDuringSchedulingIgnoredDuringExecution");
        pref && pref->IsArray())
      for (const auto& w : pref->GetArray())
        if (const json::Value* t = json::find(w, "podAffinityTerm"); t && termCrosses(*t)) return true;
  }
  return false;
}

bool scopeMatches(const std::string& scope, const std::string& op, const json::Value* values,
                  const json::Value& pod) {
  if (scope == "Terminating" || scope == "NotTerminating") {
    auto d = json::getInt(*json::find(pod, "spec"), "activeDeadlineSeconds");
    bool terminating = d && *d >= 0;
    return scope == "Terminating" ? terminating : !terminating;
  }
  if (scope == "BestEffort") return bestEffort(pod);
  if (scope == "NotBestEffort") return !bestEffort(pod);
  if (scope == "CrossNamespacePodAffinity") return crossNamespaceAffinity(pod);
  if (scope == "PriorityClass") {
    std::string name(json::getStringPath(pod, {"spec", "priorityClassName"}));
    if (op == "Exists") return !name.empty();
    if (op == "DoesNotExist") return name.empty();
    bool in = false;
    if (values && values->IsArray())
      for (const auto& v : values->GetArray())
        in = in || (v.IsString() && !name.empty() && json::view(v) == name);
    if (op == "In") return in;
    if (op == "NotIn") return !in;
  }
  return false;
}

std::string formatInteger(long double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(std::llround(v)));
  return buf;
}

}  // namespace

std::string format(const Amount& a) {
  long double v = a.value;
  bool integral = std::fabs(v - std::round(v)) < 1e-9L;
  if (integral) {
    long long n = std::llround(v);
    if (a.binary && n != 0) {
      static const char* suffixes[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
      for (int i = 0; i < 6; ++i) {
        long long unit = 1LL << (10 * (6 - i));
        if (n % unit == 0) return std::to_string(n / unit) + suffixes[i];
      }
    }
    return canonicalQuantity(formatInteger(v));
  }
  long double milli = v * 1000;
  if (std::fabs(milli - std::round(milli)) < 1e-6L) return canonicalQuantity(formatInteger(milli) + "m");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9Lf", v);
  return canonicalQuantity(buf);
}

ResourceList parseList(const json::Value* m) {
  ResourceList out;
  if (m && m->IsObject())
    for (const auto& kv : m->GetObject()) out[std::string(json::view(kv.name))] = amountOf(kv.value);
  return out;
}

json::Value toJson(const ResourceList& l, json::Allocator& a) {
  json::Value out(rapidjson::kObjectType);
  for (const auto& [k, v] : l) json::setString(out, k, format(v), a);
  return out;
}

std::string listText(const ResourceList& l) {
  std::string out;
  for (const auto& [k, v] : l) out += (out.empty() ? "" : ",") + k + "=" + format(v);
  return out;
}

bool matchesResource(const Resource& r, const std::string& name) {
  if (r.group.empty() && r.plural == "pods") {
    static const std::set<std::string> names = {"count/pods",
                                                "cpu",
                                                "memory",
                                                "ephemeral-storage",
                                                "requests.cpu",
                                                "requests.memory",
                                                "requests.ephemeral-storage",
                                                "limits.cpu",
                                                "limits.memory",
                                                "limits.ephemeral-storage",
                                                "pods"};
    if (names.count(name) || startsWith(name, "hugepages-") || startsWith(name, "requests.hugepages-"))
      return true;
    return startsWith(name, "requests.") && !isNative(name.substr(9));
  }
  if (r.group.empty() && r.plural == "services")
    return name == "count/services" || name == "services" || name == "services.nodeports" ||
           name == "services.loadbalancers";
  if (r.group.empty() && r.plural == "persistentvolumeclaims")
    return name == "count/persistentvolumeclaims" || name == "persistentvolumeclaims" ||
           name == "requests.storage" || endsWith(name, kClassSuffixClaims) ||
           endsWith(name, kClassSuffixStorage);
  std::string count = "count/" + r.plural + (r.group.empty() ? "" : "." + r.group);
  if (name == count) return true;
  return r.group.empty() && name == r.plural &&
         (r.plural == "configmaps" || r.plural == "secrets" || r.plural == "replicationcontrollers" ||
          r.plural == "resourcequotas");
}

bool podCounts(const json::Value& pod, long double now_seconds) {
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  if (phase == "Failed" || phase == "Succeeded") return false;
  const json::Value* meta = json::find(pod, "metadata");
  if (!meta) return true;
  std::string_view ts = json::getString(*meta, "deletionTimestamp");
  auto grace = json::getInt(*meta, "deletionGracePeriodSeconds");
  if (ts.empty() || !grace) return true;
  auto t = clock::parseRfc3339(ts);
  if (!t) return true;
  long double deleted = std::chrono::duration<long double>(t->time_since_epoch()).count();
  return now_seconds <= deleted + static_cast<long double>(*grace);
}

ResourceList usage(const Resource& r, const json::Value& obj, long double now_seconds) {
  ResourceList out;
  Amount one{1, false};
  if (r.group.empty() && r.plural == "pods") {
    out["count/pods"] = one;
    if (!podCounts(obj, now_seconds)) return out;
    out["pods"] = one;
    auto [req, lim] = podRequestsAndLimits(obj, true);
    for (const char* res : {"cpu", "memory", "ephemeral-storage"}) {
      if (auto it = req.find(res); it != req.end()) {
        out[res] = it->second;
        out[std::string("requests.") + res] = it->second;
      }
      if (auto it = lim.find(res); it != lim.end()) out[std::string("limits.") + res] = it->second;
    }
    for (const auto& [k, v] : req) {
      if (startsWith(k, "hugepages-")) {
        out[k] = v;
        out["requests." + k] = v;
      } else if (!isNative(k)) {
        out["requests." + k] = v;
      }
    }
    return out;
  }
  if (r.group.empty() && r.plural == "services") {
    out["count/services"] = one;
    out["services"] = one;
    Amount nodePorts{0, false}, lbs{0, false};
    std::string_view type = json::getStringPath(obj, {"spec", "type"});
    const json::Value* ports = json::findPath(obj, {"spec", "ports"});
    size_t n = ports && ports->IsArray() ? ports->Size() : 0;
    if (type == "NodePort") nodePorts.value = static_cast<long double>(n);
    if (type == "LoadBalancer") {
      lbs.value = 1;
      const json::Value* alloc = json::findPath(obj, {"spec", "allocateLoadBalancerNodePorts"});
      if (alloc && alloc->IsBool() && !alloc->GetBool()) {
        size_t explicitPorts = 0;
        if (ports && ports->IsArray())
          for (const auto& p : ports->GetArray())
            explicitPorts += json::getInt(p, "nodePort").value_or(0) != 0;
        nodePorts.value = static_cast<long double>(explicitPorts);
      } else {
        nodePorts.value = static_cast<long double>(n);
      }
    }
    out["services.nodeports"] = nodePorts;
    out["services.loadbalancers"] = lbs;
    return out;
  }
  if (r.group.empty() && r.plural == "persistentvolumeclaims") {
    out["count/persistentvolumeclaims"] = one;
    out["persistentvolumeclaims"] = one;
    std::string cls;
    if (const json::Value* ann = json::findPath(obj, {"metadata", "annotations"}); ann && ann->IsObject())
      cls = std::string(json::getString(*ann, "volume.beta.kubernetes.io/storage-class"));
    if (cls.empty()) cls = std::string(json::getStringPath(obj, {"spec", "storageClassName"}));
    if (!cls.empty()) out[cls + kClassSuffixClaims] = one;
    if (const json::Value* q = json::findPath(obj, {"spec", "resources", "requests", "storage"})) {
      Amount s = amountOf(*q);
      if (const json::Value* alloc = json::findPath(obj, {"status", "allocatedResources", "storage"})) {
        Amount al = amountOf(*alloc);
        if (al.value > s.value) s = al;
      }
      s.value = std::ceil(s.value);
      out["requests.storage"] = s;
      if (!cls.empty()) out[cls + kClassSuffixStorage] = s;
    }
    return out;
  }
  out["count/" + r.plural + (r.group.empty() ? "" : "." + r.group)] = one;
  if (r.group.empty() && (r.plural == "configmaps" || r.plural == "secrets" ||
                          r.plural == "replicationcontrollers" || r.plural == "resourcequotas"))
    out[r.plural] = one;
  return out;
}

bool matchesScopes(const Resource& r, const json::Value& quota, const json::Value& obj) {
  const json::Value* scopes = json::findPath(quota, {"spec", "scopes"});
  const json::Value* exprs = json::findPath(quota, {"spec", "scopeSelector", "matchExpressions"});
  bool anyScope =
      (scopes && scopes->IsArray() && !scopes->Empty()) || (exprs && exprs->IsArray() && !exprs->Empty());
  if (!anyScope) return true;
  if (!(r.group.empty() && r.plural == "pods")) return false;
  if (scopes && scopes->IsArray())
    for (const auto& s : scopes->GetArray())
      if (!s.IsString() || !scopeMatches(std::string(json::view(s)), "Exists", nullptr, obj)) return false;
  if (exprs && exprs->IsArray())
    for (const auto& e : exprs->GetArray())
      if (!scopeMatches(std::string(json::getString(e, "scopeName")),
                        std::string(json::getString(e, "operator")), json::find(e, "values"), obj))
        return false;
  return true;
}

std::string podConstraints(const json::Value& pod, const std::vector<std::string>& restricted) {
  static const std::set<std::string> compute = {
      "cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"};
  std::map<std::string, std::set<std::string>> missing;
  for (const char* list : {"containers", "initContainers"}) {
    const json::Value* cs = json::findPath(pod, {"spec", list});
    if (!cs || !cs->IsArray()) continue;
    for (const auto& c : cs->GetArray()) {
      auto [req, lim] = containerResources(c);
      for (const auto& res : restricted) {
        if (!compute.count(res)) continue;
        bool have;
        if (startsWith(res, "limits."))
          have = lim.count(res.substr(7));
        else
          have = req.count(startsWith(res, "requests.") ? res.substr(9) : res);
        if (!have) missing[res].insert(std::string(json::getString(c, "name")));
      }
    }
  }
  std::string out;
  for (const auto& [res, names] : missing) {
    std::string joined;
    for (const auto& n : names) joined += (joined.empty() ? "" : ",") + n;
    out += (out.empty() ? "" : "; ") + res + " for: " + joined;
  }
  return out.empty() ? "" : "must specify " + out;
}

}  // namespace shepherd::meta::quota
