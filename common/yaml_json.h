// YAML request bodies: converted to the same RapidJSON documents as JSON bodies, with
// scalars resolved the way Kubernetes' YAML decoder (YAML 1.1 core types) resolves them.
#pragma once

#include <string>
#include <string_view>

#include "common/json.h"

namespace shepherd {

// Converts the first YAML document in `text` into `doc`. Bounded: nesting beyond
// json::kMaxDepth and alias expansion beyond a node budget are 400 BadRequest.
Status yamlToJson(std::string_view text, json::Document& doc);

// Writes a JSON value as block-style YAML, for `Accept: application/yaml`.
std::string jsonToYaml(const json::Value& v);

}  // namespace shepherd
