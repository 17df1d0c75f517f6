// Content negotiation: what the client accepts (JSON, YAML, Table) and how to decode a
// request body (JSON, YAML, the protobuf envelope kubectl >= 1.32 sends for some kinds).
#pragma once

#include <string>
#include <string_view>

#include "common/api_error.h"
#include "common/json.h"
#include "net/http/message.h"

namespace shepherd::handlers {

struct OutputFormat {
  enum class Kind { Json, Yaml, Table } kind = Kind::Json;
  std::string table_version = "v1";  // meta.k8s.io version for Tables
  bool pretty = false;
};

// Picks the first acceptable representation in the Accept header. `table_ok` says
// whether the endpoint can produce Tables. 406 when nothing acceptable remains.
Result<OutputFormat> negotiateOutput(const http::Request& req, bool table_ok);

// The media type of a body, without parameters, lower-cased.
std::string mediaType(std::string_view content_type);

// Decodes a create/update body (JSON, YAML or protobuf envelope) into `doc`.
Status decodeBody(const http::Request& req, json::Document& doc);

// Serializes `v` in the requested format (Table handled by the caller).
std::string encode(const json::Value& v, const OutputFormat& f);
const char* contentTypeOf(const OutputFormat& f);

}  // namespace shepherd::handlers
