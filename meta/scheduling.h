// What decides whether a pod may run on a node, for the components that judge it without
// the scheduler (the DaemonSet controller, node lifecycle): taints against tolerations,
// and the pod's required node affinity (nodeSelector and the required terms, matching
// node labels and the metadata.name field), as upstream's component-helpers.
#pragma once

#include <functional>

#include "common/json.h"

namespace shepherd::meta {

// Whether one toleration tolerates one taint (ToleratesTaint).
bool toleratesTaint(const json::Value& toleration, const json::Value& taint);
// The first of the node's taints (spec.taints) that `keep` selects and no toleration of
// the pod spec tolerates, or null.
const json::Value* untoleratedTaint(const json::Value* taints, const json::Value* tolerations,
                                    const std::function<bool(const json::Value& taint)>& keep);
// Whether the node satisfies the pod spec's nodeSelector and required node affinity.
bool requiredNodeAffinityMatches(const json::Value& pod_spec, const json::Value& node);

}  // namespace shepherd::meta
