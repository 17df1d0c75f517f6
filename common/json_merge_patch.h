// JSON merge patches (RFC 7386): applying one (objects merge recursively, null deletes,
// anything else replaces, arrays included), and creating the one a client sends to make a
// stored value equal to the one it computed, when it owns the whole value (a controller's
// status).
#pragma once

#include "common/json.h"

namespace shepherd::json {

void applyMergePatch(Value& target, const Value& patch, Allocator& a);

// The merge patch that turns `from` into `to`: members of `from` missing from `to` become
// null (removed), objects are compared member by member, and anything else that differs
// (arrays, scalars, a change of type) is replaced whole. An empty object when the two are
// equal. Merge patches cannot set a null, so `to` should hold none (absent instead).
Document createMergePatch(const Value& from, const Value& to);

}  // namespace shepherd::json
