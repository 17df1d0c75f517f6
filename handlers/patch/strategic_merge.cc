#include "handlers/patch/strategic_merge.h"

#include <algorithm>
#include <map>

namespace shepherd::handlers::patch {

namespace {

constexpr std::string_view kPatch = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";
constexpr int kMaxDepth = 100;

bool hasPrefix(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

bool isDirectiveKey(std::string_view k) {
  return k == kPatch || k == kRetainKeys || hasPrefix(k, kSetElementOrder) ||
         hasPrefix(k, kDeleteFromPrimitiveList);
}

ApiError badPatch(const std::string& msg) {
  return ApiError::badRequest(msg);
}

const apis::SchemaNode* childOf(const apis::SchemaNode* s, std::string_view key) {
  if (!s) return nullptr;
  const apis::SchemaNode* r = s->resolved();
  if (r->additional) return r->additional;
  return r->property(key);
}

const apis::SchemaNode* itemsOf(const apis::SchemaNode* s) {
  if (!s) return nullptr;
  return s->resolved()->items;
}

Status mergeMap(json::Value& target, const json::Value& patch, const apis::SchemaNode* schema,
                json::Allocator& a, int depth);

// Copies a patch value into place, processing directives as a merge into nothing.
Status materialize(json::Value& out, const json::Value& patch, const apis::SchemaNode* schema,
                   json::Allocator& a, int depth) {
  if (patch.IsObject()) {
    out.SetObject();
    return mergeMap(out, patch, schema, a, depth + 1);
  }
  if (patch.IsArray()) {
    out.SetArray();
    const apis::SchemaNode* items = itemsOf(schema);
    for (auto& v : patch.GetArray()) {
      if (v.IsObject()) {
        std::string_view directive = json::getString(v, kPatch);
        if (directive == "delete" || directive == "replace") continue;
      }
      json::Value item;
      if (auto st = materialize(item, v, items, a, depth + 1); !st) return st;
      out.PushBack(item, a);
    }
    return okStatus();
  }
  out.CopyFrom(patch, a);
  return okStatus();
}

std::string keyOf(const json::Value& item, const std::string& mergeKey) {
  const json::Value* k = json::find(item, mergeKey);
  return k ? json::serialize(*k) : std::string();
}

void applyOrder(json::Value& list, const json::Value& order, const std::string& mergeKey) {
  if (!order.IsArray() || !list.IsArray()) return;
  std::map<std::string, size_t> rank;
  for (rapidjson::SizeType i = 0; i < order.Size(); ++i) {
    const json::Value& o = order[i];
    rank.emplace(mergeKey.empty() ? json::serialize(o) : keyOf(o, mergeKey), i);
  }
  std::vector<std::pair<size_t, size_t>> keys;  // (rank or large, original index)
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    std::string k = mergeKey.empty() ? json::serialize(list[i]) : keyOf(list[i], mergeKey);
    auto it = rank.find(k);
    keys.emplace_back(it == rank.end() ? order.Size() + i : it->second, i);
  }
  std::stable_sort(keys.begin(), keys.end());
  std::vector<json::Value> moved;
  moved.reserve(list.Size());
  for (auto& [r, idx] : keys) moved.push_back(std::move(list[static_cast<rapidjson::SizeType>(idx)]));
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) list[i] = std::move(moved[i]);
}

// Upstream's order after merging a list: the patch's items in the patch's order,
// interleaved with the items only the server had, in their live order; a server-only item
// goes before a patch item only when both were in the live list in that order.
void orderAfterMerge(json::Value& target, const std::vector<std::string>& server_keys,
                     const std::vector<std::string>& patch_keys, const std::string& merge_key,
                     json::Allocator& a) {
  auto keyOfItem = [&](const json::Value& v) {
    return merge_key.empty() ? json::serialize(v) : keyOf(v, merge_key);
  };
  auto indexIn = [](const std::vector<std::string>& keys, const std::string& k) {
    auto it = std::find(keys.begin(), keys.end(), k);
    return it == keys.end() ? -1 : static_cast<int>(it - keys.begin());
  };
  std::vector<json::Value> fromPatch, serverOnly;
  std::vector<std::string> patchItemKeys, serverItemKeys;
  for (auto& v : target.GetArray()) {
    std::string k = keyOfItem(v);
    if (indexIn(patch_keys, k) >= 0) {
      fromPatch.emplace_back(std::move(v));
      patchItemKeys.push_back(k);
    } else {
      serverOnly.emplace_back(std::move(v));
      serverItemKeys.push_back(k);
    }
  }
  // The patch's items in the patch's order.
  std::vector<size_t> order(fromPatch.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return indexIn(patch_keys, patchItemKeys[x]) < indexIn(patch_keys, patchItemKeys[y]);
  });
  json::Value out(rapidjson::kArrayType);
  size_t i = 0, j = 0;
  while (i < serverOnly.size() || j < order.size()) {
    bool takeServer;
    if (j >= order.size()) {
      takeServer = true;
    } else if (i >= serverOnly.size()) {
      takeServer = false;
    } else {
      int li = indexIn(server_keys, serverItemKeys[i]), ri = indexIn(server_keys, patchItemKeys[order[j]]);
      takeServer = li >= 0 && ri >= 0 && li < ri;
    }
    if (takeServer)
      out.PushBack(std::move(serverOnly[i++]), a);
    else
      out.PushBack(std::move(fromPatch[order[j++]]), a);
  }
  target = std::move(out);
}

