#include "common/json.h"

#include <rapidjson/error/en.h>

#include <vector>

namespace shepherd::json {

namespace {

// Iterative depth measurement: an explicit stack, so a 100k-deep document is safe.
int depthIterative(const Value& root) {
  std::vector<std::pair<const Value*, int>> stack;
  stack.emplace_back(&root, 1);
  int best = 0;
  while (!stack.empty()) {
    auto [v, d] = stack.back();
    stack.pop_back();
    if (d > best) best = d;
    if (v->IsObject()) {
      for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it)
        stack.emplace_back(&it->value, d + 1);
    } else if (v->IsArray()) {
      for (auto it = v->Begin(); it != v->End(); ++it) stack.emplace_back(&*it, d + 1);
    }
  }
  return best;
}

// Cheap pre-scan so a pathological document is refused before it is materialized.
bool nestingTooDeep(std::string_view text) {
  int d = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++d > kMaxDepth) return true;
    } else if (c == '}' || c == ']') {
      --d;
    }
  }
  return false;
}

}  // namespace

Status parse(std::string_view text, Document& doc) {
  if (nestingTooDeep(text))
    return ApiError::badRequest("the request body is nested more than " +
                                std::to_string(kMaxDepth) + " levels deep");
  doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (doc.HasParseError()) {
    return ApiError::badRequest(
        std::string("couldn't decode the request body as JSON: ") +
        rapidjson::GetParseError_En(doc.GetParseError()) + " at offset " +
        std::to_string(doc.GetErrorOffset()));
  }
  return okStatus();
}

int depth(const Value& v) { return depthIterative(v); }

void serializeTo(const Value& v, std::string& out) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  v.Accept(w);
  out.append(sb.GetString(), sb.GetSize());
}

namespace {

// Forwards to a Writer and notes the output offset where one top-level member's object
// closes (Value::Accept drives it like any SAX handler).
class EndFinder {
 public:
  EndFinder(rapidjson::StringBuffer& sb, std::string_view member, size_t& end)
      : sb_(sb), w_(sb), member_(member), end_(end) {}
  bool Null() { return w_.Null(); }
  bool Bool(bool b) { return w_.Bool(b); }
  bool Int(int i) { return w_.Int(i); }
  bool Uint(unsigned u) { return w_.Uint(u); }
  bool Int64(int64_t i) { return w_.Int64(i); }
  bool Uint64(uint64_t u) { return w_.Uint64(u); }
  bool Double(double d) { return w_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return w_.RawNumber(s, n, copy); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return w_.String(s, n, copy); }
  bool StartObject() {
    ++depth_;
    if (depth_ == 2 && pending_) inside_ = true;
    pending_ = false;
    return w_.StartObject();
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    if (depth_ == 1 && std::string_view(s, n) == member_) {
      // Lookups find the first of duplicate members; a second one makes the offset
      // ambiguous, so none is reported.
      if (seen_) {
        ambiguous_ = true;
        end_ = std::string::npos;
      }
      seen_ = true;
      pending_ = !ambiguous_;
    } else if (depth_ == 1) {
      pending_ = false;
    }
    return w_.Key(s, n, copy);
  }
  bool EndObject(rapidjson::SizeType n) {
    if (depth_ == 2 && inside_) {
      if (!ambiguous_) end_ = sb_.GetSize();
      inside_ = false;
    }
    --depth_;
    return w_.EndObject(n);
  }
  bool StartArray() {
    ++depth_;
    pending_ = false;
    return w_.StartArray();
  }
  bool EndArray(rapidjson::SizeType n) {
    --depth_;
    return w_.EndArray(n);
  }

 private:
  rapidjson::StringBuffer& sb_;
  rapidjson::Writer<rapidjson::StringBuffer> w_;
  std::string_view member_;
  size_t& end_;
  int depth_ = 0;
  bool pending_ = false;    // the last top-level key was `member`
  bool inside_ = false;     // inside that member's object
  bool seen_ = false;       // `member` has been seen
  bool ambiguous_ = false;  // ... more than once
};

}  // namespace

std::string serializeFindingEnd(const Value& v, std::string_view member, size_t& end) {
  end = std::string::npos;
  rapidjson::StringBuffer sb;
  EndFinder finder(sb, member, end);
  v.Accept(finder);
  return std::string(sb.GetString(), sb.GetSize());
}

std::string serialize(const Value& v) {
  std::string out;
  serializeTo(v, out);
  return out;
}

const Value* find(const Value& obj, std::string_view key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

Value* find(Value& obj, std::string_view key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

const Value* findPath(const Value& obj, std::initializer_list<std::string_view> path) {
  const Value* cur = &obj;
  for (auto k : path) {
    cur = find(*cur, k);
    if (!cur) return nullptr;
  }
  return cur;
}

Value* findPath(Value& obj, std::initializer_list<std::string_view> path) {
  Value* cur = &obj;
  for (auto k : path) {
    cur = find(*cur, k);
    if (!cur) return nullptr;
  }
  return cur;
}

std::string_view getString(const Value& obj, std::string_view key, std::string_view def) {
  const Value* v = find(obj, key);
  return v && v->IsString() ? view(*v) : def;
}

std::string_view getStringPath(const Value& obj, std::initializer_list<std::string_view> path,
                               std::string_view def) {
  const Value* v = findPath(obj, path);
  return v && v->IsString() ? view(*v) : def;
}

std::optional<int64_t> getInt(const Value& obj, std::string_view key) {
  const Value* v = find(obj, key);
  if (!v) return std::nullopt;
  if (v->IsInt64()) return v->GetInt64();
  if (v->IsDouble()) {
    double d = v->GetDouble();
    if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

bool getBool(const Value& obj, std::string_view key, bool def) {
  const Value* v = find(obj, key);
  return v && v->IsBool() ? v->GetBool() : def;
}

void set(Value& obj, std::string_view key, Value value, Allocator& a) {
  if (Value* existing = find(obj, key)) {
    *existing = std::move(value);
    return;
  }
  obj.AddMember(str(key, a), value, a);
}

void setString(Value& obj, std::string_view key, std::string_view s, Allocator& a) {
  set(obj, key, str(s, a), a);
}

Value& ensureObject(Value& obj, std::string_view key, Allocator& a) {
  Value* v = find(obj, key);
  if (v && v->IsObject()) return *v;
  if (v) {
    v->SetObject();
    return *v;
  }
  obj.AddMember(str(key, a), Value(rapidjson::kObjectType), a);
  return (obj.MemberEnd() - 1)->value;
}

bool remove(Value& obj, std::string_view key) {
  if (!obj.IsObject()) return false;
  return obj.RemoveMember(Value(rapidjson::StringRef(key.data(), key.size())));
}

}  // namespace shepherd::json
