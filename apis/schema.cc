#include "apis/schema.h"

#include <cstdio>
#include <cstdlib>
#include <set>

#include "common/base64.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/yaml_json.h"
#include "meta/quantity.h"

namespace shepherd::embedded {
std::string_view schema_yaml();
}

namespace shepherd::apis {

namespace {

std::vector<std::string_view> splitDocuments(std::string_view text) {
  std::vector<std::string_view> docs;
  size_t start = 0;
  while (true) {
    size_t pos = text.find("\n---\n", start);
    if (pos == std::string_view::npos) {
      docs.push_back(text.substr(start));
      break;
    }
    docs.push_back(text.substr(start, pos + 1 - start));
    start = pos + 5;
  }
  return docs;
}

// "io.k8s.api.core.v1.Container" -> "v1.Container", as Go error messages name types.
std::string goTypeName(const std::string& def) {
  auto last = def.rfind('.');
  if (last == std::string::npos) return def;
  auto prev = def.rfind('.', last - 1);
  return prev == std::string::npos ? def : def.substr(prev + 1);
}

const char* jsonTypeName(const json::Value& v) {
  if (v.IsString()) return "string";
  if (v.IsNumber()) return "number";
  if (v.IsBool()) return "bool";
  if (v.IsArray()) return "array";
  if (v.IsObject()) return "object";
  return "null";
}

std::string describe(const SchemaNode* n) {
  const SchemaNode* r = n->resolved();
  if (!r->go_type.empty()) return r->go_type;
  switch (r->type) {
    case SchemaNode::Type::String:
      return "string";
    case SchemaNode::Type::Integer:
      return r->format == "int32" ? "int32" : "int64";
    case SchemaNode::Type::Number:
      return "float64";
    case SchemaNode::Type::Boolean:
      return "bool";
    case SchemaNode::Type::Array:
      return "[]" + (r->items ? describe(r->items) : std::string("interface {}"));
    case SchemaNode::Type::Object:
      return r->additional ? "map[string]" + describe(r->additional) : "struct";
    case SchemaNode::Type::Any:
      return "interface {}";
  }
  return "?";
}

}  // namespace

const SchemaNode* SchemaNode::property(std::string_view name) const {
  const SchemaNode* r = resolved();
  auto it = r->properties.find(name);
  return it == r->properties.end() ? nullptr : it->second;
}

SchemaNode::ListKind SchemaNode::listKind() const {
  if (list_type == "map" || (list_type.empty() && !patch_merge_key.empty())) return ListKind::Map;
  if (list_type == "set") return ListKind::Set;
  if (list_type.empty() && patch_strategy.find("merge") != std::string::npos) {
    const SchemaNode* it = resolved()->items;
    if (it && it->resolved()->type != Type::Object) return ListKind::Set;
  }
  return ListKind::Atomic;
}

std::vector<std::string> SchemaNode::listKeys() const {
  if (!list_map_keys.empty()) return list_map_keys;
  if (!patch_merge_key.empty()) return {patch_merge_key};
  return {};
}

SchemaNode* SchemaRegistry::build(const json::Value& s) {
  nodes_.emplace_back();
  SchemaNode* n = &nodes_.back();
  if (!s.IsObject()) return n;
  if (auto* ref = json::find(s, "$ref"); ref && ref->IsString()) n->ref = json::view(*ref);
  std::string_view type = json::getString(s, "type");
  n->format = json::getString(s, "format");
  if (type == "object")
    n->type = SchemaNode::Type::Object;
  else if (type == "array")
    n->type = SchemaNode::Type::Array;
  else if (type == "string")
    n->type = SchemaNode::Type::String;
  else if (type == "integer")
    n->type = SchemaNode::Type::Integer;
  else if (type == "number")
    n->type = SchemaNode::Type::Number;
  else if (type == "boolean")
    n->type = SchemaNode::Type::Boolean;
  if (n->format == "int-or-string" || n->format == "quantity") n->type = SchemaNode::Type::Any;
  if (auto* props = json::find(s, "properties"); props && props->IsObject()) {
    if (n->type == SchemaNode::Type::Any) n->type = SchemaNode::Type::Object;
    for (auto& m : props->GetObject()) n->properties.emplace(std::string(json::view(m.name)), build(m.value));
  }
  if (auto* items = json::find(s, "items")) n->items = build(*items);
  if (auto* add = json::find(s, "additionalProperties"); add && add->IsObject()) n->additional = build(*add);
  n->preserve_unknown = json::getBool(s, "x-kubernetes-preserve-unknown-fields");
  n->patch_merge_key = json::getString(s, "x-kubernetes-patch-merge-key");
  n->patch_strategy = json::getString(s, "x-kubernetes-patch-strategy");
  n->list_type = json::getString(s, "x-kubernetes-list-type");
  n->map_type = json::getString(s, "x-kubernetes-map-type");
  if (auto* keys = json::find(s, "x-kubernetes-list-map-keys"); keys && keys->IsArray())
    for (auto& k : keys->GetArray())
      if (k.IsString()) n->list_map_keys.emplace_back(json::view(k));
  // A type: object schema with neither properties nor additionalProperties (RawExtension,
  // FieldsV1) holds arbitrary content.
  if (n->type == SchemaNode::Type::Object && n->properties.empty() && !n->additional)
    n->preserve_unknown = true;
  return n;
}

std::unique_ptr<SchemaRegistry> SchemaRegistry::fromYaml(std::string_view yaml, std::string& error) {
  auto reg = std::unique_ptr<SchemaRegistry>(new SchemaRegistry());
  reg->raw_.SetObject();
  auto& a = reg->raw_.GetAllocator();
  for (std::string_view doc : splitDocuments(yaml)) {
    json::Document d;
    auto st = yamlToJson(doc, d);
    if (!st.ok()) {
      error = st.error().message;
      return nullptr;
    }
    if (d.IsNull()) continue;
    const json::Value* defs = json::find(d, "definitions");
    if (!defs || !defs->IsObject()) {
      error = "a schema document lacks a `definitions` map";
      return nullptr;
    }
    for (auto& m : defs->GetObject()) {
      std::string name(json::view(m.name));
      if (json::find(reg->raw_, name)) {
        error = "definition " + name + " appears twice";
        return nullptr;
      }
      reg->raw_.AddMember(json::str(name, a), json::Value(m.value, a), a);
    }
  }
  for (auto& m : reg->raw_.GetObject()) {
    std::string name(json::view(m.name));
    SchemaNode* n = reg->build(m.value);
    n->go_type = goTypeName(name);
    // Quantity is written `type: string` upstream but is read from numbers too.
    if (name == "io.k8s.apimachinery.pkg.api.resource.Quantity") {
      n->type = SchemaNode::Type::Any;
      n->format = "quantity";
    }
    reg->defs_.emplace(name, n);
  }
  for (auto& n : reg->nodes_) {
    if (n.ref.empty()) continue;
    auto it = reg->defs_.find(n.ref);
    if (it == reg->defs_.end()) {
      error = "unresolved $ref " + n.ref;
      return nullptr;
    }
    n.target = it->second;
  }
  return reg;
}

const SchemaRegistry& SchemaRegistry::instance() {
  static const std::unique_ptr<SchemaRegistry> reg = [] {
    std::string error;
    auto r = fromYaml(embedded::schema_yaml(), error);
    if (!r) {
      std::fprintf(stderr, "fatal: embedded OpenAPI schema is invalid: %s\n", error.c_str());
      std::abort();
    }
    return r;
  }();
  return *reg;
}

const SchemaNode* SchemaRegistry::definition(std::string_view name) const {
  auto it = defs_.find(name);
  return it == defs_.end() ? nullptr : it->second;
}

void SchemaRegistry::check(const json::Value& root_value, const SchemaNode* root,
                           std::vector<SchemaFinding>& findings) const {
  struct Frame {
    const json::Value* v;
    const SchemaNode* s;
    std::string path;
  };
  std::vector<Frame> stack;
  stack.push_back({&root_value, root, ""});
  constexpr size_t kMaxFindings = 100;
  while (!stack.empty() && findings.size() < kMaxFindings) {
    Frame f = std::move(stack.back());
    stack.pop_back();
    if (!f.s || f.v->IsNull()) continue;
    const SchemaNode* s = f.s->resolved();
    auto mismatch = [&] {
      std::string where = f.path.empty() ? s->go_type : f.path;
      findings.push_back({SchemaFinding::Kind::TypeMismatch, f.path,
                          std::string("json: cannot unmarshal ") + jsonTypeName(*f.v) +
                              " into Go struct field " + where + " of type " + describe(f.s)});
    };
    switch (s->type) {
      case SchemaNode::Type::Any:
        if (s->format == "int-or-string" || s->format == "quantity") {
          if (!f.v->IsString() && !f.v->IsNumber()) mismatch();
        }
        if (s->format == "quantity" && f.v->IsString())
          if (auto err = meta::quantityDecodeError(json::view(*f.v)))
            findings.push_back({SchemaFinding::Kind::TypeMismatch, f.path, *err, true});
        continue;
      case SchemaNode::Type::String:
        if (!f.v->IsString()) {
          mismatch();
        } else if (s->format == "date-time" && !clock::isRfc3339(json::view(*f.v))) {
          findings.push_back({SchemaFinding::Kind::TypeMismatch, f.path,
                              "parsing time \"" + std::string(json::view(*f.v)) +
                                  "\" as \"2006-01-02T15:04:05Z07:00\": cannot parse it as RFC 3339",
                              true});
        } else if (s->format == "byte") {
          // []byte: Go's standard base64 decoder.
          if (auto b = checkStdBase64(json::view(*f.v)); !b.ok)
            findings.push_back({SchemaFinding::Kind::TypeMismatch, f.path,
                                "illegal base64 data at input byte " + std::to_string(b.corrupt_at)});
        }
        continue;
      case SchemaNode::Type::Boolean:
        if (!f.v->IsBool()) mismatch();
        continue;
      case SchemaNode::Type::Integer:
        if (!f.v->IsInt64() && !f.v->IsUint64()) {
          if (f.v->IsDouble()) {
            findings.push_back({SchemaFinding::Kind::TypeMismatch, f.path,
                                "json: cannot unmarshal number " + json::serialize(*f.v) +
                                    " into Go struct field " + f.path + " of type " + describe(f.s)});
          } else {
            mismatch();
          }
        }
        continue;
      case SchemaNode::Type::Number:
        if (!f.v->IsNumber()) mismatch();
        continue;
      case SchemaNode::Type::Array:
        if (!f.v->IsArray()) {
          mismatch();
          continue;
        }
        for (rapidjson::SizeType i = 0; i < f.v->Size(); ++i)
          stack.push_back({&(*f.v)[i], s->items, f.path + "[" + std::to_string(i) + "]"});
        continue;
      case SchemaNode::Type::Object: {
        if (!f.v->IsObject()) {
          mismatch();
          continue;
        }
        std::set<std::string_view> seen;
        // Reverse order so findings come out in document order from the stack.
        std::vector<Frame> children;
        for (auto& m : f.v->GetObject()) {
          std::string_view key = json::view(m.name);
          std::string child = f.path.empty() ? std::string(key) : f.path + "." + std::string(key);
          if (!seen.insert(key).second) {
            findings.push_back(
                {SchemaFinding::Kind::DuplicateField, child, "duplicate field \"" + child + "\""});
            continue;
          }
          if (s->additional) {
            children.push_back({&m.value, s->additional, child});
            continue;
          }
          auto it = s->properties.find(key);
          if (it == s->properties.end()) {
            if (!s->preserve_unknown)
              findings.push_back(
                  {SchemaFinding::Kind::UnknownField, child, "unknown field \"" + child + "\""});
            continue;
          }
          children.push_back({&m.value, it->second, child});
        }
        for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(std::move(*it));
        continue;
      }
    }
  }
}

void SchemaRegistry::prune(json::Value& root_value, const SchemaNode* root) const {
  std::vector<std::pair<json::Value*, const SchemaNode*>> stack;
  stack.emplace_back(&root_value, root);
  while (!stack.empty()) {
    auto [v, node] = stack.back();
    stack.pop_back();
    if (!node) continue;
    const SchemaNode* s = node->resolved();
    if (v->IsArray() && s->type == SchemaNode::Type::Array) {
      for (auto& item : v->GetArray()) stack.emplace_back(&item, s->items);
      continue;
    }
    if (!v->IsObject() || s->type != SchemaNode::Type::Object) continue;
    // Duplicates: keep the last occurrence, as encoding/json does.
    std::set<std::string_view> seen;
    for (auto it = v->MemberEnd(); it != v->MemberBegin();) {
      --it;
      if (!seen.insert(json::view(it->name)).second) {
        it = v->EraseMember(it);
      }
    }
    for (auto it = v->MemberBegin(); it != v->MemberEnd();) {
      std::string_view key = json::view(it->name);
      const SchemaNode* child = nullptr;
      if (s->additional) {
        child = s->additional;
      } else {
        auto p = s->properties.find(key);
        if (p == s->properties.end()) {
          if (!s->preserve_unknown) {
            it = v->EraseMember(it);
            continue;
          }
        } else {
          child = p->second;
        }
      }
      if (child) stack.emplace_back(&it->value, child);
      ++it;
    }
  }
}

}  // namespace shepherd::apis
