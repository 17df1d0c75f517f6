#include "client/discovery.h"

#include <algorithm>

namespace shepherd::client {

bool ApiResource::can(std::string_view verb) const {
  return std::find(verbs.begin(), verbs.end(), verb) != verbs.end();
}

DiscoveryResult discoverPreferredResources(Client& client) {
  DiscoveryResult out;
  std::vector<std::pair<std::string, std::string>> groupVersions = {{"", "v1"}};
  auto groups = client.get("/apis");
  if (!groups) {
    out.failures.push_back("/apis: " + groups.error().message);
  } else if (const json::Value* list = json::find(*groups, "groups"); list && list->IsArray()) {
    for (auto& g : list->GetArray()) {
      std::string name(json::getString(g, "name"));
      std::string version(json::getStringPath(g, {"preferredVersion", "version"}));
      if (!name.empty() && !version.empty()) groupVersions.emplace_back(name, version);
    }
  }
  for (auto& [group, version] : groupVersions) {
    auto rl = client.get(groupVersionPath(group, version));
    if (!rl) {
      out.failures.push_back((group.empty() ? version : group + "/" + version) + ": " + rl.error().message);
      continue;
    }
    const json::Value* resources = json::find(*rl, "resources");
    if (!resources || !resources->IsArray()) continue;
    for (auto& res : resources->GetArray()) {
      ApiResource r;
      r.group = group;
      r.version = version;
      r.resource = json::getString(res, "name");
      if (r.resource.empty() || r.resource.find('/') != std::string::npos) continue;  // subresources
      r.kind = json::getString(res, "kind");
      r.namespaced = json::getBool(res, "namespaced");
      if (const json::Value* verbs = json::find(res, "verbs"); verbs && verbs->IsArray())
        for (auto& v : verbs->GetArray())
          if (v.IsString()) r.verbs.emplace_back(json::view(v));
      out.resources.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace shepherd::client
