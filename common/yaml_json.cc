#include "common/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <regex>

namespace shepherd {

namespace {

constexpr long kMaxNodes = 1'000'000;  // caps "billion laughs" alias expansion

struct Converter {
  explicit Converter(json::Allocator& a) : alloc(a) {}
  json::Allocator& alloc;
  long nodes = 0;
  std::string error;

  bool isNull(const std::string& s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

  int boolValue(const std::string& s) {
    static const char* t[] = {"true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char* f[] = {"false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off", "OFF"};
    for (auto* x : t) if (s == x) return 1;
    for (auto* x : f) if (s == x) return 0;
    return -1;
  }

  bool scalar(const YAML::Node& n, json::Value& out) {
    const std::string& s = n.Scalar();
    const std::string& tag = n.Tag();
    if (tag == "!" || tag == "tag:yaml.org,2002:str") {
      out = json::str(s, alloc);
      return true;
    }
    if (tag == "?" || tag.empty()) {
      if (isNull(s)) { out.SetNull(); return true; }
      int b = boolValue(s);
      if (b >= 0) { out.SetBool(b == 1); return true; }
      static const std::regex intRe("^[-+]?(0|[1-9][0-9_]*)$");
      static const std::regex hexRe("^0x[0-9a-fA-F_]+$");
      static const std::regex floatRe(
          "^[-+]?(\\.[0-9]+|[0-9][0-9_]*(\\.[0-9_]*)?)([eE][-+]?[0-9]+)?$");
      if (s.size() < 64 && std::regex_match(s, intRe)) {
        std::string digits;
        for (char c : s) if (c != '_') digits += c;
        errno = 0;
        long long v = std::strtoll(digits.c_str(), nullptr, 10);
        if (errno == 0) { out.SetInt64(v); return true; }
        out.SetDouble(std::strtod(digits.c_str(), nullptr));
        return true;
      }
      if (s.size() < 64 && std::regex_match(s, hexRe)) {
        out.SetInt64(static_cast<int64_t>(std::strtoull(s.c_str() + 2, nullptr, 16)));
        return true;
      }
      if (s.size() < 64 && std::regex_match(s, floatRe)) {
        std::string digits;
        for (char c : s) if (c != '_') digits += c;
        double d = std::strtod(digits.c_str(), nullptr);
        if (std::isfinite(d)) { out.SetDouble(d); return true; }
      }
      out = json::str(s, alloc);
      return true;
    }
    if (tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float") {
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (end == s.c_str() || !std::isfinite(d)) {
        error = "invalid number \"" + s + "\"";
        return false;
      }
      if (d == std::floor(d) && std::fabs(d) < 9e15) out.SetInt64(static_cast<int64_t>(d));
      else out.SetDouble(d);
      return true;
    }
    if (tag == "tag:yaml.org,2002:bool") {
      int b = boolValue(s);
      if (b < 0) { error = "invalid boolean \"" + s + "\""; return false; }
      out.SetBool(b == 1);
      return true;
    }
    if (tag == "tag:yaml.org,2002:null") { out.SetNull(); return true; }
    out = json::str(s, alloc);  // unknown tags (e.g. !!binary) keep their text
    return true;
  }

  bool convert(const YAML::Node& n, json::Value& out, int depth) {
    if (++nodes > kMaxNodes) {
      error = "the YAML document expands to too many nodes";
      return false;
    }
    if (depth > json::kMaxDepth) {
      error = "the YAML document is nested more than " + std::to_string(json::kMaxDepth) +
              " levels deep";
      return false;
    }
    switch (n.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out.SetNull();
        return true;
      case YAML::NodeType::Scalar:
        return scalar(n, out);
      case YAML::NodeType::Sequence:
        out.SetArray();
        for (const auto& item : n) {
          json::Value v;
          if (!convert(item, v, depth + 1)) return false;
          out.PushBack(v, alloc);
        }
        return true;
      case YAML::NodeType::Map:
        out.SetObject();
        for (const auto& kv : n) {
          if (!kv.first.IsScalar()) {
            error = "YAML map keys must be scalars";
            return false;
          }
          json::Value v;
          if (!convert(kv.second, v, depth + 1)) return false;
          std::string_view key = kv.first.Scalar();
          if (json::find(out, key)) {
            error = "mapping key \"" + std::string(key) + "\" already defined";
            return false;
          }
          out.AddMember(json::str(key, alloc), v, alloc);
        }
        return true;
    }
    return true;
  }
};

void emitValue(YAML::Emitter& e, const json::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType: e << YAML::Null; break;
    case rapidjson::kFalseType: e << false; break;
    case rapidjson::kTrueType: e << true; break;
    case rapidjson::kStringType: {
      std::string s(v.GetString(), v.GetStringLength());
      // Quote strings that would otherwise read back as another type.
      bool needsQuote = s.empty();
      if (!needsQuote) {
        json::Document d;
        Converter c(d.GetAllocator());
        json::Value tmp;
        YAML::Node scalar(s);
        scalar.SetTag("?");
        c.scalar(scalar, tmp);
        needsQuote = !tmp.IsString();
      }
      if (needsQuote) e << YAML::DoubleQuoted << s;
      else e << s;
      break;
    }
    case rapidjson::kNumberType:
      if (v.IsInt64()) e << v.GetInt64();
      else if (v.IsUint64()) e << v.GetUint64();
      else e << v.GetDouble();
      break;
    case rapidjson::kArrayType:
      e << YAML::BeginSeq;
      for (auto& x : v.GetArray()) emitValue(e, x);
      e << YAML::EndSeq;
      break;
    case rapidjson::kObjectType:
      e << YAML::BeginMap;
      for (auto& m : v.GetObject()) {
        e << YAML::Key << std::string(m.name.GetString(), m.name.GetStringLength());
        e << YAML::Value;
        emitValue(e, m.value);
      }
      e << YAML::EndMap;
      break;
  }
}

}  // namespace

Status yamlToJson(std::string_view text, json::Document& doc) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return ApiError::badRequest(std::string("couldn't decode the request body as YAML: ") +
                                e.what());
  } catch (const std::exception& e) {
    return ApiError::badRequest(std::string("couldn't decode the request body as YAML: ") +
                                e.what());
  }
  doc.SetNull();
  Converter c(doc.GetAllocator());
  bool ok = false;
  try {
    ok = c.convert(root, doc, 1);
  } catch (const std::exception& e) {
    c.error = e.what();
  }
  if (!ok) return ApiError::badRequest("couldn't decode the request body as YAML: " + c.error);
  return okStatus();
}

std::string jsonToYaml(const json::Value& v) {
  YAML::Emitter e;
  e.SetIndent(2);
  e.SetSeqFormat(YAML::Block);
  e.SetMapFormat(YAML::Block);
  emitValue(e, v);
  std::string out = e.c_str();
  out += "\n";
  return out;
}

}  // namespace shepherd
