// meta.k8s.io Table responses for `kubectl get`: the kind's columns, one row per object,
// each row carrying the object's metadata (or the whole object with includeObject).
#pragma once

#include <string>
#include <vector>

#include "apis/resource.h"
#include "storage/watch_cache.h"

namespace shepherd::handlers {

enum class IncludeObject { None, Metadata, Object };

struct TableOptions {
  std::string version = "v1";  // meta.k8s.io/v1 or v1beta1
  IncludeObject include = IncludeObject::Metadata;
  bool columns = true;         // false for watch events after the first
};

// Builds a Table of `items`. `list_meta` is the list metadata JSON (or "{}").
std::string buildTable(const apis::Resource& r, const std::vector<storage::ObjectPtr>& items,
                       const TableOptions& opts, const std::string& list_meta_json);

}  // namespace shepherd::handlers
