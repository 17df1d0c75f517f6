#include "apis/kinds/pod_eviction.h"

#include "meta/conditions.h"
#include "meta/selectors.h"

namespace shepherd::apis::kinds {

namespace {

// MaxDisruptedPodSize: evictions granted but not yet seen by the disruption controller.
constexpr size_t kMaxDisruptedPods = 2000;

bool podReady(const json::Value& pod) {
  const json::Value* c = meta::findCondition(json::findPath(pod, {"status", "conditions"}), "Ready");
  return c && json::getString(*c, "status") == "True";
}

int64_t statusInt(const json::Value& budget, const char* field) {
  const json::Value* st = json::find(budget, "status");
  return st && st->IsObject() ? json::getInt(*st, field).value_or(0) : 0;
}

ApiError forbiddenBudget(const std::string& name, const std::string& why) {
  return ApiError::forbidden("policy", "poddisruptionbudget", name, why);
}

}  // namespace

Status validateEviction(const json::Value& eviction, const std::string& url_name, const std::string& url_ns) {
  if (!eviction.IsObject()) return ApiError::badRequest("the request body must be an Eviction");
  std::string_view kind = json::getString(eviction, "kind");
  std::string_view api = json::getString(eviction, "apiVersion");
  if ((!kind.empty() && kind != "Eviction") ||
      (!api.empty() && api != "policy/v1" && api != "policy/v1beta1"))
    return ApiError::badRequest("not a Eviction object: " + std::string(api) + ", Kind=" + std::string(kind));
  if (json::getStringPath(eviction, {"metadata", "name"}) != url_name)
    return ApiError::badRequest("name in URL does not match name in Eviction object");
  std::string_view ns = json::getStringPath(eviction, {"metadata", "namespace"});
  if (!ns.empty() && ns != url_ns)
    return ApiError::badRequest(
        "the namespace of the provided object does not match the namespace sent on the request");
  return okStatus();
}

bool evictionIgnoresBudgets(const json::Value& pod) {
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed" || phase == "Pending" ||
         json::findPath(pod, {"metadata", "deletionTimestamp"}) != nullptr;
}

bool evictionEnforcesResourceVersion(const json::Value& pod) {
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  return phase != "Succeeded" && phase != "Failed" && !json::findPath(pod, {"metadata", "deletionTimestamp"});
}

std::vector<const json::Value*> budgetsGuarding(const json::Value& pod,
                                                const std::vector<const json::Value*>& budgets) {
  std::vector<const json::Value*> out;
  const json::Value* labels = json::findPath(pod, {"metadata", "labels"});
  for (const json::Value* b : budgets) {
    const json::Value* sel = json::findPath(*b, {"spec", "selector"});
    if (!sel || !sel->IsObject()) continue;
    auto s = meta::LabelSelector::fromJson(*sel);
    // An invalid selector matches nothing; an empty one nothing either (not everything).
    if (!s || s.value().empty() || !s.value().matchesLabels(labels)) continue;
    out.push_back(b);
  }
  return out;
}

bool unreadyPodMayGo(const json::Value& pod, const json::Value& budget) {
  if (podReady(pod)) return false;
  if (json::getStringPath(budget, {"spec", "unhealthyPodEvictionPolicy"}) == "AlwaysAllow") return true;
  int64_t desired = statusInt(budget, "desiredHealthy");
  return statusInt(budget, "currentHealthy") >= desired && desired > 0;
}

ApiError budgetBusy(const std::string& budget_name) {
  ApiError e = ApiError::make(429, "TooManyRequests",
                              "Cannot evict pod as it would violate the pod's disruption budget.");
  e.retry_after_seconds = 10;
  e.causes.push_back({"DisruptionBudget",
                      "The disruption budget " + budget_name + " is still being processed by the server.",
                      ""});
  return e;
}

Status takeDisruption(json::Document& budget, const std::string& pod_name, const std::string& now,
                      bool dry_run) {
  std::string name(json::getStringPath(budget, {"metadata", "name"}));
  const json::Value* meta = json::find(budget, "metadata");
  int64_t generation = meta ? json::getInt(*meta, "generation").value_or(0) : 0;
  if (statusInt(budget, "observedGeneration") < generation) return budgetBusy(name);
  int64_t allowed = statusInt(budget, "disruptionsAllowed");
  if (allowed < 0) return forbiddenBudget(name, "pdb disruptions allowed is negative");
  const json::Value* disrupted = json::findPath(budget, {"status", "disruptedPods"});
  if (disrupted && disrupted->IsObject() && disrupted->MemberCount() > kMaxDisruptedPods)
    return forbiddenBudget(name,
                           "DisruptedPods map too big - too many evictions not confirmed by PDB controller");
  if (allowed == 0) {
    ApiError e = ApiError::make(429, "TooManyRequests",
                                "Cannot evict pod as it would violate the pod's disruption budget.");
    e.causes.push_back({"DisruptionBudget",
                        "The disruption budget " + name + " needs " +
                            std::to_string(statusInt(budget, "desiredHealthy")) + " healthy pods and has " +
                            std::to_string(statusInt(budget, "currentHealthy")) + " currently",
                        ""});
    return e;
  }
  auto& a = budget.GetAllocator();
  json::Value& status = json::ensureObject(budget, "status", a);
  json::set(status, "disruptionsAllowed", json::Value(allowed - 1), a);
  if (allowed - 1 == 0)  // UpdateDisruptionAllowedCondition
    meta::setStatusCondition(
        status,
        {"DisruptionAllowed", "False", "InsufficientPods", "", statusInt(budget, "observedGeneration")}, now,
        a);
  if (dry_run) return okStatus();
  json::setString(json::ensureObject(status, "disruptedPods", a), pod_name, now, a);
  return okStatus();
}

Status markDisruptionTarget(json::Document& pod, const std::string& uid, const std::string& resource_version,
                            const std::string& now) {
  std::string name(json::getStringPath(pod, {"metadata", "name"}));
  std::string_view have_uid = json::getStringPath(pod, {"metadata", "uid"});
  std::string_view have_rv = json::getStringPath(pod, {"metadata", "resourceVersion"});
  if (!uid.empty() && uid != have_uid)
    return ApiError::conflict("", "Pod", name,
                              "the UID in the precondition (" + uid + ") does not match the UID in record (" +
                                  std::string(have_uid) +
                                  "). The object might have been deleted and then recreated");
  if (!resource_version.empty() && resource_version != have_rv)
    return ApiError::conflict("", "Pod", name,
                              "the ResourceVersion in the precondition (" + resource_version +
                                  ") does not match the ResourceVersion in record (" + std::string(have_rv) +
                                  "). The object might have been modified");
  auto& a = pod.GetAllocator();
  meta::updatePodCondition(json::ensureObject(pod, "status", a),
                           {"DisruptionTarget", "True", "EvictionByEvictionAPI", "Eviction API: evicting", 0},
                           now, a);
  return okStatus();
}

}  // namespace shepherd::apis::kinds
