// The catalog: every Resource Shepherd serves, in discovery order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apis/resource.h"

namespace shepherd::apis {

struct GroupVersion {
  std::string group;
  std::string version;
  std::string str() const { return group.empty() ? version : group + "/" + version; }
};

// Thread-safety: immutable after construction.
class Catalog {
 public:
  static const Catalog& instance();

  const std::vector<std::shared_ptr<const Resource>>& resources() const { return resources_; }
  // Group-versions in discovery order; the core group first.
  const std::vector<GroupVersion>& groupVersions() const { return group_versions_; }
  std::vector<std::shared_ptr<const Resource>> resourcesOf(const std::string& group,
                                                           const std::string& version) const;
  std::shared_ptr<const Resource> find(const std::string& group, const std::string& version,
                                       const std::string& plural) const;

 private:
  Catalog();
  std::vector<std::shared_ptr<const Resource>> resources_;
  std::vector<GroupVersion> group_versions_;
};

}  // namespace shepherd::apis
