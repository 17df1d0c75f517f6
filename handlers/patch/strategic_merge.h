// Strategic merge patch, driven by the schema's merge keys and patch strategies: lists
// of objects with a merge key merge item by item, primitive lists with strategy
// "merge" are unioned, and the directives $patch (replace/delete/merge),
// $setElementOrder/<list>, $retainKeys and $deleteFromPrimitiveList/<list> apply.
#pragma once

#include "apis/schema.h"
#include "common/api_error.h"
#include "common/json.h"

namespace shepherd::handlers::patch {

// `schema` may be null (then maps merge and lists are replaced, as a merge patch).
Status applyStrategicMergePatch(json::Value& target, const json::Value& patch,
                                const apis::SchemaNode* schema, json::Allocator& a);

}  // namespace shepherd::handlers::patch
