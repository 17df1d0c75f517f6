#include "meta/conditions.h"

namespace shepherd::meta {

namespace {

json::Value& conditionsOf(json::Value& status, json::Allocator& a) {
  json::Value* conds = json::find(status, "conditions");
  if (!conds || !conds->IsArray()) {
    json::set(status, "conditions", json::Value(rapidjson::kArrayType), a);
    conds = json::find(status, "conditions");
  }
  return *conds;
}

json::Value* findMutable(json::Value& conds, std::string_view type) {
  for (auto& c : conds.GetArray())
    if (json::getString(c, "type") == type) return &c;
  return nullptr;
}

bool setString(json::Value& c, const char* field, const std::string& v, bool omit_empty, json::Allocator& a) {
  const json::Value* cur = json::find(c, field);
  if (omit_empty && v.empty()) {
    if (!cur) return false;
    json::remove(c, field);
    return true;
  }
  if (cur && cur->IsString() && json::view(*cur) == v) return false;
  json::setString(c, field, v, a);
  return true;
}

}  // namespace

const json::Value* findCondition(const json::Value* conditions, std::string_view type) {
  if (!conditions || !conditions->IsArray()) return nullptr;
  for (const auto& c : conditions->GetArray())
    if (json::getString(c, "type") == type) return &c;
  return nullptr;
}

bool setStatusCondition(json::Value& status, const ConditionChange& c, const std::string& now,
                        json::Allocator& a) {
  json::Value& conds = conditionsOf(status, a);
  json::Value* existing = findMutable(conds, c.type);
  if (!existing) {
    // metav1.Condition's field order; observedGeneration is omitted when zero.
    json::Value v(rapidjson::kObjectType);
    v.AddMember("type", json::str(c.type, a), a);
    v.AddMember("status", json::str(c.status, a), a);
    if (c.observed_generation != 0) v.AddMember("observedGeneration", json::Value(c.observed_generation), a);
    v.AddMember("lastTransitionTime", json::str(now, a), a);
    v.AddMember("reason", json::str(c.reason, a), a);
    v.AddMember("message", json::str(c.message, a), a);
    conds.PushBack(v, a);
    return true;
  }
  bool changed = false;
  if (json::getString(*existing, "status") != c.status) {
    json::setString(*existing, "status", c.status, a);
    json::setString(*existing, "lastTransitionTime", now, a);
    changed = true;
  }
  changed |= setString(*existing, "reason", c.reason, false, a);
  changed |= setString(*existing, "message", c.message, false, a);
  if (json::getInt(*existing, "observedGeneration").value_or(0) != c.observed_generation) {
    if (c.observed_generation != 0)
      json::set(*existing, "observedGeneration", json::Value(c.observed_generation), a);
    else
      json::remove(*existing, "observedGeneration");
    changed = true;
  }
  return changed;
}

bool updatePodCondition(json::Value& pod_status, const ConditionChange& c, const std::string& now,
                        json::Allocator& a) {
  json::Value& conds = conditionsOf(pod_status, a);
  json::Value* existing = findMutable(conds, c.type);
  if (!existing) {
    json::Value v(rapidjson::kObjectType);
    v.AddMember("type", json::str(c.type, a), a);
    v.AddMember("status", json::str(c.status, a), a);
    v.AddMember("lastProbeTime", json::Value(), a);
    v.AddMember("lastTransitionTime", json::str(now, a), a);
    if (!c.reason.empty()) v.AddMember("reason", json::str(c.reason, a), a);
    if (!c.message.empty()) v.AddMember("message", json::str(c.message, a), a);
    conds.PushBack(v, a);
    return true;
  }
  bool changed = false;
  if (json::getString(*existing, "status") != c.status) {
    json::setString(*existing, "status", c.status, a);
    json::setString(*existing, "lastTransitionTime", now, a);
    changed = true;
  }
  changed |= setString(*existing, "reason", c.reason, true, a);
  changed |= setString(*existing, "message", c.message, true, a);
  return changed;
}

}  // namespace shepherd::meta
