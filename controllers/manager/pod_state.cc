#include "controllers/manager/pod_state.h"

#include <algorithm>
#include <map>

#include "common/clock.h"

namespace shepherd::controllers {

namespace {

const json::Value* readyCondition(const json::Value& pod) {
  const json::Value* conds = json::findPath(pod, {"status", "conditions"});
  if (!conds || !conds->IsArray()) return nullptr;
  for (auto& c : conds->GetArray())
    if (json::getString(c, "type") == "Ready") return &c;
  return nullptr;
}

int phaseRank(std::string_view phase) {
  if (phase == "Pending") return 0;
  if (phase == "Unknown") return 1;
  if (phase == "Running") return 2;
  return 3;
}

int64_t restarts(const json::Value& pod) {
  int64_t n = 0;
  if (const json::Value* cs = json::findPath(pod, {"status", "containerStatuses"}); cs && cs->IsArray())
    for (auto& c : cs->GetArray()) n = std::max(n, json::getInt(c, "restartCount").value_or(0));
  return n;
}

}  // namespace

bool podActive(const json::Value& pod) {
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  return phase != "Succeeded" && phase != "Failed" && !json::findPath(pod, {"metadata", "deletionTimestamp"});
}

bool podReady(const json::Value& pod) {
  const json::Value* c = readyCondition(pod);
  return c && json::getString(*c, "status") == "True";
}

bool podAvailable(const json::Value& pod, int64_t min_ready_seconds,
                  std::chrono::system_clock::time_point now) {
  if (!podReady(pod)) return false;
  if (min_ready_seconds <= 0) return true;
  auto since = clock::parseRfc3339(json::getString(*readyCondition(pod), "lastTransitionTime"));
  return since && *since + std::chrono::seconds(min_ready_seconds) < now;
}

const json::Value* controllerRef(const json::Value& obj) {
  const json::Value* refs = json::findPath(obj, {"metadata", "ownerReferences"});
  if (!refs || !refs->IsArray()) return nullptr;
  for (auto& r : refs->GetArray())
    if (json::getBool(r, "controller")) return &r;
  return nullptr;
}

void sortForDeletion(std::vector<client::Object>& pods) {
  std::map<std::string, int> perNode;
  for (auto& p : pods) {
    std::string_view node = json::getStringPath(*p, {"spec", "nodeName"});
    if (!node.empty()) ++perNode[std::string(node)];
  }
  struct Facts {
    bool assigned, ready;
    int phase, rank;
    int64_t restarts;
    std::string ready_since, created;
  };
  auto facts = [&](const json::Value& pod) {
    std::string node(json::getStringPath(pod, {"spec", "nodeName"}));
    bool ready = podReady(pod);
    return Facts{!node.empty(),
                 ready,
                 phaseRank(json::getStringPath(pod, {"status", "phase"})),
                 node.empty() ? 0 : perNode[node],
                 restarts(pod),
                 ready ? std::string(json::getString(*readyCondition(pod), "lastTransitionTime")) : "",
                 std::string(json::getStringPath(pod, {"metadata", "creationTimestamp"}))};
  };
  std::stable_sort(pods.begin(), pods.end(), [&](const client::Object& pa, const client::Object& pb) {
    Facts a = facts(*pa), b = facts(*pb);
    if (a.assigned != b.assigned) return !a.assigned;
    if (a.phase != b.phase) return a.phase < b.phase;
    if (a.ready != b.ready) return !a.ready;
    if (a.rank != b.rank) return a.rank > b.rank;
    if (a.ready && a.ready_since != b.ready_since)
      return a.ready_since > b.ready_since;  // RFC 3339 sorts as time
    if (a.restarts != b.restarts) return a.restarts > b.restarts;
    return a.created > b.created;
  });
}

}  // namespace shepherd::controllers