Status mergeList(json::Value& target, const json::Value& patch, const apis::SchemaNode* field,
                 json::Allocator& a, int depth) {
  std::string strategy = field ? field->patch_strategy : "";
  std::string mergeKey = field ? field->patch_merge_key : "";
  bool merge = strategy.find("merge") != std::string::npos;
  const apis::SchemaNode* items = itemsOf(field);
  if (!merge) {
    return materialize(target, patch, field, a, depth);
  }
  // A {"$patch": "replace"} item replaces the whole list with the other items.
  for (auto& v : patch.GetArray())
    if (v.IsObject() && json::getString(v, kPatch) == "replace") {
      return materialize(target, patch, field, a, depth);
    }
  if (!target.IsArray()) target.SetArray();
  bool objects = false;
  for (auto& v : patch.GetArray())
    if (v.IsObject()) objects = true;
  if (!objects || mergeKey.empty()) {
    // Primitive list (or objects without a key): the union, in upstream's order.
    std::vector<std::string> serverKeys, patchKeys;
    for (auto& t : target.GetArray()) serverKeys.push_back(json::serialize(t));
    for (auto& v : patch.GetArray()) {
      patchKeys.push_back(json::serialize(v));
      bool present = false;
      for (auto& t : target.GetArray())
        if (t == v) present = true;
      if (!present) target.PushBack(json::Value(v, a), a);
    }
    orderAfterMerge(target, serverKeys, patchKeys, "", a);
    return okStatus();
  }
  std::vector<std::string> serverKeys, patchKeys;
  for (auto& t : target.GetArray())
    if (t.IsObject()) serverKeys.push_back(keyOf(t, mergeKey));
  for (auto& v : patch.GetArray()) {
    if (!v.IsObject()) return badPatch("a list with merge key \"" + mergeKey + "\" must hold objects");
    const json::Value* kv = json::find(v, mergeKey);
    std::string_view directive = json::getString(v, kPatch);
    if (!kv) {
      if (directive == "delete") continue;
      return badPatch("map: " + json::serialize(v) + " does not contain declared merge key: " + mergeKey);
    }
    std::string key = json::serialize(*kv);
    rapidjson::SizeType found = target.Size();
    for (rapidjson::SizeType i = 0; i < target.Size(); ++i)
      if (target[i].IsObject() && keyOf(target[i], mergeKey) == key) {
        found = i;
        break;
      }
    if (directive == "delete") {
      if (found < target.Size()) target.Erase(target.Begin() + found);
      continue;
    }
    patchKeys.push_back(key);
    if (found < target.Size()) {
      if (auto st = mergeMap(target[found], v, items, a, depth + 1); !st) return st;
    } else {
      json::Value item;
      if (auto st = materialize(item, v, items, a, depth + 1); !st) return st;
      target.PushBack(item, a);
    }
  }
  orderAfterMerge(target, serverKeys, patchKeys, mergeKey, a);
  return okStatus();
}

