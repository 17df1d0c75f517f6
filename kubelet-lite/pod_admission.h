// Pod admission on the node, as the kubelet's HandlePodAdditions: a pod new to this
// node is checked against the pods already admitted and still active; a pod that does
// not fit is rejected (phase Failed, reason the predicate, "Pod was rejected: ...") and
// never started. Only the host-port predicate is checked: the scheduler places pods by
// resources, and a pod given a nodeName directly is the case this catches.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json.h"

namespace shepherd::kubelet {

struct PodRejection {
  std::string reason;   // the predicate's name, e.g. NodePorts
  std::string message;  // "Predicate NodePorts failed: ..." (the status says "Pod was rejected: " first)
};

// Whether `pod` may run beside `active` (the admitted, non-terminal pods of the node).
std::optional<PodRejection> admitPod(const json::Value& pod, const std::vector<const json::Value*>& active);

}  // namespace shepherd::kubelet
