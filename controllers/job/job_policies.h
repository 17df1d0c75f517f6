// How a Job judges its pods, as upstream's pod_failure_policy.go, success_policy.go and
// backoff_utils.go: which rule of the pod failure policy a failed pod matches, whether
// the succeeded indexes meet the success policy, when a pod finished, and how long pod
// re-creation waits after failures (10 s, doubling, at most 10 min).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "client/informer.h"
#include "common/clock.h"
#include "common/json.h"
#include "controllers/job/indexed_job.h"

namespace shepherd::controllers::job {

struct PolicyMatch {
  std::optional<std::string> fail_job_message;  // a FailJob rule matched
  bool count_failed = true;                     // false when an Ignore rule matched
  std::optional<std::string> action;            // the matched rule's action
};
// `policy` is spec.podFailurePolicy (or null).
PolicyMatch matchPodFailurePolicy(const json::Value* policy, const json::Value& pod);

// The success policy's message ("Matched rules at index N") when `succeeded` meets it.
std::optional<std::string> matchSuccessPolicy(const json::Value* policy, int completions,
                                              const OrderedIntervals& succeeded);

// When the pod finished: its containers' last finishedAt, else its Ready=False
// transition, else deletionTimestamp minus the grace period, else its creation time.
clock::TimePoint finishedTime(const json::Value& pod);

// Consecutive failures since the last success and the last failure's time.
struct BackoffRecord {
  int failures_after_last_success = 0;
  std::optional<clock::TimePoint> last_failure;
};
// The record after newly succeeded and failed pods (upstream's newBackoffRecord).
BackoffRecord nextBackoffRecord(BackoffRecord old, std::vector<client::Object> succeeded,
                                std::vector<client::Object> failed);
// How long re-creation must still wait: default * 2^(failures-1), capped, minus the time
// since the last failure.
std::chrono::milliseconds remainingBackoff(const clock::Clock& clk, int failures,
                                           std::optional<clock::TimePoint> last_failure);
inline constexpr std::chrono::seconds kDefaultPodFailureBackoff{10};
inline constexpr std::chrono::minutes kMaxPodFailureBackoff{10};

}  // namespace shepherd::controllers::job
