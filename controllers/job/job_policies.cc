#include "controllers/job/job_policies.h"

#include <algorithm>

namespace shepherd::controllers::job {

namespace {

bool exitCodeMatches(int64_t code, const json::Value& req) {
  std::string_view op = json::getString(req, "operator");
  bool in = false;
  if (const json::Value* vs = json::find(req, "values"); vs && vs->IsArray())
    for (auto& v : vs->GetArray())
      if (v.IsInt64() && v.GetInt64() == code) in = true;
  if (op == "In") return in;
  if (op == "NotIn") return !in;
  return false;
}

// The first terminated container (containers, then init containers) the requirement matches.
const json::Value* matchOnExitCodes(const json::Value& pod, const json::Value& req) {
  const json::Value* name = json::find(req, "containerName");
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const json::Value* statuses = json::findPath(pod, {"status", list});
    if (!statuses || !statuses->IsArray()) continue;
    for (auto& cs : statuses->GetArray()) {
      const json::Value* term = json::findPath(cs, {"state", "terminated"});
      if (!term || !term->IsObject()) continue;
      if (name && name->IsString() && json::view(*name) != json::getString(cs, "name")) continue;
      int64_t code = json::getInt(*term, "exitCode").value_or(0);
      if (code != 0 && exitCodeMatches(code, req)) return &cs;
    }
  }
  return nullptr;
}

const json::Value* matchOnPodConditions(const json::Value& pod, const json::Value& patterns) {
  const json::Value* conds = json::findPath(pod, {"status", "conditions"});
  if (!conds || !conds->IsArray()) return nullptr;
  for (auto& c : conds->GetArray())
    for (auto& p : patterns.GetArray())
      if (json::getString(c, "type") == json::getString(p, "type") &&
          json::getString(c, "status") == json::getString(p, "status"))
        return &c;
  return nullptr;
}

std::optional<clock::TimePoint> timeAt(const json::Value& v, std::initializer_list<std::string_view> path) {
  std::string_view s = json::getStringPath(v, path);
  return s.empty() ? std::nullopt : clock::parseRfc3339(s);
}

void sortByFinishedTime(std::vector<client::Object>& pods) {
  std::stable_sort(pods.begin(), pods.end(), [](const client::Object& a, const client::Object& b) {
    return finishedTime(*a) < finishedTime(*b);
  });
}

}  // namespace

PolicyMatch matchPodFailurePolicy(const json::Value* policy, const json::Value& pod) {
  PolicyMatch m;
  const json::Value* rules = policy && policy->IsObject() ? json::find(*policy, "rules") : nullptr;
  if (!rules || !rules->IsArray()) return m;
  std::string ns(json::getStringPath(pod, {"metadata", "namespace"}));
  std::string name(json::getStringPath(pod, {"metadata", "name"}));
  for (rapidjson::SizeType i = 0; i < rules->Size(); ++i) {
    const json::Value& rule = (*rules)[i];
    std::string action(json::getString(rule, "action"));
    const json::Value* exit = json::find(rule, "onExitCodes");
    const json::Value* conds = json::find(rule, "onPodConditions");
    std::string failMsg;
    if (exit && exit->IsObject()) {
      const json::Value* cs = matchOnExitCodes(pod, *exit);
      if (!cs) continue;
      failMsg = "Container " + std::string(json::getString(*cs, "name")) + " for pod " + ns + "/" + name +
                " failed with exit code " +
                std::to_string(
                    json::getInt(*json::findPath(*cs, {"state", "terminated"}), "exitCode").value_or(0)) +
                " matching " + action + " rule at index " + std::to_string(i);
    } else if (conds && conds->IsArray()) {
      const json::Value* c = matchOnPodConditions(pod, *conds);
      if (!c) continue;
      failMsg = "Pod " + ns + "/" + name + " has condition " + std::string(json::getString(*c, "type")) +
                " matching " + action + " rule at index " + std::to_string(i);
    } else {
      continue;
    }
    // A matched rule with an unknown action falls through to the next, as upstream's switch.
    if (action == "Ignore") return PolicyMatch{std::nullopt, false, action};
    if (action == "FailIndex" || action == "Count") return PolicyMatch{std::nullopt, true, action};
    if (action == "FailJob") return PolicyMatch{failMsg, true, action};
  }
  return m;
}

