// OpenAPI documents built once from the embedded schema and the catalog: /openapi/v2
// (JSON) and /openapi/v3 with one document per group-version. kubectl reads them to
// validate manifests (it checks the PATCH operations' fieldValidation parameter) and
// for `kubectl explain`.
#pragma once

#include <map>
#include <string>

#include "apis/catalog.h"
#include "apis/schema.h"

namespace shepherd::handlers {

// Thread-safety: immutable after construction.
class OpenApiDocuments {
 public:
  OpenApiDocuments(const apis::Catalog& catalog, const apis::SchemaRegistry& schemas, const std::string& version);

  const std::string& v2() const { return v2_; }
  const std::string& v3Root() const { return v3_root_; }
  // Path like "api/v1" or "apis/apps/v1"; nullptr if unknown.
  const std::string* v3(const std::string& path) const;
  // Content hash of a v3 document (for ETag and the root's serverRelativeURL).
  std::string v3Hash(const std::string& path) const;

 private:
  std::string v2_;
  std::string v3_root_;
  std::map<std::string, std::string> v3_;
  std::map<std::string, std::string> v3_hash_;
};

}  // namespace shepherd::handlers
