#include "handlers/negotiation.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "apis/protobuf_decode.h"
#include "common/yaml_json.h"
#include <rapidjson/prettywriter.h>

namespace shepherd::handlers {

namespace {

struct MediaRange {
  std::string type;  // e.g. application/json
  std::vector<std::pair<std::string, std::string>> params;
  std::string param(std::string_view k) const {
    for (auto& [pk, pv] : params)
      if (pk == k) return pv;
    return "";
  }
};

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

std::vector<MediaRange> parseAccept(std::string_view accept) {
  std::vector<MediaRange> out;
  size_t start = 0;
  while (start <= accept.size()) {
    size_t comma = accept.find(',', start);
    if (comma == std::string_view::npos) comma = accept.size();
    std::string_view part = accept.substr(start, comma - start);
    MediaRange m;
    size_t semi = part.find(';');
    m.type = trim(part.substr(0, semi));
    std::transform(m.type.begin(), m.type.end(), m.type.begin(), [](unsigned char c) { return std::tolower(c); });
    while (semi != std::string_view::npos) {
      size_t next = part.find(';', semi + 1);
      std::string_view kv = part.substr(semi + 1, next == std::string_view::npos ? std::string_view::npos : next - semi - 1);
      size_t eq = kv.find('=');
      if (eq != std::string_view::npos) m.params.emplace_back(trim(kv.substr(0, eq)), trim(kv.substr(eq + 1)));
      semi = next;
    }
    if (!m.type.empty()) out.push_back(std::move(m));
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::string mediaType(std::string_view ct) {
  std::string t = trim(ct.substr(0, ct.find(';')));
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  return t;
}

Result<OutputFormat> negotiateOutput(const http::Request& req, bool table_ok) {
  OutputFormat f;
  f.pretty = req.queryBool("pretty");
  std::string_view accept = req.header("accept");
  if (accept.empty()) return f;
  auto ranges = parseAccept(accept);
  for (const auto& m : ranges) {
    std::string as = m.param("as");
    if (m.type == "application/json" || m.type == "application/*" || m.type == "*/*") {
      if (as.empty()) {
        f.kind = OutputFormat::Kind::Json;
        return f;
      }
      if (as == "Table" && m.param("g") == "meta.k8s.io" && table_ok &&
          (m.param("v") == "v1" || m.param("v") == "v1beta1")) {
        f.kind = OutputFormat::Kind::Table;
        f.table_version = m.param("v");
        return f;
      }
      continue;  // another "as=" we do not produce
    }
    if ((m.type == "application/yaml" || m.type == "text/yaml") && as.empty()) {
      f.kind = OutputFormat::Kind::Yaml;
      return f;
    }
  }
  return ApiError::notAcceptable("only the following media types are accepted: application/json, application/yaml" +
                                 std::string(table_ok ? ", application/json;as=Table;v=v1;g=meta.k8s.io" : ""));
}

Status decodeBody(const http::Request& req, json::Document& doc) {
  std::string type = mediaType(req.header("content-type"));
  if (req.body.empty()) return ApiError::badRequest("the request body is empty");
  if (type.empty() || type == "application/json" || type == "application/merge-patch+json" ||
      type == "application/strategic-merge-patch+json" || type == "application/json-patch+json" ||
      type == "*/*") {
    return json::parse(req.body, doc);
  }
  if (type == "application/yaml" || type == "text/yaml" || type == "application/apply-patch+yaml")
    return yamlToJson(req.body, doc);
  if (type == "application/vnd.kubernetes.protobuf") return apis::decodeProtobufEnvelope(req.body, doc);
  return ApiError::unsupportedMediaType("the body of the request was in an unknown format - accepted media types include: "
                                        "application/json, application/yaml, application/vnd.kubernetes.protobuf");
}

const char* contentTypeOf(const OutputFormat& f) {
  return f.kind == OutputFormat::Kind::Yaml ? "application/yaml" : "application/json";
}

std::string encode(const json::Value& v, const OutputFormat& f) {
  if (f.kind == OutputFormat::Kind::Yaml) return jsonToYaml(v);
  if (f.pretty) {
    rapidjson::StringBuffer sb;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(sb);
    w.SetIndent(' ', 2);
    v.Accept(w);
    return std::string(sb.GetString(), sb.GetSize()) + "\n";
  }
  return json::serialize(v);
}

}  // namespace shepherd::handlers
