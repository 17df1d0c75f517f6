#include "controllers/disruption/budget_status.h"

#include <algorithm>

#include "common/clock.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/pod_state.h"
#include "meta/conditions.h"

namespace shepherd::controllers::disruption {

namespace {

constexpr const char* kCondition = "DisruptionAllowed";

int64_t statusInt(const json::Value& budget, const char* field) {
  const json::Value* st = json::find(budget, "status");
  return st && st->IsObject() ? json::getInt(*st, field).value_or(0) : 0;
}

int64_t generationOf(const json::Value& budget) {
  const json::Value* m = json::find(budget, "metadata");
  return m ? json::getInt(*m, "generation").value_or(0) : 0;
}

bool deleting(const json::Value& pod) {
  return json::findPath(pod, {"metadata", "deletionTimestamp"}) != nullptr;
}

int64_t allowedFor(const BudgetCounts& c) {
  int64_t allowed = c.current_healthy - c.desired_healthy;
  return c.expected <= 0 || allowed <= 0 ? 0 : allowed;
}

// pdbhelper.UpdateDisruptionAllowedCondition.
void updateCondition(json::Value& status, const std::string& now, json::Allocator& a) {
  int64_t allowed = json::getInt(status, "disruptionsAllowed").value_or(0);
  int64_t observed = json::getInt(status, "observedGeneration").value_or(0);
  if (allowed > 0)
    meta::setStatusCondition(status, {kCondition, "True", "SufficientPods", "", observed}, now, a);
  else
    meta::setStatusCondition(status, {kCondition, "False", "InsufficientPods", "", observed}, now, a);
}

json::Document copyOf(const json::Value& v) {
  json::Document d;
  d.CopyFrom(v, d.GetAllocator());
  return d;
}

}  // namespace

DisruptedPods disruptedPods(const json::Value& budget, const std::vector<client::Object>& pods,
                            TimePoint now) {
  DisruptedPods out;
  const json::Value* recorded = json::findPath(budget, {"status", "disruptedPods"});
  if (!recorded || !recorded->IsObject()) return out;
  for (const auto& pod : pods) {
    if (deleting(*pod)) continue;
    std::string name = nameOf(*pod);
    const json::Value* at = json::find(*recorded, name);
    if (!at || !at->IsString()) continue;
    auto t = clock::parseRfc3339(json::view(*at));
    if (!t) continue;
    TimePoint expected = *t + kDeletionTimeout;
    if (expected < now) {
      out.expired.push_back(name);
      continue;
    }
    if (!out.recheck || expected < *out.recheck) out.recheck = expected;
    out.pods[name] = std::string(json::view(*at));
  }
  return out;
}

int64_t healthyPods(const std::vector<client::Object>& pods, const DisruptedPods& disrupted, TimePoint now) {
  int64_t n = 0;
  for (const auto& pod : pods) {
    if (deleting(*pod)) continue;
    if (auto it = disrupted.pods.find(nameOf(*pod)); it != disrupted.pods.end()) {
      auto t = clock::parseRfc3339(it->second);
      if (t && *t + kDeletionTimeout > now) continue;
    }
    if (podReady(*pod)) ++n;
  }
  return n;
}

bool statusUpToDate(const json::Value& budget, const BudgetCounts& c, const DisruptedPods& disrupted) {
  int64_t allowed = allowedFor(c);
  int64_t generation = generationOf(budget);
  if (statusInt(budget, "currentHealthy") != c.current_healthy ||
      statusInt(budget, "desiredHealthy") != c.desired_healthy ||
      statusInt(budget, "expectedPods") != c.expected || statusInt(budget, "disruptionsAllowed") != allowed ||
      statusInt(budget, "observedGeneration") != generation)
    return false;
  // Semantic equality: an absent map equals an empty one.
  const json::Value* recorded = json::findPath(budget, {"status", "disruptedPods"});
  size_t have = recorded && recorded->IsObject() ? recorded->MemberCount() : 0;
  if (have != disrupted.pods.size()) return false;
  for (const auto& [name, at] : disrupted.pods) {
    const json::Value* v = json::find(*recorded, name);
    if (!v || !v->IsString() || json::view(*v) != at) return false;
  }
  // pdbhelper.ConditionsAreUpToDate.
  const json::Value* cond = meta::findCondition(json::findPath(budget, {"status", "conditions"}), kCondition);
  if (!cond || json::getInt(*cond, "observedGeneration").value_or(0) != generation) return false;
  if (allowed > 0)
    return json::getString(*cond, "status") == "True" && json::getString(*cond, "reason") == "SufficientPods";
  return json::getString(*cond, "status") == "False" &&
         json::getString(*cond, "reason") == "InsufficientPods";
}

json::Document withStatus(const json::Value& budget, const BudgetCounts& c, const DisruptedPods& disrupted,
                          const std::string& now) {
  json::Document d = copyOf(budget);
  auto& a = d.GetAllocator();
  json::Value conditions(rapidjson::kArrayType);
  if (const json::Value* old = json::findPath(budget, {"status", "conditions"}); old && old->IsArray())
    conditions.CopyFrom(*old, a);
  // PodDisruptionBudgetStatus's field order; disruptedPods and conditions when not empty.
  json::Value status(rapidjson::kObjectType);
  if (int64_t g = generationOf(budget); g != 0) status.AddMember("observedGeneration", json::Value(g), a);
  if (!disrupted.pods.empty()) {
    json::Value m(rapidjson::kObjectType);
    for (const auto& [name, at] : disrupted.pods) m.AddMember(json::str(name, a), json::str(at, a), a);
    status.AddMember("disruptedPods", m, a);
  }
  status.AddMember("disruptionsAllowed", json::Value(allowedFor(c)), a);
  status.AddMember("currentHealthy", json::Value(c.current_healthy), a);
  status.AddMember("desiredHealthy", json::Value(c.desired_healthy), a);
  status.AddMember("expectedPods", json::Value(c.expected), a);
  status.AddMember("conditions", conditions, a);
  updateCondition(status, now, a);
  json::set(d, "status", std::move(status), a);
  return d;
}

json::Document failedStatus(const json::Value& budget, const std::string& error, const std::string& now) {
  json::Document d = copyOf(budget);
  auto& a = d.GetAllocator();
  json::Value& status = json::ensureObject(d, "status", a);
  json::set(status, "disruptionsAllowed", json::Value(0), a);
  meta::setStatusCondition(
      status,
      {kCondition, "False", "SyncFailed", error, json::getInt(status, "observedGeneration").value_or(0)}, now,
      a);
  return d;
}

std::string goLabelSelector(const json::Value* selector) {
  if (!selector || !selector->IsObject()) return "nil";
  std::string s = "&LabelSelector{MatchLabels:map[string]string{";
  if (const json::Value* ml = json::find(*selector, "matchLabels"); ml && ml->IsObject()) {
    std::vector<std::pair<std::string, std::string>> kv;
    for (const auto& m : ml->GetObject()) kv.emplace_back(json::view(m.name), json::view(m.value));
    std::sort(kv.begin(), kv.end());
    for (const auto& [k, v] : kv) s += k + ": " + v + ",";
  }
  s += "},MatchExpressions:[]LabelSelectorRequirement{";
  if (const json::Value* me = json::find(*selector, "matchExpressions"); me && me->IsArray())
    for (const auto& r : me->GetArray()) {
      std::string values;
      if (const json::Value* vs = json::find(r, "values"); vs && vs->IsArray())
        for (const auto& v : vs->GetArray())
          values += (values.empty() ? "" : " ") + std::string(json::view(v));
      s += "LabelSelectorRequirement{Key:" + std::string(json::getString(r, "key")) +
           ",Operator:" + std::string(json::getString(r, "operator")) + ",Values:[" + values + "],},";
    }
  return s + "},}";
}

}  // namespace shepherd::controllers::disruption
