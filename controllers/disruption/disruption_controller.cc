#include "controllers/disruption/disruption_controller.h"

#include <algorithm>

#include "common/log.h"
#include "controllers/disruption/budget_status.h"
#include "controllers/manager/object_meta.h"
#include "meta/conditions.h"
#include "meta/selectors.h"

namespace shepherd::controllers::disruption {

namespace {

constexpr const char* kBudgetPrefix = "pdb/";
constexpr const char* kPodPrefix = "pod/";
constexpr const char* kBudgetApi = "policy/v1";
constexpr const char* kBudgetKind = "PodDisruptionBudget";

std::string budgetPath(const json::Value& b) {
  return "/apis/policy/v1/namespaces/" + client::urlEncode(namespaceOf(b)) + "/poddisruptionbudgets/" +
         client::urlEncode(nameOf(b));
}

std::string podPath(const json::Value& p) {
  return "/api/v1/namespaces/" + client::urlEncode(namespaceOf(p)) + "/pods/" + client::urlEncode(nameOf(p));
}

bool hasPrefix(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}

// LabelSelectorAsSelector: unset selects nothing, {} everything.
std::optional<meta::LabelSelector> selectorOf(const json::Value& budget) {
  const json::Value* sel = json::findPath(budget, {"spec", "selector"});
  if (!sel || !sel->IsObject()) return std::nullopt;
  auto s = meta::LabelSelector::fromJson(*sel);
  if (!s) return std::nullopt;
  return s.value();
}

bool terminal(const json::Value& pod) {
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace

DisruptionController::DisruptionController(client::Client& c, client::SharedInformers& informers,
                                           client::EventRecorder& events, const clock::Clock& clk)
    : Controller("disruption"),
      client_(c),
      budgets_(informers.get(client::allObjects("policy", "v1", "poddisruptionbudgets"))),
      pods_(informers.get(client::allObjects("", "v1", "pods"))),
      controllers_(c, informers.get(client::allObjects("", "v1", "replicationcontrollers")),
                   informers.get(client::allObjects("apps", "v1", "replicasets")),
                   informers.get(client::allObjects("apps", "v1", "deployments")),
                   informers.get(client::allObjects("apps", "v1", "statefulsets"))),
      events_(events),
      clock_(clk) {
  indexByNamespace(budgets_);
  indexByNamespace(pods_);
  client::EventHandlers bh;
  auto enqueue = [this](const client::Object& o) { queue_.add(kBudgetPrefix + client::objectKey(*o)); };
  bh.on_add = enqueue;
  bh.on_update = [enqueue](const client::Object&, const client::Object& o) { enqueue(o); };
  bh.on_delete = enqueue;
  budgets_.addHandlers(std::move(bh));
  client::EventHandlers ph;
  ph.on_add = [this](const client::Object& o) { onPod(o, false); };
  ph.on_update = [this](const client::Object&, const client::Object& o) { onPod(o, false); };
  ph.on_delete = [this](const client::Object& o) { onPod(o, true); };
  pods_.addHandlers(std::move(ph));
}

void DisruptionController::onPod(const client::Object& pod, bool deleted) {
  if (client::Object budget = budgetFor(*pod)) queue_.add(kBudgetPrefix + client::objectKey(*budget));
  if (deleted) return;
  if (auto in = staleConditionIn(*pod)) queue_.addAfter(kPodPrefix + client::objectKey(*pod), *in);
}

client::Object DisruptionController::budgetFor(const json::Value& pod) {
  const json::Value* labels = json::findPath(pod, {"metadata", "labels"});
  if (!labels || !labels->IsObject() || labels->MemberCount() == 0) return nullptr;
  std::vector<client::Object> matching;
  for (auto& b : budgets_.byIndex(kNamespaceIndex, namespaceOf(pod))) {
    auto sel = selectorOf(*b);
    if (sel && sel->matchesLabels(labels)) matching.push_back(b);  // {} matches every pod here
  }
  if (matching.empty()) return nullptr;
  std::sort(matching.begin(), matching.end(),
            [](const client::Object& x, const client::Object& y) { return nameOf(*x) < nameOf(*y); });
  if (matching.size() > 1) {
    std::string msg = "Pod \"" + namespaceOf(pod) + "\"/\"" + nameOf(pod) +
                      "\" matches multiple PodDisruptionBudgets.  Chose \"" + nameOf(*matching.front()) +
                      "\" arbitrarily.";
    events_.event(pod, "v1", "Pod", "Warning", "MultiplePodDisruptionBudgets", msg);
  }
  return matching.front();
}

std::vector<client::Object> DisruptionController::podsFor(const json::Value& budget) const {
  std::vector<client::Object> out;
  auto sel = selectorOf(budget);
  if (!sel) return out;
  for (auto& p : pods_.byIndex(kNamespaceIndex, namespaceOf(budget)))
    if (sel->matchesLabels(json::findPath(*p, {"metadata", "labels"}))) out.push_back(p);
  std::sort(out.begin(), out.end(),
            [](const client::Object& x, const client::Object& y) { return nameOf(*x) < nameOf(*y); });
  return out;
}

std::optional<std::chrono::milliseconds> DisruptionController::staleConditionIn(
    const json::Value& pod) const {
  if (json::findPath(pod, {"metadata", "deletionTimestamp"})) return std::nullopt;
  const json::Value* cond =
      meta::findCondition(json::findPath(pod, {"status", "conditions"}), "DisruptionTarget");
  // The kubelet's own disruption conditions never go stale, nor do those of finished pods.
  if (!cond || json::getString(*cond, "status") != "True" ||
      json::getString(*cond, "reason") == "TerminationByKubelet" || terminal(pod))
    return std::nullopt;
  auto since = clock::parseRfc3339(json::getString(*cond, "lastTransitionTime"));
  auto elapsed = since ? clock_.now() - *since : std::chrono::system_clock::duration::zero();
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(kStaleDisruptionTimeout - elapsed);
  return std::max(wait, std::chrono::milliseconds(0));
}

Result<SyncResult> DisruptionController::sync(const std::string& key) {
  if (hasPrefix(key, kBudgetPrefix)) return syncBudget(key.substr(4));
  if (hasPrefix(key, kPodPrefix)) return syncStalePod(key.substr(4));
  return SyncResult{};
}

Result<SyncResult> DisruptionController::syncBudget(const std::string& key) {
  client::Object budget = budgets_.get(key);
  if (!budget) return SyncResult{};
  std::optional<std::chrono::milliseconds> recheck;
  Status st = trySync(*budget, recheck);
  if (st) return SyncResult{recheck.value_or(std::chrono::milliseconds(0))};
  // A conflict is retried as it is; anything else leaves the budget allowing nothing.
  if (st.error().code == 409) return st.error();
  LOG_WARN("disruption: failed to sync budget " << key << ": " << st.error().message);
  std::string now = clock::rfc3339(clock_.now());
  json::Document failed = failedStatus(*budget, st.error().message, now);
  if (auto w = writeStatus(failed); !w) return w.error();
  return SyncResult{};
}

Status DisruptionController::trySync(const json::Value& budget,
                                     std::optional<std::chrono::milliseconds>& recheck) {
  std::vector<client::Object> pods = podsFor(budget);
  if (pods.empty())
    events_.event(budget, kBudgetApi, kBudgetKind, "Normal", "NoPods", "No matching pods found");

  // getExpectedPodCount.
  BudgetCounts counts;
  const json::Value* spec = json::find(budget, "spec");
  const json::Value* maxUnavailable = spec ? json::find(*spec, "maxUnavailable") : nullptr;
  const json::Value* minAvailable = spec ? json::find(*spec, "minAvailable") : nullptr;
  if (maxUnavailable && maxUnavailable->IsNull()) maxUnavailable = nullptr;
  if (minAvailable && minAvailable->IsNull()) minAvailable = nullptr;
  std::vector<std::string> unmanaged;
  auto scaled = [&](const json::Value& v, int64_t total) -> Result<int64_t> {
    if (v.IsInt64()) return v.GetInt64();
    std::string_view s = json::view(v);
    if (s.empty() || s.back() != '%')
      return ApiError::internal("invalid value for IntOrString: invalid type: string is not a percentage");
    char* end = nullptr;
    std::string digits(s.substr(0, s.size() - 1));
    long long pct = std::strtoll(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0')
      return ApiError::internal("invalid value \"" + std::string(s) + "\": strconv.Atoi: parsing \"" +
                                digits + "\": invalid syntax");
    return (pct * total + 99) / 100;  // rounded up
  };
  Status expectedOk = okStatus();
  if (maxUnavailable || (minAvailable && minAvailable->IsString())) {
    auto e = controllers_.expectedScale(pods);
    if (!e) {
      expectedOk = e.error();
    } else {
      counts.expected = e.value().expected;
      unmanaged = e.value().unmanaged;
      auto n = scaled(maxUnavailable ? *maxUnavailable : *minAvailable, counts.expected);
      if (!n)
        expectedOk = n.error();
      else if (maxUnavailable)
        counts.desired_healthy = std::max<int64_t>(counts.expected - n.value(), 0);
      else
        counts.desired_healthy = n.value();
    }
  } else if (minAvailable) {
    counts.desired_healthy = minAvailable->IsInt64() ? minAvailable->GetInt64() : 0;
    counts.expected = static_cast<int64_t>(pods.size());
  }
  if (!expectedOk) {
    events_.event(budget, kBudgetApi, kBudgetKind, "Warning", "CalculateExpectedPodCountFailed",
                  "Failed to calculate the number of expected pods: " + expectedOk.error().message);
    return expectedOk.error();
  }
  if (!unmanaged.empty())
    events_.event(
        budget, kBudgetApi, kBudgetKind, "Warning", "UnmanagedPods",
        "Pods selected by this PodDisruptionBudget (selector: " +
            goLabelSelector(spec ? json::find(*spec, "selector") : nullptr) +
            ") were found to be unmanaged. As a result, the status of the PDB cannot be calculated "
            "correctly, which may result in undefined behavior. To account for these pods please set "
            "\".spec.minAvailable\" field of the PDB to an integer value.");

  auto now = clock_.now();
  DisruptedPods disrupted = disruptedPods(budget, pods, now);
  for (const auto& name : disrupted.expired)
    for (const auto& p : pods)
      if (nameOf(*p) == name)
        events_.event(*p, "v1", "Pod", "Warning", "NotDeleted",
                      "Pod was expected by PDB " + namespaceOf(budget) + "/" + namespaceOf(budget) +
                          " to be deleted but it wasn't");
  counts.current_healthy = healthyPods(pods, disrupted, now);
  if (!statusUpToDate(budget, counts, disrupted)) {
    json::Document next = withStatus(budget, counts, disrupted, clock::rfc3339(now));
    if (auto st = writeStatus(next); !st) return st;
  }
  if (disrupted.recheck)
    recheck = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(*disrupted.recheck - now),
                       std::chrono::milliseconds(1));
  return okStatus();
}

Status DisruptionController::writeStatus(const json::Value& budget) {
  auto r = client_.put(budgetPath(budget) + "/status", json::serialize(budget));
  if (!r) return r.error();
  return okStatus();
}

Result<SyncResult> DisruptionController::syncStalePod(const std::string& key) {
  client::Object pod = pods_.get(key);
  if (!pod) return SyncResult{};
  auto in = staleConditionIn(*pod);
  if (!in) return SyncResult{};
  if (in->count() > 0) return SyncResult{*in};
  json::Document next;
  next.CopyFrom(*pod, next.GetAllocator());
  auto& a = next.GetAllocator();
  if (!meta::updatePodCondition(json::ensureObject(next, "status", a),
                                {"DisruptionTarget", "False", "", "", 0}, clock::rfc3339(clock_.now()), a))
    return SyncResult{};
  auto r = client_.put(podPath(*pod) + "/status", json::serialize(next));
  if (!r) return r.error();
  LOG_INFO("disruption: reset the stale DisruptionTarget condition of pod " << key << " to False");
  return SyncResult{};
}

}  // namespace shepherd::controllers::disruption
