// Discovery: the resources an API server serves (preferred version of each group), as
// client-go's ServerPreferredResources, for controllers that act on every resource (the
// namespace controller and the garbage collector).
#pragma once

#include <string>
#include <vector>

#include "client/client.h"

namespace shepherd::client {

struct ApiResource {
  std::string group, version, resource, kind;
  bool namespaced = false;
  std::vector<std::string> verbs;
  bool can(std::string_view verb) const;
  std::string apiVersion() const { return group.empty() ? version : group + "/" + version; }
};

struct DiscoveryResult {
  std::vector<ApiResource> resources;  // top-level resources only (no subresources)
  std::vector<std::string> failures;   // "group/version: message" for what could not be read
};

DiscoveryResult discoverPreferredResources(Client& client);

}  // namespace shepherd::client