std::optional<std::string> matchSuccessPolicy(const json::Value* policy, int completions,
                                              const OrderedIntervals& succeeded) {
  const json::Value* rules = policy && policy->IsObject() ? json::find(*policy, "rules") : nullptr;
  if (!rules || !rules->IsArray() || succeeded.empty()) return std::nullopt;
  for (rapidjson::SizeType i = 0; i < rules->Size(); ++i) {
    const json::Value& rule = (*rules)[i];
    auto count = json::getInt(rule, "succeededCount");
    const json::Value* idx = json::find(rule, "succeededIndexes");
    std::string msg = "Matched rules at index " + std::to_string(i);
    if (idx && idx->IsString()) {
      OrderedIntervals required = OrderedIntervals::parse(json::view(*idx), completions);
      if (required.empty()) continue;
      int contains = 0;
      for (auto& r : required.intervals())
        for (auto& s : succeeded.intervals()) {
          int overlap = std::min(r.last, s.last) - std::max(r.first, s.first) + 1;
          if (overlap > 0) contains += overlap;
        }
      if (contains == required.total() || (count && contains >= *count)) return msg;
    } else if (count && succeeded.total() >= *count) {
      return msg;
    }
  }
  return std::nullopt;
}

clock::TimePoint finishedTime(const json::Value& pod) {
  std::optional<clock::TimePoint> latest;
  bool allTerminated = true;
  const json::Value* statuses = json::findPath(pod, {"status", "containerStatuses"});
  if (statuses && statuses->IsArray() && !statuses->Empty()) {
    for (auto& cs : statuses->GetArray()) {
      auto t = timeAt(cs, {"state", "terminated", "finishedAt"});
      if (!t) {
        allTerminated = false;
        break;
      }
      if (!latest || *latest < *t) latest = t;
    }
    if (allTerminated && latest) return *latest;
  }
  if (const json::Value* conds = json::findPath(pod, {"status", "conditions"}); conds && conds->IsArray())
    for (auto& c : conds->GetArray())
      if (json::getString(c, "type") == "Ready") {
        if (json::getString(c, "status") == "False")
          if (auto t = timeAt(c, {"lastTransitionTime"})) return *t;
        break;
      }
  if (auto del = timeAt(pod, {"metadata", "deletionTimestamp"}))
    return *del - std::chrono::seconds(
                      json::getInt(*json::find(pod, "metadata"), "deletionGracePeriodSeconds").value_or(0));
  return timeAt(pod, {"metadata", "creationTimestamp"}).value_or(clock::TimePoint{});
}

BackoffRecord nextBackoffRecord(BackoffRecord old, std::vector<client::Object> succeeded,
                                std::vector<client::Object> failed) {
  sortByFinishedTime(succeeded);
  sortByFinishedTime(failed);
  if (succeeded.empty()) {
    if (failed.empty()) return old;
    old.failures_after_last_success += static_cast<int>(failed.size());
    old.last_failure = finishedTime(*failed.back());
    return old;
  }
  BackoffRecord r;
  clock::TimePoint lastSuccess = finishedTime(*succeeded.back());
  for (auto it = failed.rbegin(); it != failed.rend(); ++it) {
    clock::TimePoint t = finishedTime(**it);
    if (!(t > lastSuccess)) break;
    if (!r.last_failure) r.last_failure = t;
    ++r.failures_after_last_success;
  }
  return r;
}

std::chrono::milliseconds remainingBackoff(const clock::Clock& clk, int failures,
                                           std::optional<clock::TimePoint> last_failure) {
  if (failures == 0 || !last_failure) return std::chrono::milliseconds(0);
  std::chrono::milliseconds backoff = kDefaultPodFailureBackoff;
  for (int i = 1; i < failures; ++i) {
    backoff *= 2;
    if (backoff >= kMaxPodFailureBackoff) {
      backoff = kMaxPodFailureBackoff;
      break;
    }
  }
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(clk.now() - *last_failure);
  if (backoff < elapsed) return std::chrono::milliseconds(0);
  return backoff - elapsed;
}

}  // namespace shepherd::controllers::job
