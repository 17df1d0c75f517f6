#include "apis/fieldset.h"

#include <algorithm>

namespace shepherd::apis {

namespace {

constexpr int kMaxDepth = 100;

std::string keyOf(const json::Value& item, const std::vector<std::string>& keys) {
  // Keys in name order, compact JSON, as upstream writes k:{...}.
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::string out = "k:{";
  bool first = true;
  for (const auto& k : sorted) {
    const json::Value* v = json::find(item, k);
    std::string value;
    if (v) value = json::serialize(*v);
    else if (k == "protocol") value = "\"TCP\"";  // the one defaulted key field (ports)
    else continue;
    if (!first) out += ",";
    first = false;
    out += json::serialize(json::Value(rapidjson::StringRef(k.data(), k.size()))) + ":" + value;
  }
  return out + "}";
}

const SchemaNode* childSchema(const SchemaNode* s, std::string_view key) {
  if (!s) return nullptr;
  const SchemaNode* r = s->resolved();
  if (r->additional) return r->additional;
  return r->property(key);
}

bool isMap(const SchemaNode* s) { return s && s->resolved()->additional != nullptr; }

void build(FieldSet::Node& node, const json::Value& v, const SchemaNode* schema, int depth) {
  if (depth > kMaxDepth) {
    node.self = true;
    return;
  }
  if (v.IsObject()) {
    bool atomic = schema && (schema->map_type == "atomic" || schema->resolved()->map_type == "atomic");
    if (atomic || v.MemberCount() == 0 || (schema && schema->resolved()->preserve_unknown && !isMap(schema) &&
                                           schema->resolved()->properties.empty())) {
      node.self = true;
      return;
    }
    if (isMap(schema)) node.self = true;
    for (auto& m : v.GetObject()) {
      std::string key = "f:" + std::string(json::view(m.name));
      build(node.children[key], m.value, childSchema(schema, json::view(m.name)), depth + 1);
    }
    return;
  }
  if (v.IsArray()) {
    if (v.Size() == 0 || !schema) {
      node.self = true;
      return;
    }
    const SchemaNode* items = schema->resolved()->items;
    switch (schema->listKind()) {
      case SchemaNode::ListKind::Map: {
        auto keys = schema->listKeys();
        for (auto& item : v.GetArray()) {
          if (!item.IsObject()) {
            node.self = true;
            return;
          }
          FieldSet::Node& child = node.children[keyOf(item, keys)];
          child.self = true;
          for (auto& m : item.GetObject()) {
            std::string key = "f:" + std::string(json::view(m.name));
            build(child.children[key], m.value, childSchema(items, json::view(m.name)), depth + 2);
          }
        }
        return;
      }
      case SchemaNode::ListKind::Set:
        for (auto& item : v.GetArray()) node.children["v:" + json::serialize(item)].self = true;
        return;
      case SchemaNode::ListKind::Atomic:
        node.self = true;
        return;
    }
  }
  node.self = true;
}

void toJson(const FieldSet::Node& n, json::Value& out, json::Allocator& a) {
  out.SetObject();
  if (n.self && !n.children.empty()) out.AddMember(".", json::Value(rapidjson::kObjectType), a);
  for (const auto& [k, c] : n.children) {
    if (c.empty()) continue;
    json::Value v;
    toJson(c, v, a);
    out.AddMember(json::str(k, a), v, a);
  }
}

bool fromJson(const json::Value& v, FieldSet::Node& n, int depth) {
  if (!v.IsObject() || depth > kMaxDepth) return false;
  if (v.MemberCount() == 0) {
    n.self = true;
    return true;
  }
  for (auto& m : v.GetObject()) {
    std::string_view k = json::view(m.name);
    if (k == ".") {
      n.self = true;
      continue;
    }
    if (k.size() < 2 || k[1] != ':' || (k[0] != 'f' && k[0] != 'k' && k[0] != 'v' && k[0] != 'i')) return false;
    if (!fromJson(m.value, n.children[std::string(k)], depth + 1)) return false;
  }
  return true;
}

void walk(const FieldSet::Node& n, FieldPath& path, const std::function<void(const FieldPath&)>& fn) {
  // A node that is itself a member and has members below is reported as "<path>/.".
  if (n.self) {
    bool container = false;
    for (const auto& [k, c] : n.children)
      if (!c.empty()) container = true;
    if (container) {
      path.push_back(".");
      fn(path);
      path.pop_back();
    } else {
      fn(path);
    }
  }
  for (const auto& [k, c] : n.children) {
    path.push_back(k);
    walk(c, path, fn);
    path.pop_back();
  }
}

const FieldSet::Node* findNode(const FieldSet::Node& root, const FieldPath& p) {
  const FieldSet::Node* cur = &root;
  for (const auto& e : p) {
    if (e == ".") break;  // "." names the node itself
    auto it = cur->children.find(e);
    if (it == cur->children.end()) return nullptr;
    cur = &it->second;
  }
  return cur;
}

void prune(FieldSet::Node& n) {
  for (auto it = n.children.begin(); it != n.children.end();) {
    prune(it->second);
    if (it->second.empty()) it = n.children.erase(it);
    else ++it;
  }
}

// Finds the array element a "k:" or "v:" path element names.
json::Value* findItem(json::Value& arr, const std::string& elem) {
  if (!arr.IsArray()) return nullptr;
  if (elem.rfind("v:", 0) == 0) {
    json::Document want;
    want.Parse(elem.data() + 2, elem.size() - 2);
    if (want.HasParseError()) return nullptr;
    for (auto& it : arr.GetArray())
      if (it == want) return &it;
    return nullptr;
  }
  if (elem.rfind("k:", 0) == 0) {
    json::Document want;
    want.Parse(elem.data() + 2, elem.size() - 2);
    if (want.HasParseError() || !want.IsObject()) return nullptr;
    for (auto& it : arr.GetArray()) {
      if (!it.IsObject()) continue;
      bool all = true;
      for (auto& m : want.GetObject()) {
        const json::Value* v = json::find(it, json::view(m.name));
        if (!v && json::view(m.name) == "protocol" && json::view(m.value) == "TCP") continue;  // defaulted
        if (!v || *v != m.value) all = false;
      }
      if (all) return &it;
    }
  }
  return nullptr;
}

}  // namespace

bool FieldSet::Node::empty() const {
  if (self) return false;
  for (const auto& [k, c] : children)
    if (!c.empty()) return false;
  return true;
}

FieldSet FieldSet::fromObject(const json::Value& value, const SchemaNode* schema) {
  return fromObjectExcept(value, schema, {}, {});
}

FieldSet FieldSet::fromObjectExcept(const json::Value& value, const SchemaNode* schema,
                                    std::initializer_list<std::string_view> skip_top,
                                    std::initializer_list<std::string_view> skip_metadata) {
  auto skipped = [](std::initializer_list<std::string_view> list, std::string_view name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  FieldSet fs;
  if (value.IsObject()) {
    for (auto& m : value.GetObject()) {
      std::string_view name = json::view(m.name);
      if (skipped(skip_top, name)) continue;
      Node& node = fs.root_.children["f:" + std::string(name)];
      const SchemaNode* child = childSchema(schema, name);
      if (name == "metadata" && skip_metadata.size() && m.value.IsObject()) {
        // metadata is a struct: its remaining members, without the skipped ones
        for (auto& mm : m.value.GetObject()) {
          std::string_view key = json::view(mm.name);
          if (skipped(skip_metadata, key)) continue;
          build(node.children["f:" + std::string(key)], mm.value, childSchema(child, key), 2);
        }
        continue;
      }
      build(node, m.value, child, 1);
    }
  }
  prune(fs.root_);
  return fs;
}

Result<FieldSet> FieldSet::fromFieldsV1(const json::Value& v) {
  FieldSet fs;
  if (!fromJson(v, fs.root_, 0)) return ApiError::badRequest("invalid fieldsV1");
  fs.root_.self = false;
  return fs;
}

json::Value FieldSet::toFieldsV1(json::Allocator& a) const {
  json::Value v;
  toJson(root_, v, a);
  return v;
}

bool FieldSet::has(const FieldPath& p) const {
  const Node* n = findNode(root_, p);
  return n && n->self;
}

void FieldSet::insert(const FieldPath& p) {
  Node* cur = &root_;
  for (const auto& e : p) {
    if (e == ".") break;
    cur = &cur->children[e];
  }
  cur->self = true;
}

void FieldSet::erase(const FieldPath& p) {
  Node* cur = &root_;
  for (const auto& e : p) {
    if (e == ".") break;
    auto it = cur->children.find(e);
    if (it == cur->children.end()) return;
    cur = &it->second;
  }
  cur->self = false;
  prune(root_);
}

void FieldSet::eraseUnder(const FieldPath& prefix) {
  if (prefix.empty()) {
    root_ = Node{};
    return;
  }
  Node* cur = &root_;
  for (size_t i = 0; i + 1 < prefix.size(); ++i) {
    auto it = cur->children.find(prefix[i]);
    if (it == cur->children.end()) return;
    cur = &it->second;
  }
  cur->children.erase(prefix.back());
  prune(root_);
}

// Set operations work node by node: a path is a member when its node's `self` is set, so
// the operations combine `self` flags and recurse into children present on both sides.
namespace {

void intersectInto(const FieldSet::Node& a, const FieldSet::Node& b, FieldSet::Node& out) {
  out.self = a.self && b.self;
  for (const auto& [k, c] : a.children) {
    auto it = b.children.find(k);
    if (it == b.children.end()) continue;
    FieldSet::Node child;
    intersectInto(c, it->second, child);
    if (!child.empty()) out.children.emplace(k, std::move(child));
  }
}

void minusInto(const FieldSet::Node& a, const FieldSet::Node& b, FieldSet::Node& out) {
  out.self = a.self && !b.self;
  for (const auto& [k, c] : a.children) {
    auto it = b.children.find(k);
    if (it == b.children.end()) {
      if (!c.empty()) out.children.emplace(k, c);
      continue;
    }
    FieldSet::Node child;
    minusInto(c, it->second, child);
    if (!child.empty()) out.children.emplace(k, std::move(child));
  }
}

void uniteInto(FieldSet::Node& out, const FieldSet::Node& b) {
  out.self = out.self || b.self;
  for (const auto& [k, c] : b.children) {
    if (c.empty()) continue;
    uniteInto(out.children[k], c);
  }
}

}  // namespace

FieldSet FieldSet::intersect(const FieldSet& o) const {
  FieldSet out;
  intersectInto(root_, o.root_, out.root_);
  out.root_.self = false;
  return out;
}

FieldSet FieldSet::minus(const FieldSet& o) const {
  FieldSet out;
  minusInto(root_, o.root_, out.root_);
  out.root_.self = false;
  return out;
}

FieldSet FieldSet::unite(const FieldSet& o) const {
  FieldSet out = *this;
  uniteInto(out.root_, o.root_);
  out.root_.self = false;
  return out;
}

void FieldSet::forEach(const std::function<void(const FieldPath&)>& fn) const {
  FieldPath path;
  for (const auto& [k, c] : root_.children) {
    path.push_back(k);
    walk(c, path, fn);
    path.pop_back();
  }
}

std::vector<FieldPath> FieldSet::paths() const {
  std::vector<FieldPath> out;
  forEach([&](const FieldPath& p) { out.push_back(p); });
  return out;
}

std::string FieldSet::describe(const FieldPath& p) {
  std::string out;
  for (const auto& e : p) {
    if (e.rfind("f:", 0) == 0) {
      out += "." + e.substr(2);
    } else if (e.rfind("k:", 0) == 0) {
      json::Document d;
      d.Parse(e.data() + 2, e.size() - 2);
      std::string inner;
      if (!d.HasParseError() && d.IsObject())
        for (auto& m : d.GetObject())
          inner += (inner.empty() ? "" : ",") + std::string(json::view(m.name)) + "=" + json::serialize(m.value);
      out += "[" + inner + "]";
    } else if (e.rfind("v:", 0) == 0) {
      out += "[=" + e.substr(2) + "]";
    }
  }
  return out.empty() ? "." : out;
}

const json::Value* valueAt(const json::Value& obj, const FieldPath& p) {
  const json::Value* cur = &obj;
  for (const auto& e : p) {
    if (e == ".") continue;
    if (e.rfind("f:", 0) == 0) {
      cur = json::find(*cur, std::string_view(e).substr(2));
    } else {
      cur = findItem(const_cast<json::Value&>(*cur), e);
    }
    if (!cur) return nullptr;
  }
  return cur;
}

bool removeAt(json::Value& obj, const FieldPath& p) {
  if (p.empty()) return false;
  FieldPath target = p;
  if (target.back() == ".") target.pop_back();
  if (target.empty()) return false;
  json::Value* parent = &obj;
  for (size_t i = 0; i + 1 < target.size(); ++i) {
    const auto& e = target[i];
    parent = e.rfind("f:", 0) == 0 ? json::find(*parent, std::string_view(e).substr(2)) : findItem(*parent, e);
    if (!parent) return false;
  }
  const std::string& last = target.back();
  if (last.rfind("f:", 0) == 0) return json::remove(*parent, std::string_view(last).substr(2));
  json::Value* item = findItem(*parent, last);
  if (!item || !parent->IsArray()) return false;
  parent->Erase(item);
  return true;
}

}  // namespace shepherd::apis
