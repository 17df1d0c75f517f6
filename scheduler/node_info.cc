#include "scheduler/node_info.h"

#include <cmath>

#include "meta/quantity.h"

namespace shepherd::scheduler {

Resources& Resources::operator+=(const Resources& o) {
  milli_cpu += o.milli_cpu;
  memory += o.memory;
  ephemeral_storage += o.ephemeral_storage;
  pods += o.pods;
  return *this;
}

Resources& Resources::operator-=(const Resources& o) {
  milli_cpu -= o.milli_cpu;
  memory -= o.memory;
  ephemeral_storage -= o.ephemeral_storage;
  pods -= o.pods;
  return *this;
}

void NodeInfo::addPod(const PodInfo& pod) {
  removePod(pod.key);
  requested += pod.requests;
  non_zero_requested += pod.non_zero_requests;
  for (const auto& hp : pod.host_ports) used_ports.insert(hp);
  pods[pod.key] = pod;
}

void NodeInfo::removePod(const std::string& key) {
  auto p = pods.find(key);
  if (p == pods.end()) return;
  requested -= p->second.requests;
  non_zero_requested -= p->second.non_zero_requests;
  for (const auto& hp : p->second.host_ports) used_ports.erase(hp);
  pods.erase(p);
}

namespace {

int64_t quantity(const json::Value* list, const char* name, bool milli) {
  if (!list || !list->IsObject()) return 0;
  const json::Value* q = json::find(*list, name);
  if (!q) return 0;
  auto v = meta::quantityValue(*q);
  if (!v) return 0;
  long double x = milli ? *v * 1000.0L : *v;
  return static_cast<int64_t>(std::ceil(x - 1e-9L));
}

// Upstream's DefaultMilliCPURequest and DefaultMemoryRequest (scheduler util).
constexpr int64_t kDefaultMilliCpuRequest = 100;
constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;

bool has(const json::Value* list, const char* name) {
  return list && list->IsObject() && json::find(*list, name) != nullptr;
}

PodResources containerRequests(const json::Value& c) {
  PodResources r;
  const json::Value* res = json::find(c, "resources");
  const json::Value* req = res ? json::find(*res, "requests") : nullptr;
  r.requests.milli_cpu = quantity(req, "cpu", true);
  r.requests.memory = quantity(req, "memory", false);
  r.requests.ephemeral_storage = quantity(req, "ephemeral-storage", false);
  r.non_zero = r.requests;
  if (!has(req, "cpu")) r.non_zero.milli_cpu = kDefaultMilliCpuRequest;
  if (!has(req, "memory")) r.non_zero.memory = kDefaultMemoryRequest;
  return r;
}

// Init containers run one at a time: the pod needs the largest of them.
void takeLarger(Resources& into, const Resources& r) {
  into.milli_cpu = std::max(into.milli_cpu, r.milli_cpu);
  into.memory = std::max(into.memory, r.memory);
  into.ephemeral_storage = std::max(into.ephemeral_storage, r.ephemeral_storage);
}

NodeSelectorTerm parseTerm(const json::Value& term) {
  NodeSelectorTerm out;
  for (const char* which : {"matchExpressions", "matchFields"}) {
    const json::Value* exprs = json::find(term, which);
    if (!exprs || !exprs->IsArray()) continue;
    for (auto& e : exprs->GetArray()) {
      NodeSelectorRequirement r;
      r.key = json::getString(e, "key");
      r.op = json::getString(e, "operator");
      r.field = std::string_view(which) == "matchFields";
      if (const json::Value* vs = json::find(e, "values"); vs && vs->IsArray())
        for (auto& v : vs->GetArray()) r.values.emplace_back(json::view(v));
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace

PodResources podRequests(const json::Value& spec) {
  // Effective request, as upstream's PodRequests: the sum over containers and sidecars
  // (init containers with restartPolicy Always, which keep running), or what the init
  // phase needs at its peak if that is larger — a regular init container runs beside the
  // sidecars started before it — plus pod overhead.
  PodResources sum;
  if (const json::Value* cs = json::find(spec, "containers"); cs && cs->IsArray())
    for (auto& c : cs->GetArray()) {
      PodResources r = containerRequests(c);
      sum.requests += r.requests;
      sum.non_zero += r.non_zero;
    }
  PodResources initPeak, sidecars;
  if (const json::Value* ics = json::find(spec, "initContainers"); ics && ics->IsArray())
    for (auto& c : ics->GetArray()) {
      PodResources r = containerRequests(c);
      PodResources use = sidecars;
      use.requests += r.requests;
      use.non_zero += r.non_zero;
      if (json::getString(c, "restartPolicy") == "Always") {
        sum.requests += r.requests;
        sum.non_zero += r.non_zero;
        sidecars = use;
      }
      takeLarger(initPeak.requests, use.requests);
      takeLarger(initPeak.non_zero, use.non_zero);
    }
  takeLarger(sum.requests, initPeak.requests);
  takeLarger(sum.non_zero, initPeak.non_zero);
  if (const json::Value* oh = json::find(spec, "overhead")) {
    Resources o;
    o.milli_cpu = quantity(oh, "cpu", true);
    o.memory = quantity(oh, "memory", false);
    sum.requests += o;
    sum.non_zero += o;
  }
  sum.requests.pods = sum.non_zero.pods = 1;
  return sum;
}

PodInfo parsePod(const json::Value& pod) {
  PodInfo p;
  p.ns = json::getStringPath(pod, {"metadata", "namespace"});
  p.name = json::getStringPath(pod, {"metadata", "name"});
  p.uid = json::getStringPath(pod, {"metadata", "uid"});
  p.key = p.ns + "/" + p.name;
  p.creation = json::getStringPath(pod, {"metadata", "creationTimestamp"});
  p.deleting = json::findPath(pod, {"metadata", "deletionTimestamp"}) != nullptr;
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  p.terminal = phase == "Succeeded" || phase == "Failed";
  static const json::Value empty(rapidjson::kObjectType);
  const json::Value* spec = json::find(pod, "spec");
  if (!spec) spec = &empty;
  p.scheduler_name = json::getString(*spec, "schedulerName", "default-scheduler");
  p.node_name = json::getString(*spec, "nodeName");
  p.priority = static_cast<int32_t>(json::getInt(*spec, "priority").value_or(0));
  PodResources r = podRequests(*spec);
  p.requests = r.requests;
  p.non_zero_requests = r.non_zero;
  if (const json::Value* ns = json::find(*spec, "nodeSelector"); ns && ns->IsObject())
    for (auto& m : ns->GetObject()) p.node_selector.emplace(json::view(m.name), json::view(m.value));
  if (const json::Value* na = json::findPath(*spec, {"affinity", "nodeAffinity"})) {
    if (const json::Value* req =
            json::findPath(*na, {"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
        req && req->IsArray())
      for (auto& t : req->GetArray()) p.required_terms.push_back(parseTerm(t));
    if (const json::Value* pref = json::find(*na, "preferredDuringSchedulingIgnoredDuringExecution");
        pref && pref->IsArray())
      for (auto& t : pref->GetArray()) {
        const json::Value* term = json::find(t, "preference");
        if (!term) continue;
        p.preferred_terms.push_back(
            {static_cast<int32_t>(json::getInt(t, "weight").value_or(0)), parseTerm(*term)});
      }
  }
  if (const json::Value* ts = json::find(*spec, "tolerations"); ts && ts->IsArray())
    for (auto& t : ts->GetArray())
      p.tolerations.push_back(
          {std::string(json::getString(t, "key")), std::string(json::getString(t, "operator", "Equal")),
           std::string(json::getString(t, "value")), std::string(json::getString(t, "effect"))});
  for (const char* list : {"containers", "initContainers"}) {
    const json::Value* cs = json::find(*spec, list);
    if (!cs || !cs->IsArray()) continue;
    for (auto& c : cs->GetArray()) {
      const json::Value* ports = json::find(c, "ports");
      if (!ports || !ports->IsArray()) continue;
      for (auto& port : ports->GetArray()) {
        auto hp = json::getInt(port, "hostPort");
        if (!hp || *hp <= 0) continue;
        HostPort h;
        h.port = static_cast<int32_t>(*hp);
        h.protocol = json::getString(port, "protocol", "TCP");
        h.ip = json::getString(port, "hostIP", "0.0.0.0");
        if (h.ip.empty()) h.ip = "0.0.0.0";
        p.host_ports.push_back(h);
      }
    }
  }
  return p;
}

NodeInfo parseNode(const json::Value& node) {
  NodeInfo n;
  n.name = json::getStringPath(node, {"metadata", "name"});
  if (const json::Value* labels = json::findPath(node, {"metadata", "labels"}); labels && labels->IsObject())
    for (auto& m : labels->GetObject()) n.labels.emplace(json::view(m.name), json::view(m.value));
  if (const json::Value* taints = json::findPath(node, {"spec", "taints"}); taints && taints->IsArray())
    for (auto& t : taints->GetArray())
      n.taints.push_back({std::string(json::getString(t, "key")), std::string(json::getString(t, "value")),
                          std::string(json::getString(t, "effect"))});
  const json::Value* u = json::findPath(node, {"spec", "unschedulable"});
  n.unschedulable = u && u->IsBool() && u->GetBool();
  if (const json::Value* conds = json::findPath(node, {"status", "conditions"}); conds && conds->IsArray())
    for (auto& c : conds->GetArray())
      if (json::getString(c, "type") == "Ready") n.ready = json::getString(c, "status") == "True";
  const json::Value* alloc = json::findPath(node, {"status", "allocatable"});
  if (!alloc || !alloc->IsObject() || alloc->MemberCount() == 0)
    alloc = json::findPath(node, {"status", "capacity"});
  n.allocatable.milli_cpu = quantity(alloc, "cpu", true);
  n.allocatable.memory = quantity(alloc, "memory", false);
  n.allocatable.ephemeral_storage = quantity(alloc, "ephemeral-storage", false);
  n.allocatable.pods = quantity(alloc, "pods", false);
  return n;
}

}  // namespace shepherd::scheduler
