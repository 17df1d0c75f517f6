// pods/eviction: what an Eviction decides (upstream's EvictionREST), as pure functions the
// handler (handlers/eviction.cc) runs between its reads and writes: which pods may go
// without asking a budget, which budget guards a pod, and the budget's check-and-decrement.
#pragma once

#include <string>
#include <vector>

#include "common/api_error.h"
#include "common/json.h"

namespace shepherd::apis::kinds {

// The Eviction's own checks: kind Eviction (policy/v1 or v1beta1), the URL's pod name,
// the request's namespace.
Status validateEviction(const json::Value& eviction, const std::string& url_name, const std::string& url_ns);

// canIgnorePDB: a finished or Pending pod, or one being deleted, goes without a budget.
bool evictionIgnoresBudgets(const json::Value& pod);
// shouldEnforceResourceVersion: deleting a running pod must not race it becoming Ready.
bool evictionEnforcesResourceVersion(const json::Value& pod);

// The budgets among `budgets` (the namespace's PodDisruptionBudgets) whose selector picks
// the pod; an unset or empty selector picks none here.
std::vector<const json::Value*> budgetsGuarding(const json::Value& pod,
                                                const std::vector<const json::Value*>& budgets);

// A pod that is not Ready may go without using up a disruption: the budget's policy is
// AlwaysAllow, or it is healthy enough without the pod (IfHealthyBudget, the default).
bool unreadyPodMayGo(const json::Value& pod, const json::Value& budget);

// checkAndDecrement: 429 while the budget's status lags its generation or it allows no
// disruption, 403 when its count is negative or too many evictions wait for the disruption
// controller; otherwise one disruption fewer, and (unless `dry_run`) the pod recorded in
// status.disruptedPods at `now`.
Status takeDisruption(json::Document& budget, const std::string& pod_name, const std::string& now,
                      bool dry_run);

// 429 "still being processed": the budget's status is behind, or the pod changed under us.
ApiError budgetBusy(const std::string& budget_name);

// addConditionAndDeletePod's first step on the latest pod: the UID and resourceVersion
// preconditions (409 when they fail), then DisruptionTarget=True (EvictionByEvictionAPI).
Status markDisruptionTarget(json::Document& pod, const std::string& uid, const std::string& resource_version,
                            const std::string& now);

}  // namespace shepherd::apis::kinds
