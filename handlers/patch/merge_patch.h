// JSON merge patch (RFC 7386): objects merge recursively, null deletes, anything else
// replaces (arrays included).
#pragma once

#include "common/json.h"

namespace shepherd::handlers::patch {

void applyMergePatch(json::Value& target, const json::Value& patch, json::Allocator& a);

}  // namespace shepherd::handlers::patch
