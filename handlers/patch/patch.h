// Dispatch over the patch types of a PATCH request by Content-Type.
#pragma once

#include <string>

#include "apis/schema.h"
#include "common/api_error.h"
#include "common/json.h"

namespace shepherd::handlers::patch {

enum class PatchType { Json, Merge, Strategic, Apply };

// From a Content-Type; 415 for anything else.
Result<PatchType> patchTypeOf(const std::string& media_type);

// Applies a JSON, merge or strategic merge patch to `target` (apply patches are handled
// by the server-side apply engine, not here).
Status applyPatch(PatchType type, json::Document& target, const json::Value& patch, const apis::SchemaNode* schema);

}  // namespace shepherd::handlers::patch
