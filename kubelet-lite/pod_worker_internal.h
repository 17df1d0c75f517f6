// Helpers the pod worker's files share (pod_worker*.cc only).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/json.h"

namespace shepherd::kubelet::pod_worker_detail {

using Steady = std::chrono::steady_clock;

// CRI times (nanoseconds since the epoch) as RFC 3339; "" for none.
inline std::string nanosToRfc3339(int64_t ns) {
  if (ns <= 0) return "";
  return clock::rfc3339(std::chrono::system_clock::time_point(std::chrono::nanoseconds(ns)));
}

// spec.initContainers or spec.containers (an empty array when absent).
inline const json::Value& containersOf(const json::Value& pod, bool init) {
  static const json::Value empty(rapidjson::kArrayType);
  const json::Value* cs = json::findPath(pod, {"spec", init ? "initContainers" : "containers"});
  return cs && cs->IsArray() ? *cs : empty;
}

inline std::string restartPolicy(const json::Value& pod) {
  return std::string(json::getStringPath(pod, {"spec", "restartPolicy"}, "Always"));
}

}  // namespace shepherd::kubelet::pod_worker_detail
