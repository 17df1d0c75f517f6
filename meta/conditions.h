// Status conditions over JSON, as apimachinery's meta.SetStatusCondition (metav1.Condition
// lists) and the pod helper podutil.UpdatePodCondition change them.
#pragma once

#include <string>
#include <string_view>

#include "common/json.h"

namespace shepherd::meta {

struct ConditionChange {
  std::string type, status, reason, message;
  int64_t observed_generation = 0;  // metav1.Condition only
};

// The condition of `type` in a conditions array (null when absent or not an array).
const json::Value* findCondition(const json::Value* conditions, std::string_view type);

// SetStatusCondition on `status`.conditions (created when absent): adds the condition, or
// updates the one of its type, whose lastTransitionTime moves to `now` only when its
// status changes. Returns whether anything changed.
bool setStatusCondition(json::Value& status, const ConditionChange& c, const std::string& now,
                        json::Allocator& a);

// UpdatePodCondition on a pod's status: the same for pod conditions (lastProbeTime null),
// where reason and message are left out when empty.
bool updatePodCondition(json::Value& pod_status, const ConditionChange& c, const std::string& now,
                        json::Allocator& a);

}  // namespace shepherd::meta
