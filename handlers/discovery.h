// API discovery: /version, /api, /apis, and each group and group-version's resources.
#pragma once

#include <string>

#include "apis/catalog.h"

namespace shepherd::handlers {

struct VersionInfo {
  std::string git_version = "v1.31.0-shepherd";
  std::string major = "1";
  std::string minor = "31";
};

std::string versionJson(const VersionInfo& v);
std::string apiVersionsJson(const std::string& server_address);     // GET /api
std::string apiGroupListJson(const apis::Catalog& c);               // GET /apis
std::string apiGroupJson(const apis::Catalog& c, const std::string& group);  // GET /apis/<g>; "" if unknown
std::string apiResourceListJson(const apis::Catalog& c, const std::string& group, const std::string& version);

// Aggregated discovery (apidiscovery.k8s.io/<version> APIGroupDiscoveryList) of the core
// group (`core` true, for /api) or of every named group (for /apis).
std::string aggregatedDiscoveryJson(const apis::Catalog& c, bool core, const std::string& version);
// The aggregated discovery version the Accept header asks for first ("v2", "v2beta1"), or
// "" when the client did not ask for aggregated discovery.
std::string wantsAggregatedDiscovery(std::string_view accept);

}  // namespace shepherd::handlers
