// The parts of PodSpec validation that validatePodSpec (podspec.cc) runs in upstream's
// order, one file each: volume_checks.cc, container_checks.cc, toleration_checks.cc,
// scheduling_checks.cc. Internal to apis/kinds.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "apis/resource.h"

namespace shepherd::apis::kinds {

// What the container checks need to know of the pod spec around them.
struct PodSpecScope {
  std::string path;  // "spec", "template.spec" or "spec.template.spec"
  bool is_pod = false;
  std::optional<int64_t> grace_period;  // terminationGracePeriodSeconds
  std::string restart_policy;
  bool host_network = false;
  // The volumes that passed their own checks: the only ones a volumeMount may name.
  std::set<std::string> volumes;
};

inline std::string indexed(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// volume_checks.cc
std::set<std::string> validateVolumes(const json::Value* volumes, const std::string& path, FieldErrors& errs);
// A relative path without '..' elements (subPath, items[].path, ...).
void validateLocalDescendingPath(std::string_view p, const std::string& field, FieldErrors& errs);
// An ObjectFieldSelector against the fields the downward API offers (env or volume).
void validateObjectFieldSelector(const json::Value& ref, const std::string& path, bool for_volume,
                                 FieldErrors& errs);
void validateResourceFieldSelector(const json::Value& ref, const std::string& path, bool for_volume,
                                   FieldErrors& errs);

// container_checks.cc: containers and initContainers, their ports and host ports.
void validateContainers(const json::Value& spec, const PodSpecScope& scope, FieldErrors& errs);

// toleration_checks.cc
void validateTolerations(const json::Value& tolerations, const std::string& path, FieldErrors& errs);

// scheduling_checks.cc: affinity, topology spread, DNS config, security context and
// the other pod-level fields.
void validateAffinity(const json::Value& affinity, const std::string& path, FieldErrors& errs);
void validateTopologySpreadConstraints(const json::Value& list, const std::string& path, FieldErrors& errs);
void validateDNSConfig(const json::Value& spec, const std::string& path, FieldErrors& errs);
void validatePodSecurityContext(const json::Value& spec, const std::string& path, FieldErrors& errs);
void validateSeccompProfile(const json::Value& profile, const std::string& path, FieldErrors& errs);

}  // namespace shepherd::apis::kinds
