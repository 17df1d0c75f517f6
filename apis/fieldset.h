// Sets of field paths in the FieldsV1 form used by managedFields and server-side apply:
// "f:<name>" for struct fields and map keys, "k:{...}" for items of keyed lists,
// "v:<json>" for members of set lists, "." for a node that is itself owned.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "apis/schema.h"
#include "common/api_error.h"
#include "common/json.h"

namespace shepherd::apis {

using FieldPath = std::vector<std::string>;

class FieldSet {
 public:
  struct Node {
    bool self = false;  // the path to this node is a member
    std::map<std::string, Node> children;
    bool empty() const;
  };

  // The fields `value` sets, shaped by `schema` (may be null: every map is a struct,
  // every list atomic).
  static FieldSet fromObject(const json::Value& value, const SchemaNode* schema);
  // The same, leaving out the named top-level members and the named members of the
  // top-level "metadata" (what managedFields never track), without copying the object.
  static FieldSet fromObjectExcept(const json::Value& value, const SchemaNode* schema,
                                   std::initializer_list<std::string_view> skip_top,
                                   std::initializer_list<std::string_view> skip_metadata);
  static Result<FieldSet> fromFieldsV1(const json::Value& v);
  json::Value toFieldsV1(json::Allocator& a) const;

  bool empty() const { return root_.empty(); }
  bool has(const FieldPath& p) const;
  void insert(const FieldPath& p);
  void erase(const FieldPath& p);
  FieldSet intersect(const FieldSet& o) const;
  FieldSet minus(const FieldSet& o) const;
  FieldSet unite(const FieldSet& o) const;
  // Drops every path that starts with `prefix`.
  void eraseUnder(const FieldPath& prefix);
  // Calls fn for every member path (depth-first, parents before children).
  void forEach(const std::function<void(const FieldPath&)>& fn) const;
  std::vector<FieldPath> paths() const;

  // ".spec.containers[name=\"c\"].image" — how conflicts are reported.
  static std::string describe(const FieldPath& p);

 private:
  Node root_;
};

// Navigation of an object by a field path; nullptr when absent.
const json::Value* valueAt(const json::Value& obj, const FieldPath& p);
// Removes what the path names from `obj` (a member, a keyed item, a set member, or for
// "." the node itself). Returns false when it was not there.
bool removeAt(json::Value& obj, const FieldPath& p);

}  // namespace shepherd::apis
