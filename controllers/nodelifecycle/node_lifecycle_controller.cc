#include "controllers/nodelifecycle/node_lifecycle_controller.h"

#include <limits>

#include "common/clock.h"
#include "common/log.h"
#include "controllers/manager/object_meta.h"
#include "meta/scheduling.h"

namespace shepherd::controllers {

namespace {

const char* const kNodeIndex = "node";
constexpr const char* kNotReady = "node.kubernetes.io/not-ready";
constexpr const char* kUnreachable = "node.kubernetes.io/unreachable";

const json::Value* conditionOf(const json::Value& obj, std::string_view type) {
  const json::Value* conds = json::findPath(obj, {"status", "conditions"});
  if (!conds || !conds->IsArray()) return nullptr;
  for (auto& c : conds->GetArray())
    if (json::getString(c, "type") == type) return &c;
  return nullptr;
}

std::string readyStatus(const json::Value& node) {
  const json::Value* c = conditionOf(node, "Ready");
  return c ? std::string(json::getString(*c, "status")) : "";
}

bool ourTaint(const json::Value& t) {
  std::string_view key = json::getString(t, "key");
  std::string_view effect = json::getString(t, "effect");
  return (key == kNotReady || key == kUnreachable) && (effect == "NoSchedule" || effect == "NoExecute");
}

}  // namespace

NodeLifecycleController::NodeLifecycleController(client::Client& c, client::SharedInformers& informers,
                                                 client::EventRecorder& events, NodeLifecycleOptions opts)
    : Controller("nodelifecycle"),
      client_(c),
      nodes_(informers.get(client::allObjects("", "v1", "nodes"))),
      leases_(informers.get([] {
        auto o = client::allObjects("coordination.k8s.io", "v1", "leases");
        o.ns = "kube-node-lease";
        return o;
      }())),
      pods_(informers.get(client::allObjects("", "v1", "pods"))),
      events_(events),
      opts_(opts) {
  pods_.addIndex(kNodeIndex, [](const json::Value& p) {
    std::string node(json::getStringPath(p, {"spec", "nodeName"}));
    return node.empty() ? std::vector<std::string>{} : std::vector<std::string>{node};
  });
  client::EventHandlers nh;
  nh.on_add = [this](const client::Object& o) { queue_.add(nameOf(*o)); };
  nh.on_update = [this](const client::Object&, const client::Object& o) { queue_.add(nameOf(*o)); };
  nh.on_delete = [this](const client::Object& o) {
    MutexLock g(mu_);
    heard_.erase(nameOf(*o));
  };
  nodes_.addHandlers(std::move(nh));
}

NodeLifecycleController::~NodeLifecycleController() {
  stop();
}

void NodeLifecycleController::run(int workers) {
  Controller::run(workers);
  monitor_ = std::thread([this] {
    while (!stopping_.load()) {
      for (auto& n : nodes_.list()) queue_.add(nameOf(*n));
      auto until = std::chrono::steady_clock::now() + opts_.monitor_period;
      while (!stopping_.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

void NodeLifecycleController::stop() {
  stopping_ = true;
  if (monitor_.joinable()) monitor_.join();
  Controller::stop();
}

std::chrono::steady_clock::time_point NodeLifecycleController::lastHeard(const json::Value& node) {
  std::string name = nameOf(node);
  const json::Value* ready = conditionOf(node, "Ready");
  std::string heartbeat = ready ? std::string(json::getString(*ready, "lastHeartbeatTime")) : "";
  client::Object lease = leases_.get("kube-node-lease/" + name);
  std::string renew = lease ? std::string(json::getStringPath(*lease, {"spec", "renewTime"})) : "";
  auto now = std::chrono::steady_clock::now();
  MutexLock g(mu_);
  auto [it, fresh] = heard_.try_emplace(name, Heard{heartbeat, renew, now});
  if (!fresh && (it->second.heartbeat != heartbeat || it->second.lease_renew != renew))
    it->second = Heard{heartbeat, renew, now};
  return it->second.at;
}

Status NodeLifecycleController::markUnknown(const json::Value& node) {
  json::Document doc;
  doc.CopyFrom(node, doc.GetAllocator());
  auto& a = doc.GetAllocator();
  std::string now = clock::rfc3339(clock::now());
  json::Value& status = json::ensureObject(doc, "status", a);
  json::Value* conds = json::find(status, "conditions");
  if (!conds || !conds->IsArray()) {
    json::set(status, "conditions", json::Value(rapidjson::kArrayType), a);
    conds = json::find(status, "conditions");
  }
  bool sawReady = false;
  for (auto& c : conds->GetArray()) {
    std::string_view type = json::getString(c, "type");
    if (type != "Ready" && type != "MemoryPressure" && type != "DiskPressure" && type != "PIDPressure")
      continue;
    sawReady = sawReady || type == "Ready";
    if (json::getString(c, "status") == "Unknown") continue;
    json::setString(c, "status", "Unknown", a);
    json::setString(c, "reason", "NodeStatusUnknown", a);
    json::setString(c, "message", "Kubelet stopped posting node status.", a);
    json::setString(c, "lastTransitionTime", now, a);
  }
  if (!sawReady) {
    json::Value c(rapidjson::kObjectType);
    json::setString(c, "type", "Ready", a);
    json::setString(c, "status", "Unknown", a);
    json::setString(c, "lastHeartbeatTime", now, a);
    json::setString(c, "lastTransitionTime", now, a);
    json::setString(c, "reason", "NodeStatusNeverUpdated", a);
    json::setString(c, "message", "Kubelet never posted node status.", a);
    conds->PushBack(std::move(c), a);
  }
  auto r = client_.put("/api/v1/nodes/" + client::urlEncode(nameOf(node)) + "/status", json::serialize(doc));
  if (!r) return r.error();
  events_.event(node, "v1", "Node", "Normal", "NodeNotReady",
                "Node " + nameOf(node) + " status is now: NodeNotReady");
  LOG_INFO("node lifecycle: node " << nameOf(node) << " has not been heard from: Ready=Unknown");
  return okStatus();
}

Status NodeLifecycleController::setTaints(const json::Value& node, const std::string& ready) {
  std::string key = ready == "Unknown" ? kUnreachable : ready == "False" ? kNotReady : "";
  if (ready.empty()) return okStatus();  // nothing reported yet: leave it to the grace period
  const json::Value* taints = json::findPath(node, {"spec", "taints"});
  json::Document patch;
  patch.SetObject();
  auto& a = patch.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  bool changed = false;
  std::set<std::string> have;
  if (taints && taints->IsArray())
    for (auto& t : taints->GetArray()) {
      if (ourTaint(t)) {
        if (json::getString(t, "key") != key) {
          changed = true;  // a condition that no longer holds
          continue;
        }
        have.insert(std::string(json::getString(t, "effect")));
      }
      list.PushBack(json::Value(t, a), a);
    }
  if (!key.empty())
    for (const char* effect : {"NoSchedule", "NoExecute"}) {
      if (have.count(effect)) continue;
      json::Value t(rapidjson::kObjectType);
      json::setString(t, "key", key, a);
      json::setString(t, "effect", effect, a);
      if (std::string_view(effect) == "NoExecute")
        json::setString(t, "timeAdded", clock::rfc3339(clock::now()), a);
      list.PushBack(std::move(t), a);
      changed = true;
    }
  if (!changed) return okStatus();
  json::Value& md = json::ensureObject(patch, "metadata", a);
  json::setString(md, "resourceVersion", json::getStringPath(node, {"metadata", "resourceVersion"}), a);
  json::Value& spec = json::ensureObject(patch, "spec", a);
  if (list.Empty())
    json::set(spec, "taints", json::Value(rapidjson::kNullType), a);
  else
    json::set(spec, "taints", std::move(list), a);
  auto r = client_.patch("/api/v1/nodes/" + client::urlEncode(nameOf(node)), json::serialize(patch),
                         "application/merge-patch+json");
  if (!r && r.error().code != 404) return r.error();
  return okStatus();
}

Status NodeLifecycleController::markPodsNotReady(const std::string& node) {
  std::string now = clock::rfc3339(clock::now());
  for (auto& pod : pods_.byIndex(kNodeIndex, node)) {
    const json::Value* ready = conditionOf(*pod, "Ready");
    if (!ready || json::getString(*ready, "status") != "True") continue;
    json::Document patch;
    patch.SetObject();
    auto& a = patch.GetAllocator();
    json::Value conds(rapidjson::kArrayType);
    for (auto& c : json::findPath(*pod, {"status", "conditions"})->GetArray()) {
      json::Value copy(c, a);
      if (json::getString(c, "type") == "Ready") {
        json::setString(copy, "status", "False", a);
        json::setString(copy, "lastTransitionTime", now, a);
      }
      conds.PushBack(std::move(copy), a);
    }
    json::set(json::ensureObject(patch, "status", a), "conditions", std::move(conds), a);
    std::string ns(json::getStringPath(*pod, {"metadata", "namespace"}));
    auto r = client_.patch("/api/v1/namespaces/" + client::urlEncode(ns) + "/pods/" +
                               client::urlEncode(nameOf(*pod)) + "/status",
                           json::serialize(patch), "application/merge-patch+json");
    if (!r && r.error().code != 404) return r.error();
  }
  return okStatus();
}

std::chrono::milliseconds NodeLifecycleController::evictPods(const json::Value& node) {
  const json::Value* taints = json::findPath(node, {"spec", "taints"});
  std::vector<const json::Value*> noExecute;
  if (taints && taints->IsArray())
    for (auto& t : taints->GetArray())
      if (json::getString(t, "effect") == "NoExecute") noExecute.push_back(&t);
  if (noExecute.empty()) return std::chrono::milliseconds(0);
  // Tolerations count from when the taint was added.
  auto added = clock::now();
  for (auto* t : noExecute)
    if (auto ta = clock::parseRfc3339(json::getString(*t, "timeAdded")); ta && *ta < added) added = *ta;
  auto next = std::chrono::milliseconds::max();
  for (auto& pod : pods_.byIndex(kNodeIndex, nameOf(node))) {
    if (json::findPath(*pod, {"metadata", "deletionTimestamp"})) continue;
    std::string_view phase = json::getStringPath(*pod, {"status", "phase"});
    if (phase == "Succeeded" || phase == "Failed") continue;
    const json::Value* tols = json::findPath(*pod, {"spec", "tolerations"});
    bool evictNow = false;
    int64_t minSeconds = std::numeric_limits<int64_t>::max();
    for (auto* t : noExecute) {
      bool tolerated = false;
      if (tols && tols->IsArray())
        for (auto& tol : tols->GetArray()) {
          if (!meta::toleratesTaint(tol, *t)) continue;
          tolerated = true;
          if (auto s = json::getInt(tol, "tolerationSeconds"))
            minSeconds = std::min(minSeconds, std::max<int64_t>(0, *s));
        }
      if (!tolerated) evictNow = true;
    }
    if (!evictNow && minSeconds == std::numeric_limits<int64_t>::max()) continue;  // tolerated for ever
    if (!evictNow) {
      auto due = added + std::chrono::seconds(minSeconds);
      if (due > clock::now()) {
        next = std::min(next, std::chrono::duration_cast<std::chrono::milliseconds>(due - clock::now()));
        continue;
      }
    }
    std::string ns(json::getStringPath(*pod, {"metadata", "namespace"}));
    auto r = client_.request(
        "DELETE", "/api/v1/namespaces/" + client::urlEncode(ns) + "/pods/" + client::urlEncode(nameOf(*pod)),
        R"({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":")" +
            std::string(json::getStringPath(*pod, {"metadata", "uid"})) + "\"}}",
        "application/json");
    if (r && r->status < 300) {
      events_.event(*pod, "v1", "Pod", "Normal", "TaintManagerEviction",
                    "Marking for deletion Pod " + ns + "/" + nameOf(*pod));
      LOG_INFO("node lifecycle: evicted pod " << ns << "/" << nameOf(*pod) << " from node " << nameOf(node));
    }
  }
  return next == std::chrono::milliseconds::max() ? std::chrono::milliseconds(0)
                                                  : next + std::chrono::milliseconds(100);
}

Result<SyncResult> NodeLifecycleController::sync(const std::string& name) {
  client::Object node = nodes_.get(name);
  if (!node) return SyncResult{};
  std::string ready = readyStatus(*node);
  bool healthy = std::chrono::steady_clock::now() - lastHeard(*node) < opts_.grace_period;
  if (!healthy && ready != "Unknown") {
    if (auto st = markUnknown(*node); !st) return st.error();
    return SyncResult{};  // the update brings the node back here with Ready=Unknown
  }
  if (ready == "Unknown" || ready == "False")
    if (auto st = markPodsNotReady(name); !st) return st.error();
  if (auto st = setTaints(*node, ready); !st) return st.error();
  return SyncResult{evictPods(*node)};
}

}  // namespace shepherd::controllers
