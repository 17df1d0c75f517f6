// Decoding of the Kubernetes protobuf wire format for request bodies: the `k8s\0` magic,
// a runtime.Unknown envelope (typeMeta, raw, contentEncoding, contentType), and the
// object in `raw`, translated field by field into the same JSON a JSON client sends.
// kubectl >= 1.32 sends some creates this way (namespace, configmap, secret, service,
// deployment, token requests) and never retries with JSON.
#pragma once

#include <string_view>

#include "common/api_error.h"
#include "common/json.h"

namespace shepherd::apis {

// 415 UnsupportedMediaType for kinds we have no field table for; 400 for bad bytes.
Status decodeProtobufEnvelope(std::string_view body, json::Document& out);

}  // namespace shepherd::apis
