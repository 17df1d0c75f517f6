#include "handlers/patch/merge_patch.h"

namespace shepherd::handlers::patch {

void applyMergePatch(json::Value& target, const json::Value& patch, json::Allocator& a) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, a);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (auto& m : patch.GetObject()) {
    std::string_view key = json::view(m.name);
    if (m.value.IsNull()) {
      json::remove(target, key);
      continue;
    }
    json::Value* cur = json::find(target, key);
    if (cur && m.value.IsObject()) {
      applyMergePatch(*cur, m.value, a);
    } else if (m.value.IsObject()) {
      json::Value fresh(rapidjson::kObjectType);
      applyMergePatch(fresh, m.value, a);
      json::set(target, key, std::move(fresh), a);
    } else {
      json::set(target, key, json::Value(m.value, a), a);
    }
  }
}

}  // namespace shepherd::handlers::patch
