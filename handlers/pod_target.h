// What pods/log, pods/exec, pods/attach and pods/portforward need to reach a pod's
// kubelet: the container a request means and the node's kubelet endpoint.
#pragma once

#include <string>

#include "common/api_error.h"
#include "common/json.h"
#include "registry/registry.h"

namespace shepherd::handlers {

// The container `requested` names, or the pod's only container when it is empty, with
// upstream's messages (400) when there is no such container or the choice is ambiguous.
Result<std::string> podContainer(const json::Value& pod, const std::string& requested,
                                 const std::string& pod_name);

struct KubeletEndpoint {
  std::string host;  // the node's InternalIP
  int port = 0;      // status.daemonEndpoints.kubeletEndpoint.Port
};
Result<KubeletEndpoint> kubeletEndpoint(registry::Registry& registry, const std::string& node_name);

// A kubelet's error answer (plain text) as the API server reports it; `subresource`
// ("pods/log", "pods/exec", ...) names what was not found on a 404.
ApiError kubeletError(int code, const std::string& body, const std::string& subresource,
                      const std::string& pod);

}  // namespace shepherd::handlers
