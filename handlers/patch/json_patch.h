// JSON patch (RFC 6902): add, remove, replace, move, copy, test with JSON pointers.
#pragma once

#include "common/api_error.h"
#include "common/json.h"

namespace shepherd::handlers::patch {

// Applies `ops` (a JSON array) to `doc`. Errors are 422 with upstream-like messages for
// failed operations and 400 for malformed patches.
Status applyJsonPatch(json::Document& doc, const json::Value& ops);

}  // namespace shepherd::handlers::patch
