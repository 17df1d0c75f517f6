// Label and field selectors in their query-string forms, as upstream parses them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/api_error.h"
#include "common/json.h"

namespace shepherd::meta {

// Key/value pairs sorted by key: an object's labels, or its field-selector attributes.
using StringPairs = std::vector<std::pair<std::string, std::string>>;
// The value of `key` in sorted pairs, or null.
const std::string* lookup(const StringPairs& pairs, std::string_view key);

struct LabelRequirement {
  enum class Op { Equals, NotEquals, In, NotIn, Exists, DoesNotExist, GreaterThan, LessThan };
  std::string key;
  Op op;
  std::vector<std::string> values;
};

class LabelSelector {
 public:
  // Parses "a=b,c!=d,e in (f,g),!h". Errors are 400 BadRequest.
  static Result<LabelSelector> parse(std::string_view text);
  // A metav1.LabelSelector object ({matchLabels, matchExpressions}); errors are 400.
  // An empty object selects everything (callers treat an absent selector as nothing).
  static Result<LabelSelector> fromJson(const json::Value& selector);
  bool empty() const { return reqs_.empty(); }
  bool matches(const StringPairs& labels) const;
  // The same, for an object's metadata.labels map (absent: no labels).
  bool matchesLabels(const json::Value* labels) const;
  const std::vector<LabelRequirement>& requirements() const { return reqs_; }

 private:
  std::vector<LabelRequirement> reqs_;
};

struct FieldRequirement {
  std::string field;
  bool equals = true;  // false for !=
  std::string value;
};

class FieldSelector {
 public:
  // Parses "a=b,c!=d" (with \, \= \\ escapes) and checks every field is one of `allowed`
  // (metadata.name and metadata.namespace are always allowed).
  static Result<FieldSelector> parse(std::string_view text, const std::vector<std::string>& allowed,
                                     bool namespaced);
  bool empty() const { return reqs_.empty(); }
  // `fields` holds the object's attributes beyond its name and namespace.
  bool matches(const std::string& name, const std::string& ns, const StringPairs& fields) const;
  // The value required for `field` by an equality term, if any.
  const std::string* exactValue(std::string_view field) const;

 private:
  std::vector<FieldRequirement> reqs_;
};

}  // namespace shepherd::meta
