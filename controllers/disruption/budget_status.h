// The disruption controller's arithmetic, as pure functions of a budget and its pods:
// which evictions are still expected (status.disruptedPods), how many pods are healthy,
// how many must be, and the status that follows (upstream's trySync and updatePdbStatus).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/informer.h"
#include "common/json.h"

namespace shepherd::controllers::disruption {

// DeletionTimeout: an eviction the controller has not seen become a deletion by then is
// forgotten.
inline constexpr std::chrono::minutes kDeletionTimeout{2};

using TimePoint = std::chrono::system_clock::time_point;

// buildDisruptedPodMap: the entries of status.disruptedPods whose pod exists, is not yet
// being deleted and was evicted less than kDeletionTimeout ago (name -> RFC 3339 time);
// `expired` gets the pods whose eviction never turned into a deletion, `recheck` the
// earliest time an entry expires.
struct DisruptedPods {
  std::map<std::string, std::string> pods;
  std::vector<std::string> expired;
  std::optional<TimePoint> recheck;
};
DisruptedPods disruptedPods(const json::Value& budget, const std::vector<client::Object>& pods,
                            TimePoint now);

// countHealthyPods: Ready pods neither being deleted nor just evicted.
int64_t healthyPods(const std::vector<client::Object>& pods, const DisruptedPods& disrupted, TimePoint now);

// The status the controller wants; `unchanged` when the budget already has it (then
// nothing is written).
struct BudgetCounts {
  int64_t current_healthy = 0, desired_healthy = 0, expected = 0;
};
bool statusUpToDate(const json::Value& budget, const BudgetCounts& c, const DisruptedPods& disrupted);
// The budget with that status (the DisruptionAllowed condition updated at `now`).
json::Document withStatus(const json::Value& budget, const BudgetCounts& c, const DisruptedPods& disrupted,
                          const std::string& now);
// failSafe: disruptionsAllowed 0 and DisruptionAllowed=False (SyncFailed, `error`).
json::Document failedStatus(const json::Value& budget, const std::string& error, const std::string& now);

// A metav1.LabelSelector as Go's generated String() prints it (&LabelSelector{...}), for
// the UnmanagedPods event.
std::string goLabelSelector(const json::Value* selector);

}  // namespace shepherd::controllers::disruption
