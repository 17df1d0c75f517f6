#include "apis/kinds/resource_names.h"

#include <set>

#include "meta/validation.h"

namespace shepherd::apis::kinds {

using meta::validation::quote;

bool isHugePages(std::string_view n) {
  return n.substr(0, 10) == "hugepages-";
}

bool isNative(std::string_view n) {
  return n.find('/') == std::string_view::npos || n.find("kubernetes.io/") != std::string_view::npos;
}

bool isExtended(std::string_view n) {
  if (isNative(n) || n.substr(0, 9) == "requests.") return false;
  return meta::validation::qualifiedName("requests." + std::string(n)).empty();
}

bool overcommitAllowed(std::string_view n) {
  return isNative(n) && !isHugePages(n);
}

bool isStandardResourceName(std::string_view n) {
  static const std::set<std::string_view> standard = {"cpu",
                                                      "memory",
                                                      "ephemeral-storage",
                                                      "requests.cpu",
                                                      "requests.memory",
                                                      "requests.ephemeral-storage",
                                                      "limits.cpu",
                                                      "limits.memory",
                                                      "limits.ephemeral-storage",
                                                      "pods",
                                                      "services",
                                                      "replicationcontrollers",
                                                      "resourcequotas",
                                                      "secrets",
                                                      "configmaps",
                                                      "persistentvolumeclaims",
                                                      "requests.storage",
                                                      "services.nodeports",
                                                      "services.loadbalancers"};
  return standard.count(n) || isHugePages(n) || n.substr(0, 19) == "requests.hugepages-";
}

bool isStandardQuotaResourceName(std::string_view n) {
  static const std::set<std::string_view> quota = {"pods",
                                                   "cpu",
                                                   "memory",
                                                   "ephemeral-storage",
                                                   "requests.cpu",
                                                   "requests.memory",
                                                   "requests.storage",
                                                   "requests.ephemeral-storage",
                                                   "limits.cpu",
                                                   "limits.memory",
                                                   "limits.ephemeral-storage",
                                                   "services",
                                                   "services.loadbalancers",
                                                   "services.nodeports",
                                                   "secrets",
                                                   "configmaps",
                                                   "persistentvolumeclaims",
                                                   "replicationcontrollers",
                                                   "resourcequotas"};
  return quota.count(n) || n.substr(0, 19) == "requests.hugepages-";
}

void validateResourceTypeName(std::string_view name, const std::string& field, FieldErrors& errs) {
  auto problems = meta::validation::qualifiedName(name);
  for (auto& e : problems) errs.invalid(field, quote(name), e);
  if (problems.empty() && name.find('/') == std::string_view::npos && !isStandardResourceName(name))
    errs.invalid(field, quote(name), "must be a standard resource type or fully qualified");
}

void validateContainerResourceName(std::string_view name, const std::string& field, FieldErrors& errs) {
  validateResourceTypeName(name, field, errs);
  if (name.find('/') == std::string_view::npos) {
    if (name != "cpu" && name != "memory" && name != "ephemeral-storage" && !isHugePages(name))
      errs.invalid(field, quote(name), "must be a standard resource for containers");
  } else if (!isNative(name) && !isExtended(name)) {
    errs.invalid(field, quote(name), "doesn't follow extended resource name standard");
  }
}

}  // namespace shepherd::apis::kinds
