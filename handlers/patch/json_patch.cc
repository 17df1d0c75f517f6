#include "handlers/patch/json_patch.h"

#include <vector>

namespace shepherd::handlers::patch {

namespace {

constexpr size_t kMaxOps = 10000;

bool parsePointer(std::string_view p, std::vector<std::string>& out) {
  out.clear();
  if (p.empty()) return true;
  if (p[0] != '/') return false;
  size_t i = 1;
  std::string cur;
  for (; i <= p.size(); ++i) {
    if (i == p.size() || p[i] == '/') {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    if (p[i] == '~' && i + 1 < p.size()) {
      if (p[i + 1] == '0') cur += '~';
      else if (p[i + 1] == '1') cur += '/';
      else return false;
      ++i;
    } else {
      cur += p[i];
    }
  }
  return true;
}

bool arrayIndex(const std::string& tok, size_t size, size_t& idx, bool allowEnd) {
  if (tok == "-") {
    if (!allowEnd) return false;
    idx = size;
    return true;
  }
  if (tok.empty() || tok.size() > 9) return false;
  for (char c : tok)
    if (c < '0' || c > '9') return false;
  if (tok.size() > 1 && tok[0] == '0') return false;
  idx = static_cast<size_t>(std::stoul(tok));
  return allowEnd ? idx <= size : idx < size;
}

json::Value* resolve(json::Value& root, const std::vector<std::string>& path, size_t upto) {
  json::Value* cur = &root;
  for (size_t i = 0; i < upto; ++i) {
    if (cur->IsObject()) {
      cur = json::find(*cur, path[i]);
      if (!cur) return nullptr;
    } else if (cur->IsArray()) {
      size_t idx;
      if (!arrayIndex(path[i], cur->Size(), idx, false)) return nullptr;
      cur = &(*cur)[static_cast<rapidjson::SizeType>(idx)];
    } else {
      return nullptr;
    }
  }
  return cur;
}

ApiError opError(const std::string& msg) { return ApiError::make(422, "Invalid", msg); }

Status removeAt(json::Document& doc, const std::vector<std::string>& path, const std::string& ptr,
                json::Value* removed) {
  if (path.empty()) return opError("the root document cannot be removed");
  json::Value* parent = resolve(doc, path, path.size() - 1);
  const std::string& last = path.back();
  if (parent && parent->IsObject()) {
    auto it = parent->FindMember(json::Value(rapidjson::StringRef(last.data(), last.size())));
    if (it == parent->MemberEnd()) return opError("Unable to remove nonexistent key: " + last + ": missing value");
    if (removed) *removed = std::move(it->value);
    parent->EraseMember(it);
    return okStatus();
  }
  if (parent && parent->IsArray()) {
    size_t idx;
    if (!arrayIndex(last, parent->Size(), idx, false)) return opError("Unable to access invalid index: " + last + ": invalid index referenced");
    if (removed) *removed = std::move((*parent)[static_cast<rapidjson::SizeType>(idx)]);
    parent->Erase(parent->Begin() + idx);
    return okStatus();
  }
  return opError("remove operation does not apply: doc is missing path: \"" + ptr + "\": missing value");
}

Status addAt(json::Document& doc, const std::vector<std::string>& path, const std::string& ptr, json::Value value,
             bool replace) {
  auto& a = doc.GetAllocator();
  if (path.empty()) {
    doc.CopyFrom(value, a);
    return okStatus();
  }
  json::Value* parent = resolve(doc, path, path.size() - 1);
  const std::string& last = path.back();
  if (parent && parent->IsObject()) {
    json::Value* cur = json::find(*parent, last);
    if (replace && !cur) return opError("replace operation does not apply: doc is missing key: " + ptr + ": missing value");
    json::set(*parent, last, std::move(value), a);
    return okStatus();
  }
  if (parent && parent->IsArray()) {
    size_t idx;
    if (replace) {
      if (!arrayIndex(last, parent->Size(), idx, false))
        return opError("replace operation does not apply: doc is missing key: " + ptr + ": missing value");
      (*parent)[static_cast<rapidjson::SizeType>(idx)] = std::move(value);
      return okStatus();
    }
    if (!arrayIndex(last, parent->Size(), idx, true))
      return opError("add operation does not apply: doc is missing path: \"" + ptr + "\": missing value");
    parent->PushBack(json::Value(), a);
    for (size_t i = parent->Size() - 1; i > idx; --i)
      (*parent)[static_cast<rapidjson::SizeType>(i)] = std::move((*parent)[static_cast<rapidjson::SizeType>(i - 1)]);
    (*parent)[static_cast<rapidjson::SizeType>(idx)] = std::move(value);
    return okStatus();
  }
  return opError(std::string(replace ? "replace" : "add") + " operation does not apply: doc is missing path: \"" + ptr +
                 "\": missing value");
}

}  // namespace

Status applyJsonPatch(json::Document& doc, const json::Value& ops) {
  if (!ops.IsArray()) return ApiError::badRequest("json patch must be an array of operations");
  if (ops.Size() > kMaxOps) return ApiError::make(413, "RequestEntityTooLarge", "json patch has too many operations");
  auto& a = doc.GetAllocator();
  std::vector<std::string> path, from;
  for (auto& op : ops.GetArray()) {
    if (!op.IsObject()) return ApiError::badRequest("json patch operations must be objects");
    std::string kind(json::getString(op, "op"));
    const json::Value* p = json::find(op, "path");
    if (!p || !p->IsString()) return ApiError::badRequest("json patch operation \"" + kind + "\" lacks a path");
    std::string ptr(json::view(*p));
    if (!parsePointer(ptr, path)) return ApiError::badRequest("invalid JSON pointer \"" + ptr + "\"");
    const json::Value* value = json::find(op, "value");
    if (kind == "add" || kind == "replace") {
      if (!value) return ApiError::badRequest("json patch " + kind + " operation lacks a value");
      if (auto st = addAt(doc, path, ptr, json::Value(*value, a), kind == "replace"); !st) return st;
    } else if (kind == "remove") {
      if (auto st = removeAt(doc, path, ptr, nullptr); !st) return st;
    } else if (kind == "move" || kind == "copy") {
      const json::Value* f = json::find(op, "from");
      if (!f || !f->IsString()) return ApiError::badRequest("json patch " + kind + " operation lacks from");
      std::string fptr(json::view(*f));
      if (!parsePointer(fptr, from)) return ApiError::badRequest("invalid JSON pointer \"" + fptr + "\"");
      json::Value moved;
      if (kind == "move") {
        if (ptr.rfind(fptr + "/", 0) == 0) return opError("move operation cannot move a value into one of its children");
        if (auto st = removeAt(doc, from, fptr, &moved); !st) return st;
      } else {
        json::Value* src = resolve(doc, from, from.size());
        if (!src) return opError("copy operation does not apply: doc is missing from path: " + fptr + ": missing value");
        moved.CopyFrom(*src, a);
      }
      if (auto st = addAt(doc, path, ptr, std::move(moved), false); !st) return st;
    } else if (kind == "test") {
      json::Value* cur = resolve(doc, path, path.size());
      if (!value) return ApiError::badRequest("json patch test operation lacks a value");
      if (!cur || *cur != *value) return opError("testing value " + ptr + " failed: test failed");
    } else {
      return ApiError::badRequest("Unexpected kind: " + kind);
    }
  }
  return okStatus();
}

}  // namespace shepherd::handlers::patch
