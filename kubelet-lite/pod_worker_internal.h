// Helpers the pod worker's files share (pod_worker*.cc only).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

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

// A native sidecar: an init container with restartPolicy Always (upstream's restartable
// init container). It keeps running beside the main containers.
inline bool isSidecar(const json::Value& container) {
  return json::getString(container, "restartPolicy") == "Always";
}

// The exec command of a container's preStop hook (empty when it has none).
inline std::vector<std::string> preStopCommand(const json::Value& container) {
  std::vector<std::string> cmd;
  const json::Value* hook = json::findPath(container, {"lifecycle", "preStop", "exec", "command"});
  if (hook && hook->IsArray())
    for (auto& x : hook->GetArray()) cmd.emplace_back(json::view(x));
  return cmd;
}

inline std::string restartPolicy(const json::Value& pod) {
  return std::string(json::getStringPath(pod, {"spec", "restartPolicy"}, "Always"));
}

}  // namespace shepherd::kubelet::pod_worker_detail
