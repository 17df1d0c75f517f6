#include "storage/etcd_codec.h"

#include <charconv>
#include <utility>

#include "common/base64.h"

namespace shepherd::storage::etcd_internal {

namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// int64 fields arrive as JSON strings ("42") and are left out when zero.
int64_t asInt64(const json::Value* v) {
  if (!v) return 0;
  if (v->IsInt64()) return v->GetInt64();
  if (!v->IsString()) return 0;
  std::string_view s = json::view(*v);
  int64_t out = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() ? out : 0;
}

// JSON writing: bytes fields are standard base64, int64 fields are strings.
void putBytes(JsonWriter& w, const char* name, std::string_view bytes) {
  std::string b = base64Encode(bytes);
  w.Key(name);
  w.String(b.data(), static_cast<rapidjson::SizeType>(b.size()), true);
}
void putInt(JsonWriter& w, const char* name, int64_t v) {
  std::string s = std::to_string(v);
  w.Key(name);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()), true);
}
void putTrue(JsonWriter& w, const char* name) {
  w.Key(name);
  w.Bool(true);
}
void putName(JsonWriter& w, const char* name, const char* value) {
  w.Key(name);
  w.String(value);
}
std::string text(const rapidjson::StringBuffer& sb) {
  return std::string(sb.GetString(), sb.GetSize());
}

}  // namespace

int64_t int64Field(const json::Value& obj, std::string_view name) {
  return asInt64(json::find(obj, name));
}
int64_t headerRevision(const json::Value& obj) {
  return asInt64(json::findPath(obj, {"header", "revision"}));
}

// The first element of obj[list], or nullptr (absent lists are how the gateway says "empty").
const json::Value* firstOf(const json::Value* obj, std::string_view list) {
  if (!obj) return nullptr;
  const json::Value* a = json::find(*obj, list);
  if (!a || !a->IsArray() || a->Empty()) return nullptr;
  return a->Begin();
}

// responses[0].<kind> of a txn answer.
const json::Value* firstResponse(const json::Value& txn, std::string_view kind) {
  const json::Value* op = firstOf(&txn, "responses");
  return op ? json::find(*op, kind) : nullptr;
}

std::string rangeBody(const RangeArgs& a) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  putBytes(w, "key", a.key);
  if (!a.range_end.empty()) putBytes(w, "range_end", a.range_end);
  if (a.limit > 0) putInt(w, "limit", a.limit);
  if (a.revision > 0) putInt(w, "revision", a.revision);
  if (a.keys_only) putTrue(w, "keys_only");
  w.EndObject();
  return text(sb);
}

std::string txnBody(const std::string& key, const char* target, const char* field, const char* result,
                    int64_t revision, Then then, std::string_view value) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("compare");
  w.StartArray();
  w.StartObject();
  putBytes(w, "key", key);
  putName(w, "target", target);
  putName(w, "result", result);
  putInt(w, field, revision);
  w.EndObject();
  w.EndArray();

  w.Key("success");
  w.StartArray();
  w.StartObject();
  if (then == Then::Put) {
    w.Key("request_put");
    w.StartObject();
    putBytes(w, "key", key);
    putBytes(w, "value", value);
    w.EndObject();
  } else {
    w.Key("request_delete_range");
    w.StartObject();
    putBytes(w, "key", key);
    putTrue(w, "prev_kv");
    w.EndObject();
  }
  w.EndObject();
  w.EndArray();

  w.Key("failure");
  w.StartArray();
  w.StartObject();
  w.Key("request_range");
  w.StartObject();
  putBytes(w, "key", key);
  w.EndObject();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return text(sb);
}

std::string compactionBody(int64_t revision) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  putInt(w, "revision", revision);
  putTrue(w, "physical");  // answer only once the old revisions are really gone
  w.EndObject();
  return text(sb);
}

std::string watchBody(const std::string& key, const std::string& range_end, int64_t start_revision) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("create_request");
  w.StartObject();
  putBytes(w, "key", key);
  putBytes(w, "range_end", range_end);
  putInt(w, "start_revision", start_revision);  // inclusive
  putTrue(w, "prev_kv");
  putTrue(w, "progress_notify");
  w.EndObject();
  w.EndObject();
  return text(sb);
}

Decoded decodeKv(const json::Value& o, const KeySpace& ks, KeyValue& kv) {
  auto key = base64Decode(json::getString(o, "key"));
  auto value = base64Decode(json::getString(o, "value"));
  if (!key || !value) return Decoded::Malformed;
  if (!ks.local(*key, kv.key)) return Decoded::Foreign;
  kv.value = std::move(*value);
  kv.create_revision = int64Field(o, "create_revision");
  kv.mod_revision = int64Field(o, "mod_revision");
  return Decoded::Ok;
}

// A watch event. A DELETE's kv has only the key and the deletion's revision; prev_kv (asked
// for with prev_kv) gives the deleted value and the incarnation's create_revision.
Decoded decodeEvent(const json::Value& ev, const KeySpace& ks, Event& e) {
  const json::Value* kv = json::find(ev, "kv");
  if (!kv || !kv->IsObject()) return Decoded::Malformed;
  if (Decoded d = decodeKv(*kv, ks, e.kv); d != Decoded::Ok) return d;
  const json::Value* type = json::find(ev, "type");  // absent for PUT (enum value 0)
  bool del =
      type && ((type->IsString() && json::view(*type) == "DELETE") || (type->IsInt() && type->GetInt() == 1));
  e.type = del ? Event::Type::Delete : Event::Type::Put;
  if (!del) return Decoded::Ok;
  e.kv.value.clear();
  if (const json::Value* prev = json::find(ev, "prev_kv"); prev && prev->IsObject()) {
    KeyValue p;
    if (decodeKv(*prev, ks, p) != Decoded::Ok) return Decoded::Malformed;
    e.kv.create_revision = p.create_revision;
    e.prev = std::move(p);
  }
  return Decoded::Ok;
}

}  // namespace shepherd::storage::etcd_internal
