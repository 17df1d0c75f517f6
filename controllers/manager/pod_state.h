// What the workload controllers read from a pod: whether it is active, ready, available,
// who controls it, and upstream's order for choosing which pods to delete first.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "client/informer.h"
#include "common/json.h"

namespace shepherd::controllers {

// Not finished (Succeeded/Failed) and not being deleted.
bool podActive(const json::Value& pod);
bool podReady(const json::Value& pod);
// Ready for at least `min_ready_seconds` at `now`.
bool podAvailable(const json::Value& pod, int64_t min_ready_seconds,
                  std::chrono::system_clock::time_point now);
// The ownerReference with controller=true, if any.
const json::Value* controllerRef(const json::Value& obj);

// Sorts pods so that the ones to delete first come first, as upstream's ActivePods with
// ranks: unassigned before assigned; Pending before Unknown before Running; not ready
// before ready; on nodes with more of the same controller's pods first; ready for a
// shorter time first; more restarts first; newer first.
void sortForDeletion(std::vector<client::Object>& pods);

}  // namespace shepherd::controllers
