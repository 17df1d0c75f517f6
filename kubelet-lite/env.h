// Container environment and command lines as the kubelet builds them: env values,
// $(VAR) expansion (with $$ escaping), the downward API (fieldRef, resourceFieldRef),
// configMapKeyRef / secretKeyRef and envFrom (read through the API server).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/api_error.h"
#include "common/json.h"

namespace shepherd::kubelet {

using EnvList = std::vector<std::pair<std::string, std::string>>;

// Fetches a ConfigMap's or Secret's data by resource ("configmaps" or "secrets"), secret
// values already base64-decoded; nullopt when it does not exist.
using DataLookup = std::function<std::optional<std::map<std::string, std::string>>(
    const std::string& resource, const std::string& ns, const std::string& name)>;

struct PodFacts {
  const json::Value* pod = nullptr;  // the whole pod
  std::string pod_ip;
  std::string host_ip;
  std::string node_name;
  // Node allocatable, the default for resourceFieldRef limits without a container limit.
  std::string node_cpu = "1";
  std::string node_memory = "1Gi";
};

// Expands $(VAR) references against `env` (upstream's expansion rules: unknown
// references stay as written, $$ yields $).
std::string expand(const std::string& in, const std::map<std::string, std::string>& env);

// The container's environment in order. Errors: a missing non-optional reference
// (reason CreateContainerConfigError, message as upstream).
Result<EnvList> buildEnv(const json::Value& container, const PodFacts& facts, const DataLookup& lookup);

// The value of a downward API fieldRef path (metadata.name, metadata.labels['x'], ...).
std::optional<std::string> fieldRef(const PodFacts& facts, const std::string& path);
// The value of a resourceFieldRef (limits.cpu etc., with divisor).
std::optional<std::string> resourceFieldRef(const json::Value& container, const PodFacts& facts,
                                            const std::string& resource, const std::string& divisor);

}  // namespace shepherd::kubelet
