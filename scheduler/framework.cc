#include "scheduler/framework.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace shepherd::scheduler {

namespace {

const std::string kNotReady = "node(s) were not ready";
const std::string kUnschedulable = "node(s) were unschedulable";
const std::string kAffinity = "node(s) didn't match Pod's node affinity/selector";
const std::string kPorts = "node(s) didn't have free ports for the requested pod ports";

bool matchesRequirement(const NodeSelectorRequirement& r, const NodeInfo& node) {
  std::string value;
  bool has = false;
  if (r.field) {
    if (r.key == "metadata.name") {
      value = node.name;
      has = true;
    }
  } else {
    auto it = node.labels.find(r.key);
    if (it != node.labels.end()) {
      value = it->second;
      has = true;
    }
  }
  auto in = [&] { return std::find(r.values.begin(), r.values.end(), value) != r.values.end(); };
  if (r.op == "In") return has && in();
  if (r.op == "NotIn") return !has || !in();
  if (r.op == "Exists") return has;
  if (r.op == "DoesNotExist") return !has;
  if (r.op == "Gt" || r.op == "Lt") {
    if (!has || r.values.size() != 1) return false;
    char* e1 = nullptr;
    char* e2 = nullptr;
    long long have = std::strtoll(value.c_str(), &e1, 10);
    long long want = std::strtoll(r.values[0].c_str(), &e2, 10);
    if (*e1 || *e2) return false;
    return r.op == "Gt" ? have > want : have < want;
  }
  return false;
}

bool nodeSelectorMatches(const PodInfo& pod, const NodeInfo& node) {
  for (const auto& [k, v] : pod.node_selector) {
    auto it = node.labels.find(k);
    if (it == node.labels.end() || it->second != v) return false;
  }
  if (pod.required_terms.empty()) return true;
  for (const auto& term : pod.required_terms)
    if (!term.empty() && matchesTerm(term, node)) return true;  // terms are ORed; empty matches nothing
  return false;
}

int64_t fraction100(int64_t requested, int64_t allocatable) {
  if (allocatable <= 0) return 0;
  if (requested > allocatable) return 0;
  return (allocatable - requested) * 100 / allocatable;
}

}  // namespace

bool matchesTerm(const NodeSelectorTerm& term, const NodeInfo& node) {
  for (const auto& r : term)
    if (!matchesRequirement(r, node)) return false;
  return true;
}

bool tolerates(const std::vector<Toleration>& tolerations, const Taint& taint) {
  for (const auto& t : tolerations) {
    if (!t.effect.empty() && t.effect != taint.effect) continue;
    if (t.key.empty() && t.op == "Exists") return true;  // tolerates everything
    if (t.key != taint.key) continue;
    if (t.op == "Exists") return true;
    if (t.value == taint.value) return true;
  }
  return false;
}

std::vector<std::string> filter(const PodInfo& pod, const NodeInfo& node) {
  std::vector<std::string> reasons;
  if (!node.ready) reasons.push_back(kNotReady);
  if (node.unschedulable) {
    // A pod tolerating the unschedulable taint may still go there, as upstream.
    Taint t{"node.kubernetes.io/unschedulable", "", "NoSchedule"};
    if (!tolerates(pod.tolerations, t)) reasons.push_back(kUnschedulable);
  }
  if (!nodeSelectorMatches(pod, node)) reasons.push_back(kAffinity);
  for (const auto& t : node.taints) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
    if (!tolerates(pod.tolerations, t)) {
      reasons.push_back("node(s) had untolerated taint {" + t.key + ": " + t.value + "}");
      break;
    }
  }
  const Resources& a = node.allocatable;
  const Resources& r = node.requested;
  const Resources& q = pod.requests;
  if (r.pods + 1 > a.pods) reasons.push_back("Too many pods");
  if (q.milli_cpu > 0 && r.milli_cpu + q.milli_cpu > a.milli_cpu) reasons.push_back("Insufficient cpu");
  if (q.memory > 0 && r.memory + q.memory > a.memory) reasons.push_back("Insufficient memory");
  if (q.ephemeral_storage > 0 && r.ephemeral_storage + q.ephemeral_storage > a.ephemeral_storage)
    reasons.push_back("Insufficient ephemeral-storage");
  for (const auto& hp : pod.host_ports) {
    bool clash = false;
    for (const auto& used : node.used_ports)
      if (used.port == hp.port && used.protocol == hp.protocol &&
          (used.ip == hp.ip || used.ip == "0.0.0.0" || hp.ip == "0.0.0.0"))
        clash = true;
    if (clash) {
      reasons.push_back(kPorts);
      break;
    }
  }
  return reasons;
}

int64_t score(const PodInfo& pod, const NodeInfo& node) {
  // CPU and memory as scored by upstream: missing requests count as the defaults, on the
  // node's pods as on this one, so best-effort pods spread.
  int64_t cpu = node.non_zero_requested.milli_cpu + pod.non_zero_requests.milli_cpu;
  int64_t mem = node.non_zero_requested.memory + pod.non_zero_requests.memory;
  // NodeResourcesFit (LeastAllocated), weight 1.
  int64_t least =
      (fraction100(cpu, node.allocatable.milli_cpu) + fraction100(mem, node.allocatable.memory)) / 2;
  // NodeResourcesBalancedAllocation, weight 1: similar CPU and memory usage fractions.
  double cf = node.allocatable.milli_cpu > 0 ? static_cast<double>(cpu) / node.allocatable.milli_cpu : 1.0;
  double mf = node.allocatable.memory > 0 ? static_cast<double>(mem) / node.allocatable.memory : 1.0;
  cf = std::min(cf, 1.0);
  mf = std::min(mf, 1.0);
  int64_t balanced = static_cast<int64_t>((1.0 - std::abs(cf - mf) / 2.0) * 100);
  // NodeAffinity (preferred terms), weight 2: share of the total weight that matches.
  int64_t affinity = 0;
  int64_t total = 0;
  for (const auto& p : pod.preferred_terms) {
    total += p.weight;
    if (matchesTerm(p.term, node)) affinity += p.weight;
  }
  int64_t affinityScore = total > 0 ? affinity * 100 / total : 0;
  // TaintToleration, weight 3: fewer untolerated PreferNoSchedule taints is better.
  int64_t intolerable = 0;
  for (const auto& t : node.taints)
    if (t.effect == "PreferNoSchedule" && !tolerates(pod.tolerations, t)) ++intolerable;
  int64_t taintScore = std::max<int64_t>(0, 100 - 25 * intolerable);
  return least + balanced + 2 * affinityScore + 3 * taintScore;
}

std::string unschedulableMessage(size_t nodes, const std::vector<std::vector<std::string>>& reasons) {
  std::map<std::string, int> counts;
  for (const auto& perNode : reasons)
    for (const auto& r : perNode) counts[r]++;
  std::vector<std::string> parts;
  for (const auto& [r, n] : counts) parts.push_back(std::to_string(n) + " " + r);
  std::sort(parts.begin(), parts.end());
  std::string msg = "0/" + std::to_string(nodes) + " nodes are available";
  if (!parts.empty()) {
    msg += ": ";
    for (size_t i = 0; i < parts.size(); ++i) msg += (i ? ", " : "") + parts[i];
  }
  return msg + ".";
}

}  // namespace shepherd::scheduler
