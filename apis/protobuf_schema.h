// Field tables of the protobuf messages Shepherd decodes from request bodies: for each
// message, its fields' numbers (from upstream's generated.proto), JSON names and kinds.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace shepherd::apis::protobuf {

// How a field's bytes become JSON.
enum class K {
  String,       // length-delimited text
  Bytes,        // length-delimited bytes -> base64 string
  Int,          // varint (int32/int64)
  Bool,         // varint
  Message,      // nested message (type in `msg`)
  Inline,       // nested message whose fields JSON flattens into the parent (Go embedding)
  MapString,    // map<string,string>
  MapBytes,     // map<string,bytes> -> base64 values
  MapQuantity,  // map<string,Quantity> -> string values
  MapTime,      // map<string,Time> -> RFC 3339 values
  Time,         // meta.v1.Time -> RFC 3339 string
  MicroTime,    // meta.v1.MicroTime -> RFC 3339 with microseconds
  IntOrString,  // intstr.IntOrString -> number or string
  Quantity,     // resource.Quantity -> string
  Duration,     // meta.v1.Duration (nanoseconds) -> Go duration string
  RawJson,      // FieldsV1 / RawExtension raw bytes holding JSON
};

struct Field {
  int number;
  const char* json;
  K kind;
  bool repeated = false;
  const char* msg = nullptr;
  // Pointer fields in Go: a zero value on the wire was set on purpose and is kept.
  bool keep_zero = false;
};

using Message = std::vector<Field>;

// Every known message by its short name ("ObjectMeta", "PodSpec", ...).
const std::map<std::string, Message>& messages();
// Top-level kinds decodable from a request body: "apiVersion/Kind" -> message name.
const std::map<std::string, std::string>& topLevelKinds();

}  // namespace shepherd::apis::protobuf
