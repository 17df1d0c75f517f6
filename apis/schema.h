// The OpenAPI schema of every served kind, loaded once from apis/schema/*.yaml (embedded
// in the binary). One source drives /openapi/v2 and /openapi/v3, strict field
// validation (unknown and duplicate fields), type checks of request bodies, and the
// strategic-merge-patch metadata (merge keys and patch strategies).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"

namespace shepherd::apis {

struct SchemaNode {
  enum class Type { Any, Object, Array, String, Integer, Number, Boolean };
  Type type = Type::Any;
  std::string format;                  // int32, int64, date-time, byte, int-or-string, quantity
  std::string ref;                     // definition name when this node is a reference
  const SchemaNode* target = nullptr;  // resolved ref
  std::map<std::string, const SchemaNode*, std::less<>> properties;
  const SchemaNode* items = nullptr;       // arrays
  const SchemaNode* additional = nullptr;  // maps (additionalProperties)
  bool preserve_unknown = false;
  std::string patch_merge_key;  // x-kubernetes-patch-merge-key
  std::string patch_strategy;   // x-kubernetes-patch-strategy, e.g. "merge,retainKeys"
  std::string list_type;        // x-kubernetes-list-type
  std::vector<std::string> list_map_keys;
  std::string map_type;  // x-kubernetes-map-type ("atomic" or "granular")
  std::string go_type;   // for messages, e.g. "v1.Container"

  // Follows references; never null for a loaded schema.
  const SchemaNode* resolved() const { return target ? target->resolved() : this; }
  const SchemaNode* property(std::string_view name) const;

  // How a list at this (property) node merges: by key, as a set, or whole.
  enum class ListKind { Atomic, Map, Set };
  ListKind listKind() const;
  // The keys of an associative list (list-map-keys, else the patch merge key).
  std::vector<std::string> listKeys() const;
};

struct SchemaFinding {
  enum class Kind { UnknownField, DuplicateField, TypeMismatch };
  Kind kind;
  std::string path;     // spec.containers[0].imagee
  std::string message;  // unknown field "spec.containers[0].imagee"
  // Raised by a type's own decoder (quantities, times): Go's decoder stops there, so
  // this error wins over type mismatches it had noted earlier.
  bool stops_decoding = false;
};

// Thread-safety: immutable after load(); safe to share.
class SchemaRegistry {
 public:
  // Loads the embedded definitions; aborts the process if they are malformed (a build
  // error, not a runtime condition). Returns the process-wide instance.
  static const SchemaRegistry& instance();
  // For tests: load from given YAML text (documents with a top-level `definitions`).
  static std::unique_ptr<SchemaRegistry> fromYaml(std::string_view yaml, std::string& error);

  const SchemaNode* definition(std::string_view name) const;
  // Raw definitions (name -> OpenAPI v2 schema JSON with short $refs), for OpenAPI output.
  const json::Document& rawDefinitions() const { return raw_; }

  // Walks `obj` against the schema of `definition`: unknown fields (unless the schema
  // preserves them), duplicate keys, and values the typed decoder refuses (wrong JSON
  // type, bad base64 in []byte fields, malformed quantities and times).
  void check(const json::Value& obj, const SchemaNode* root, std::vector<SchemaFinding>& findings) const;

  // Drops what a typed decoder would drop: unknown fields (where the schema does not
  // preserve them) and all but the last of duplicated keys.
  void prune(json::Value& obj, const SchemaNode* root) const;

 private:
  SchemaNode* build(const json::Value& schema);
  std::deque<SchemaNode> nodes_;
  std::map<std::string, SchemaNode*, std::less<>> defs_;
  json::Document raw_;
};

}  // namespace shepherd::apis
