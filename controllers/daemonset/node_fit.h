// Where a DaemonSet's pods belong, as upstream's daemon controller decides it: the pod the
// DaemonSet would run on a node (its template, the node's name, the default daemon
// tolerations), whether a node should run it (nodeName, node affinity, NoSchedule and
// NoExecute taints) and whether a running one may stay (NoExecute taints only), and the
// node a daemon pod is for (spec.nodeName, or the metadata.name term of its required
// node affinity, which is how the controller pins pods for the scheduler).
#pragma once

#include <string>

#include "common/json.h"

namespace shepherd::controllers::daemon {

// Adds the tolerations every daemon pod has (not-ready and unreachable NoExecute; disk,
// memory and PID pressure and unschedulable NoSchedule; network-unavailable with host
// networking), replacing same-key same-effect ones.
void addDaemonTolerations(json::Value& pod_spec, json::Allocator& a);
// Sets the required node affinity to exactly the term `metadata.name In [node]`.
void pinToNode(json::Value& pod_spec, const std::string& node, json::Allocator& a);
// The node a daemon pod targets ("" if none).
std::string targetNode(const json::Value& pod);

struct Fit {
  bool should_run = false;       // a daemon pod should be created here
  bool should_continue = false;  // a daemon pod already here may stay
};
Fit nodeShouldRunDaemonPod(const json::Value& node, const json::Value& ds);

}  // namespace shepherd::controllers::daemon
