// Container probes (liveness, readiness, startup): exec through the CRI, HTTP GET and TCP
// connects to the pod's IP, with upstream's timing and thresholds.
#pragma once

#include <chrono>
#include <string>

#include "common/json.h"
#include "kubelet-lite/runtime_service.h"

namespace shepherd::kubelet {

struct ProbeState {
  std::chrono::steady_clock::time_point next_run{};
  int successes = 0;
  int failures = 0;
  bool ok = false;       // last verdict after thresholds
  bool decided = false;  // a verdict exists
  std::string last_message;
};

enum class ProbeResult { Success, Failure };

// Runs one probe attempt of `container` (its spec: named ports resolve against it);
// `message` tells why it failed.
ProbeResult runProbe(const json::Value& probe, const json::Value& container, RuntimeService* runtime,
                     const std::string& container_id, const std::string& pod_ip, std::string& message);

// Runs `probe` if it is due (respecting initialDelaySeconds from `started`, periodSeconds)
// and updates the thresholds. Returns true when it ran.
bool tickProbe(const json::Value& probe, const json::Value& container, ProbeState& st,
               std::chrono::steady_clock::time_point started, RuntimeService* runtime,
               const std::string& container_id, const std::string& pod_ip);

}  // namespace shepherd::kubelet
