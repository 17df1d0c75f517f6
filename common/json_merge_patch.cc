#include "common/json_merge_patch.h"

namespace shepherd::json {

namespace {

void diffInto(const Value& from, const Value& to, Value& patch, Allocator& a) {
  for (const auto& m : from.GetObject())
    if (!to.HasMember(m.name)) patch.AddMember(Value(m.name, a), Value(rapidjson::kNullType), a);
  for (const auto& m : to.GetObject()) {
    const Value* was = find(from, view(m.name));
    if (was && *was == m.value) continue;
    if (was && was->IsObject() && m.value.IsObject()) {
      Value sub(rapidjson::kObjectType);
      diffInto(*was, m.value, sub, a);
      patch.AddMember(Value(m.name, a), std::move(sub), a);
    } else {
      patch.AddMember(Value(m.name, a), Value(m.value, a), a);
    }
  }
}

}  // namespace

void applyMergePatch(Value& target, const Value& patch, Allocator& a) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, a);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (auto& m : patch.GetObject()) {
    std::string_view key = view(m.name);
    if (m.value.IsNull()) {
      remove(target, key);
      continue;
    }
    Value* cur = find(target, key);
    if (cur && m.value.IsObject()) {
      applyMergePatch(*cur, m.value, a);
    } else if (m.value.IsObject()) {
      Value fresh(rapidjson::kObjectType);
      applyMergePatch(fresh, m.value, a);
      set(target, key, std::move(fresh), a);
    } else {
      set(target, key, Value(m.value, a), a);
    }
  }
}

Document createMergePatch(const Value& from, const Value& to) {
  Document patch;
  if (!from.IsObject() || !to.IsObject()) {
    patch.CopyFrom(to, patch.GetAllocator());
    return patch;
  }
  patch.SetObject();
  diffInto(from, to, patch, patch.GetAllocator());
  return patch;
}

}  // namespace shepherd::json
