#include "apis/protobuf_decode.h"

#include <map>
#include <string>
#include <vector>

#include "apis/protobuf_schema.h"
#include "common/base64.h"
#include "common/clock.h"

namespace shepherd::apis {

namespace {

using protobuf::Field;
using protobuf::K;
using protobuf::Message;
using protobuf::messages;

struct Reader {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;

  bool done() const { return p >= end; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) {
        ok = false;
        return 0;
      }
      uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    ok = false;
    return 0;
  }
  std::string_view bytes() {
    uint64_t n = varint();
    if (!ok || n > static_cast<uint64_t>(end - p)) {
      ok = false;
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
  void skip(int wire) {
    switch (wire) {
      case 0:
        varint();
        break;
      case 1:
        if (end - p < 8)
          ok = false;
        else
          p += 8;
        break;
      case 2:
        bytes();
        break;
      case 5:
        if (end - p < 4)
          ok = false;
        else
          p += 4;
        break;
      default:
        ok = false;
    }
  }
};

ApiError bad(const std::string& why) {
  return ApiError::badRequest("couldn't decode the protobuf request body: " + why);
}

Status decodeMessage(std::string_view data, const Message& msg, json::Value& out, json::Allocator& a,
                     int depth);

Status decodeTime(std::string_view data, bool micro, json::Value& out, json::Allocator& a) {
  Reader r{reinterpret_cast<const uint8_t*>(data.data()),
           reinterpret_cast<const uint8_t*>(data.data() + data.size())};
  int64_t secs = 0, nanos = 0;
  while (!r.done() && r.ok) {
    uint64_t tag = r.varint();
    int num = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
    if (num == 1 && wire == 0)
      secs = static_cast<int64_t>(r.varint());
    else if (num == 2 && wire == 0)
      nanos = static_cast<int64_t>(r.varint());
    else
      r.skip(wire);
  }
  if (!r.ok) return bad("malformed time");
  if (secs == 0 && nanos == 0) {
    out.SetNull();
    return okStatus();
  }
  auto tp = std::chrono::system_clock::time_point(std::chrono::seconds(secs)) +
            std::chrono::microseconds(micro ? nanos / 1000 : 0);
  out = json::str(micro ? clock::rfc3339Micro(tp) : clock::rfc3339(tp), a);
  return okStatus();
}

Status decodeMapEntry(std::string_view data, bool bytesValue, std::string& key, std::string& value) {
  Reader r{reinterpret_cast<const uint8_t*>(data.data()),
           reinterpret_cast<const uint8_t*>(data.data() + data.size())};
  while (!r.done() && r.ok) {
    uint64_t tag = r.varint();
    int num = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
    if (num == 1 && wire == 2)
      key = r.bytes();
    else if (num == 2 && wire == 2)
      value = bytesValue ? base64Encode(r.bytes()) : std::string(r.bytes());
    else
      r.skip(wire);
  }
  return r.ok ? okStatus() : Status(bad("malformed map entry"));
}

Status decodeValue(const Field& f, int wire, Reader& r, json::Value& out, json::Allocator& a, int depth) {
  switch (f.kind) {
    case K::Int:
    case K::Bool: {
      if (wire != 0) return bad(std::string("field ") + f.json + " has the wrong wire type");
      uint64_t v = r.varint();
      if (f.kind == K::Bool)
        out.SetBool(v != 0);
      else
        out.SetInt64(static_cast<int64_t>(v));
      return okStatus();
    }
    default:
      break;
  }
  if (wire != 2) return bad(std::string("field ") + f.json + " has the wrong wire type");
  std::string_view data = r.bytes();
  if (!r.ok) return bad("truncated field " + std::string(f.json));
  switch (f.kind) {
    case K::String:
      out = json::str(data, a);
      return okStatus();
    case K::Bytes:
      out = json::str(base64Encode(data), a);
      return okStatus();
    case K::Quantity: {
      Reader q{reinterpret_cast<const uint8_t*>(data.data()),
               reinterpret_cast<const uint8_t*>(data.data() + data.size())};
      std::string s;
      while (!q.done() && q.ok) {
        uint64_t tag = q.varint();
        if ((tag >> 3) == 1 && (tag & 7) == 2)
          s = q.bytes();
        else
          q.skip(static_cast<int>(tag & 7));
      }
      out = json::str(s, a);
      return q.ok ? okStatus() : Status(bad("malformed quantity"));
    }
    case K::IntOrString: {
      Reader q{reinterpret_cast<const uint8_t*>(data.data()),
               reinterpret_cast<const uint8_t*>(data.data() + data.size())};
      int64_t type = 0, iv = 0;
      std::string sv;
      while (!q.done() && q.ok) {
        uint64_t tag = q.varint();
        int num = static_cast<int>(tag >> 3), w = static_cast<int>(tag & 7);
        if (num == 1 && w == 0)
          type = static_cast<int64_t>(q.varint());
        else if (num == 2 && w == 0)
          iv = static_cast<int32_t>(q.varint());
        else if (num == 3 && w == 2)
          sv = q.bytes();
        else
          q.skip(w);
      }
      if (type == 1)
        out = json::str(sv, a);
      else
        out.SetInt64(iv);
      return q.ok ? okStatus() : Status(bad("malformed int-or-string"));
    }
    case K::Time:
      return decodeTime(data, false, out, a);
    case K::MicroTime:
      return decodeTime(data, true, out, a);
    case K::RawJson: {
      json::Document d;
      Reader q{reinterpret_cast<const uint8_t*>(data.data()),
               reinterpret_cast<const uint8_t*>(data.data() + data.size())};
      std::string_view raw;
      while (!q.done() && q.ok) {
        uint64_t tag = q.varint();
        if ((tag >> 3) == 1 && (tag & 7) == 2)
          raw = q.bytes();
        else
          q.skip(static_cast<int>(tag & 7));
      }
      if (raw.empty()) {
        out.SetObject();
        return okStatus();
      }
      if (auto st = json::parse(raw, d); !st) return st;
      out.CopyFrom(d, a);
      return okStatus();
    }
    case K::Message:
    case K::Inline: {
      auto it = messages().find(f.msg);
      out.SetObject();
      if (it == messages().end()) return okStatus();  // a newer alpha message: skipped
      return decodeMessage(data, it->second, out, a, depth + 1);
    }
    case K::Duration: {
      Reader q{reinterpret_cast<const uint8_t*>(data.data()),
               reinterpret_cast<const uint8_t*>(data.data() + data.size())};
      int64_t ns = 0;
      while (!q.done() && q.ok) {
        uint64_t tag = q.varint();
        if ((tag >> 3) == 1 && (tag & 7) == 0)
          ns = static_cast<int64_t>(q.varint());
        else
          q.skip(static_cast<int>(tag & 7));
      }
      int64_t secs = ns / 1000000000;
      std::string s;
      if (secs >= 3600) s += std::to_string(secs / 3600) + "h";
      if (secs >= 60) s += std::to_string((secs % 3600) / 60) + "m";
      s += std::to_string(secs % 60) + "s";
      out = json::str(s, a);
      return q.ok ? okStatus() : Status(bad("malformed duration"));
    }
    default:
      return bad("unexpected field kind");
  }
}

Status decodeMessage(std::string_view data, const Message& msg, json::Value& out, json::Allocator& a,
                     int depth) {
  if (depth > 32) return bad("nested too deeply");
  Reader r{reinterpret_cast<const uint8_t*>(data.data()),
           reinterpret_cast<const uint8_t*>(data.data() + data.size())};
  while (!r.done()) {
    uint64_t tag = r.varint();
    if (!r.ok) return bad("malformed tag");
    int num = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
    const Field* f = nullptr;
    for (const auto& x : msg)
      if (x.number == num) f = &x;
    if (!f) {
      r.skip(wire);
      if (!r.ok) return bad("malformed unknown field");
      continue;
    }
    if (f->kind == K::MapString || f->kind == K::MapBytes || f->kind == K::MapQuantity ||
        f->kind == K::MapTime) {
      if (wire != 2) return bad(std::string("field ") + f->json + " has the wrong wire type");
      std::string_view entry = r.bytes();
      if (!r.ok) return bad("truncated map entry");
      std::string k, v;
      if (auto st = decodeMapEntry(entry, f->kind == K::MapBytes, k, v); !st) return st;
      if (f->kind == K::MapQuantity) {
        // The value is a Quantity message {string = 1}.
        Reader q{reinterpret_cast<const uint8_t*>(v.data()),
                 reinterpret_cast<const uint8_t*>(v.data() + v.size())};
        std::string text;
        while (!q.done() && q.ok) {
          uint64_t tag = q.varint();
          if ((tag >> 3) == 1 && (tag & 7) == 2)
            text = q.bytes();
          else
            q.skip(static_cast<int>(tag & 7));
        }
        if (!q.ok) return bad("malformed quantity");
        v = text;
      }
      json::Value& map = json::ensureObject(out, f->json, a);
      if (f->kind == K::MapTime) {
        // The value is a Time message {seconds = 1, nanos = 2}.
        json::Value t;
        if (auto st = decodeTime(v, false, t, a); !st) return st;
        json::set(map, k, std::move(t), a);
        continue;
      }
      json::setString(map, k, v, a);
      continue;
    }
    json::Value v;
    if (f->repeated && wire == 2 && (f->kind == K::Int || f->kind == K::Bool)) {
      // Packed repeated scalars.
      std::string_view packed = r.bytes();
      Reader pr{reinterpret_cast<const uint8_t*>(packed.data()),
                reinterpret_cast<const uint8_t*>(packed.data() + packed.size())};
      json::Value* arr = json::find(out, f->json);
      if (!arr) {
        out.AddMember(json::str(f->json, a), json::Value(rapidjson::kArrayType), a);
        arr = json::find(out, f->json);
      }
      while (!pr.done() && pr.ok) {
        uint64_t x = pr.varint();
        arr->PushBack(f->kind == K::Bool ? json::Value(x != 0) : json::Value(static_cast<int64_t>(x)), a);
      }
      if (!pr.ok) return bad("malformed packed field");
      continue;
    }
    if (auto st = decodeValue(*f, wire, r, v, a, depth); !st) return st;
    if (f->kind == K::Inline) {
      // Embedded Go struct: its fields belong to this JSON object.
      for (auto& m : v.GetObject()) json::set(out, json::view(m.name), json::Value(m.value, a), a);
      continue;
    }
    if (f->repeated) {
      json::Value* arr = json::find(out, f->json);
      if (!arr || !arr->IsArray()) {
        json::set(out, f->json, json::Value(rapidjson::kArrayType), a);
        arr = json::find(out, f->json);
      }
      arr->PushBack(v, a);
      continue;
    }
    // Non-pointer zero values are what Go writes for "unset"; JSON omits them.
    bool zero = v.IsNull() || (v.IsString() && v.GetStringLength() == 0) ||
                (v.IsInt64() && v.GetInt64() == 0) || (v.IsBool() && !v.GetBool()) ||
                (v.IsObject() && v.MemberCount() == 0 && f->kind != K::Message);
    if (zero && !f->keep_zero) continue;
    json::set(out, f->json, std::move(v), a);
  }
  return okStatus();
}

}  // namespace

Status decodeProtobufEnvelope(std::string_view body, json::Document& out) {
  if (body.size() < 4 || body.substr(0, 4) != std::string_view("k8s\0", 4))
    return bad("missing the k8s protobuf magic prefix");
  Reader r{reinterpret_cast<const uint8_t*>(body.data() + 4),
           reinterpret_cast<const uint8_t*>(body.data() + body.size())};
  std::string apiVersion, kind, contentEncoding, contentType;
  std::string_view raw;
  while (!r.done()) {
    uint64_t tag = r.varint();
    if (!r.ok) return bad("malformed envelope");
    int num = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
    if (num == 1 && wire == 2) {
      std::string_view tm = r.bytes();
      Reader t{reinterpret_cast<const uint8_t*>(tm.data()),
               reinterpret_cast<const uint8_t*>(tm.data() + tm.size())};
      while (!t.done() && t.ok) {
        uint64_t tt = t.varint();
        int n = static_cast<int>(tt >> 3);
        if (n == 1 && (tt & 7) == 2)
          apiVersion = t.bytes();
        else if (n == 2 && (tt & 7) == 2)
          kind = t.bytes();
        else
          t.skip(static_cast<int>(tt & 7));
      }
      if (!t.ok) return bad("malformed type meta");
    } else if (num == 2 && wire == 2) {
      raw = r.bytes();
    } else if (num == 3 && wire == 2) {
      contentEncoding = r.bytes();
    } else if (num == 4 && wire == 2) {
      contentType = r.bytes();
    } else {
      r.skip(wire);
    }
    if (!r.ok) return bad("malformed envelope");
  }
  if (!contentEncoding.empty()) return bad("content encoding " + contentEncoding + " is not supported");
  auto it = protobuf::topLevelKinds().find(apiVersion + "/" + kind);
  if (it == protobuf::topLevelKinds().end())
    return ApiError::unsupportedMediaType("protobuf request bodies for " + apiVersion + "/" + kind +
                                          " are not supported; send application/json");
  out.SetObject();
  auto& a = out.GetAllocator();
  out.AddMember("apiVersion", json::str(apiVersion, a), a);
  out.AddMember("kind", json::str(kind, a), a);
  return decodeMessage(raw, messages().at(it->second), out, a, 0);
}

}  // namespace shepherd::apis
