#include "controllers/deployment/deployment_util.h"

#include <cmath>

namespace shepherd::controllers::deployment {

int64_t intOrPercent(const json::Value* v, int64_t total, bool round_up, int64_t def) {
  if (!v || v->IsNull()) return def;
  if (v->IsInt64()) return v->GetInt64();
  if (!v->IsString()) return def;
  std::string s(json::view(*v));
  if (s.empty() || s.back() != '%') return std::strtoll(s.c_str(), nullptr, 10);
  int64_t pct = std::strtoll(s.substr(0, s.size() - 1).c_str(), nullptr, 10);
  return round_up ? (pct * total + 99) / 100 : pct * total / 100;
}

int64_t replicasOf(const json::Value& obj) {
  const json::Value* spec = json::find(obj, "spec");
  return spec ? json::getInt(*spec, "replicas").value_or(1) : 1;
}

bool isRollingUpdate(const json::Value& d) {
  return json::getStringPath(d, {"spec", "strategy", "type"}) != "Recreate";
}

int64_t maxSurge(const json::Value& d) {
  if (!isRollingUpdate(d)) return 0;
  return intOrPercent(json::findPath(d, {"spec", "strategy", "rollingUpdate", "maxSurge"}), replicasOf(d),
                      true, 0);
}

int64_t maxUnavailable(const json::Value& d) {
  if (!isRollingUpdate(d) || replicasOf(d) == 0) return 0;
  int64_t surge = maxSurge(d);
  int64_t unavailable = intOrPercent(
      json::findPath(d, {"spec", "strategy", "rollingUpdate", "maxUnavailable"}), replicasOf(d), false, 0);
  if (surge == 0 && unavailable == 0) return 1;
  return std::min(unavailable, replicasOf(d));
}

int64_t newRsNewReplicas(const json::Value& d, const std::vector<client::Object>& all,
                         const json::Value& new_rs) {
  if (!isRollingUpdate(d)) return replicasOf(d);
  int64_t current = 0;
  for (auto& rs : all) current += replicasOf(*rs);
  int64_t maxTotal = replicasOf(d) + maxSurge(d);
  int64_t newReplicas = replicasOf(new_rs);
  if (current >= maxTotal) return newReplicas;  // no room to surge
  int64_t up = std::min(maxTotal - current, replicasOf(d) - newReplicas);
  return newReplicas + std::max<int64_t>(0, up);
}

namespace {

// Drops null members and empty objects and arrays, recursively, so two templates compare
// the way upstream's semantic equality sees them (a null creationTimestamp written by a
// client equals an absent one).
void normalize(json::Value& v, json::Allocator& a) {
  if (v.IsObject()) {
    for (auto it = v.MemberBegin(); it != v.MemberEnd();) {
      normalize(it->value, a);
      bool empty = it->value.IsNull() || (it->value.IsObject() && it->value.ObjectEmpty()) ||
                   (it->value.IsArray() && it->value.Empty());
      it = empty ? v.EraseMember(it) : it + 1;
    }
  } else if (v.IsArray()) {
    for (auto& x : v.GetArray()) normalize(x, a);
  }
}

}  // namespace

bool equalIgnoreHash(const json::Value& rs_template, const json::Value& d_template) {
  json::Document a, b;
  a.CopyFrom(rs_template, a.GetAllocator());
  b.CopyFrom(d_template, b.GetAllocator());
  for (json::Document* t : {&a, &b}) {
    if (json::Value* labels = json::findPath(*t, {"metadata", "labels"}); labels && labels->IsObject())
      json::remove(*labels, kHashLabel);
    normalize(*t, t->GetAllocator());
  }
  return a == b;
}

int64_t revisionOf(const json::Value& obj) {
  std::string_view v = json::getStringPath(obj, {"metadata", "annotations", kRevision});
  return v.empty() ? 0 : std::strtoll(std::string(v).c_str(), nullptr, 10);
}

const json::Value* condition(const json::Value& status, std::string_view type) {
  const json::Value* conds = json::find(status, "conditions");
  if (!conds || !conds->IsArray()) return nullptr;
  for (auto& c : conds->GetArray())
    if (json::getString(c, "type") == type) return &c;
  return nullptr;
}

void removeCondition(json::Value& status, std::string_view type, json::Allocator& a) {
  json::Value* conds = json::find(status, "conditions");
  if (!conds || !conds->IsArray()) return;
  json::Value kept(rapidjson::kArrayType);
  for (auto& c : conds->GetArray())
    if (json::getString(c, "type") != type) kept.PushBack(json::Value(c, a), a);
  *conds = std::move(kept);
}

void setCondition(json::Value& status, const std::string& type, const std::string& cond_status,
                  const std::string& reason, const std::string& message, const std::string& now,
                  json::Allocator& a) {
  std::string since = now;
  if (const json::Value* cur = condition(status, type)) {
    if (json::getString(*cur, "status") == cond_status && json::getString(*cur, "reason") == reason) return;
    if (json::getString(*cur, "status") == cond_status) since = json::getString(*cur, "lastTransitionTime");
  }
  removeCondition(status, type, a);
  json::Value c(rapidjson::kObjectType);
  json::setString(c, "type", type, a);
  json::setString(c, "status", cond_status, a);
  json::setString(c, "lastUpdateTime", now, a);
  json::setString(c, "lastTransitionTime", since, a);
  json::setString(c, "reason", reason, a);
  json::setString(c, "message", message, a);
  json::Value* conds = json::find(status, "conditions");
  if (!conds || !conds->IsArray()) {
    json::set(status, "conditions", json::Value(rapidjson::kArrayType), a);
    conds = json::find(status, "conditions");
  }
  conds->PushBack(std::move(c), a);
}

bool deploymentComplete(const json::Value& d, const json::Value& status) {
  int64_t want = replicasOf(d);
  return json::getInt(status, "updatedReplicas").value_or(0) == want &&
         json::getInt(status, "replicas").value_or(0) == want &&
         json::getInt(status, "availableReplicas").value_or(0) == want &&
         json::getInt(status, "observedGeneration").value_or(0) >=
             json::getInt(*json::find(d, "metadata"), "generation").value_or(0);
}

bool deploymentProgressing(const json::Value& d, const json::Value& status) {
  const json::Value* old = json::find(d, "status");
  auto get = [](const json::Value* s, const char* f) { return s ? json::getInt(*s, f).value_or(0) : 0; };
  int64_t oldOld = get(old, "replicas") - get(old, "updatedReplicas");
  int64_t newOld = get(&status, "replicas") - get(&status, "updatedReplicas");
  return get(&status, "updatedReplicas") > get(old, "updatedReplicas") || newOld < oldOld ||
         get(&status, "readyReplicas") > get(old, "readyReplicas") ||
         get(&status, "availableReplicas") > get(old, "availableReplicas");
}

}  // namespace shepherd::controllers::deployment
