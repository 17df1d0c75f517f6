// Thin helpers over RapidJSON, the one JSON object model of the API server. Objects are
// kept as generic documents so unknown fields round-trip untouched.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "common/api_error.h"

namespace shepherd::json {

using Value = rapidjson::Value;
using Document = rapidjson::Document;
using Allocator = rapidjson::Document::AllocatorType;

// Nesting limit for request bodies; far beyond any real Kubernetes object, low enough
// that recursive walks of a parsed document stay shallow.
inline constexpr int kMaxDepth = 100;

// Parses `text` into `doc` without recursion (hostile input cannot exhaust the stack) and
// rejects documents nested deeper than kMaxDepth. Errors are 400 BadRequest.
Status parse(std::string_view text, Document& doc);

// Depth of the deepest nested value (1 for a scalar).
int depth(const Value& v);

std::string serialize(const Value& v);
void serializeTo(const Value& v, std::string& out);
// Serializes an object and reports where the object held by its top-level `member` ends:
// the offset of that object's closing '}' in the output (npos if there is none).
std::string serializeFindingEnd(const Value& v, std::string_view member, size_t& end);

// Member lookup; nullptr when absent or when `obj` is not an object.
const Value* find(const Value& obj, std::string_view key);
Value* find(Value& obj, std::string_view key);
// Path lookup through nested objects.
const Value* findPath(const Value& obj, std::initializer_list<std::string_view> path);
Value* findPath(Value& obj, std::initializer_list<std::string_view> path);

// Typed getters returning a default when absent or of another type.
std::string_view getString(const Value& obj, std::string_view key, std::string_view def = "");
std::string_view getStringPath(const Value& obj, std::initializer_list<std::string_view> path,
                               std::string_view def = "");
std::optional<int64_t> getInt(const Value& obj, std::string_view key);
bool getBool(const Value& obj, std::string_view key, bool def = false);

inline Value str(std::string_view s, Allocator& a) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}
inline std::string_view view(const Value& v) {
  return v.IsString() ? std::string_view(v.GetString(), v.GetStringLength())
                      : std::string_view();
}

// Sets obj[key] = value, replacing an existing member. `obj` must be an object.
void set(Value& obj, std::string_view key, Value value, Allocator& a);
void setString(Value& obj, std::string_view key, std::string_view s, Allocator& a);
// Returns obj[key], creating an empty object member when absent (or replacing a non-object).
Value& ensureObject(Value& obj, std::string_view key, Allocator& a);
bool remove(Value& obj, std::string_view key);

}  // namespace shepherd::json