Status mergeMap(json::Value& target, const json::Value& patch, const apis::SchemaNode* schema,
                json::Allocator& a, int depth) {
  if (depth > kMaxDepth) return badPatch("the patch is nested too deeply");
  if (!target.IsObject()) target.SetObject();
  std::string_view directive = json::getString(patch, kPatch);
  if (directive == "replace") {
    target.SetObject();
    for (auto& m : patch.GetObject()) {
      if (json::view(m.name) == kPatch) continue;
      json::Value v;
      if (auto st = materialize(v, m.value, childOf(schema, json::view(m.name)), a, depth + 1); !st)
        return st;
      target.AddMember(json::Value(m.name, a), v, a);
    }
    return okStatus();
  }
  if (directive == "delete") {
    target.SetObject();
    return okStatus();
  }
  if (!directive.empty() && directive != "merge")
    return badPatch("Unknown patch type: " + std::string(directive) + " in map: " + json::serialize(patch));

  for (auto& m : patch.GetObject()) {
    std::string_view key = json::view(m.name);
    if (key == kPatch || key == kRetainKeys || hasPrefix(key, kSetElementOrder)) continue;
    if (hasPrefix(key, kDeleteFromPrimitiveList)) {
      std::string_view list = key.substr(kDeleteFromPrimitiveList.size());
      json::Value* cur = json::find(target, list);
      if (!cur || !cur->IsArray() || !m.value.IsArray()) continue;
      for (auto& del : m.value.GetArray())
        for (auto it = cur->Begin(); it != cur->End();) {
          if (*it == del)
            it = cur->Erase(it);
          else
            ++it;
        }
      continue;
    }
    const apis::SchemaNode* child = childOf(schema, key);
    if (m.value.IsNull()) {
      json::remove(target, key);
      continue;
    }
    json::Value* cur = json::find(target, key);
    if (cur && cur->IsObject() && m.value.IsObject()) {
      if (auto st = mergeMap(*cur, m.value, child, a, depth + 1); !st) return st;
    } else if (cur && cur->IsArray() && m.value.IsArray()) {
      if (auto st = mergeList(*cur, m.value, child, a, depth + 1); !st) return st;
    } else {
      json::Value v;
      if (auto st = materialize(v, m.value, child, a, depth + 1); !st) return st;
      json::set(target, key, std::move(v), a);
    }
  }
  // Orders after the merge, then retainKeys.
  for (auto& m : patch.GetObject()) {
    std::string_view key = json::view(m.name);
    if (!hasPrefix(key, kSetElementOrder)) continue;
    std::string_view list = key.substr(kSetElementOrder.size());
    json::Value* cur = json::find(target, list);
    if (!cur) continue;
    const apis::SchemaNode* child = childOf(schema, list);
    applyOrder(*cur, m.value, child ? child->patch_merge_key : "");
  }
  if (const json::Value* retain = json::find(patch, kRetainKeys)) {
    if (!retain->IsArray()) return badPatch("$retainKeys must be a list");
    for (auto it = target.MemberBegin(); it != target.MemberEnd();) {
      bool keep = false;
      for (auto& k : retain->GetArray())
        if (k.IsString() && json::view(k) == json::view(it->name)) keep = true;
      if (keep)
        ++it;
      else
        it = target.EraseMember(it);
    }
  }
  // Directive keys never survive into the object.
  for (auto it = target.MemberBegin(); it != target.MemberEnd();) {
    if (isDirectiveKey(json::view(it->name)))
      it = target.EraseMember(it);
    else
      ++it;
  }
  return okStatus();
}

}  // namespace

Status applyStrategicMergePatch(json::Value& target, const json::Value& patch, const apis::SchemaNode* schema,
                                json::Allocator& a) {
  if (!patch.IsObject()) return badPatch("a strategic merge patch must be a JSON object");
  return mergeMap(target, patch, schema, a, 0);
}

}  // namespace shepherd::handlers::patch
