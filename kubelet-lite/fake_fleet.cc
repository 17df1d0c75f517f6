#include "kubelet-lite/fake_fleet.h"

#include <algorithm>
#include <map>

#include "common/clock.h"
#include "common/log.h"

namespace shepherd::kubelet {

namespace {

using Steady = std::chrono::steady_clock;

bool conditionTrue(const json::Value& pod, std::string_view type) {
  const json::Value* conds = json::findPath(pod, {"status", "conditions"});
  if (!conds || !conds->IsArray()) return false;
  for (auto& c : conds->GetArray())
    if (json::getString(c, "type") == type) return json::getString(c, "status") == "True";
  return false;
}

// A pod as its node's fake runtime runs it.
struct FakePod {
  std::string ip;
  std::map<std::string, std::string> ids;  // container name -> runtime id
};

// Stops and removes the pod's sandboxes (and so its containers) in the node's runtime.
void removePod(FakeRuntime& runtime, const std::string& uid) {
  runtime::v1::PodSandboxFilter f;
  (*f.mutable_label_selector())["io.kubernetes.pod.uid"] = uid;
  if (auto sandboxes = runtime.listPodSandbox(f))
    for (const auto& sb : *sandboxes) {
      (void)runtime.stopPodSandbox(sb.id());
      (void)runtime.removePodSandbox(sb.id());
    }
}

// Runs the pod in the node's runtime from scratch: a sandbox (its IP), the init containers
// run to completion, then the containers, running.
Result<FakePod> runPod(FakeRuntime& runtime, const json::Value& pod) {
  std::string uid(json::getStringPath(pod, {"metadata", "uid"}));
  removePod(runtime, uid);  // a retry starts over
  runtime::v1::PodSandboxConfig sc;
  sc.mutable_metadata()->set_name(std::string(json::getStringPath(pod, {"metadata", "name"})));
  sc.mutable_metadata()->set_namespace_(std::string(json::getStringPath(pod, {"metadata", "namespace"})));
  sc.mutable_metadata()->set_uid(uid);
  (*sc.mutable_labels())["io.kubernetes.pod.uid"] = uid;
  auto sandbox = runtime.runPodSandbox(sc);
  if (!sandbox) return sandbox.error();
  FakePod out;
  if (auto st = runtime.podSandboxStatus(*sandbox)) out.ip = st->status().network().ip();
  for (bool init : {true, false}) {
    const json::Value* specs = json::findPath(pod, {"spec", init ? "initContainers" : "containers"});
    if (!specs || !specs->IsArray()) continue;
    for (auto& spec : specs->GetArray()) {
      runtime::v1::ContainerConfig cc;
      cc.mutable_metadata()->set_name(std::string(json::getString(spec, "name")));
      cc.mutable_image()->set_image(std::string(json::getString(spec, "image")));
      auto id = runtime.createContainer(*sandbox, cc, sc);
      if (!id) return id.error();
      if (auto st = runtime.startContainer(*id); !st) return st.error();
      if (init && json::getString(spec, "restartPolicy") != "Always")  // sidecars keep running
        (void)runtime.exitContainer(*id, 0);
      out.ids[cc.metadata().name()] = *id;
    }
  }
  return out;
}

// The status a kubelet reports once every container runs and is ready: phase Running,
// init containers Completed (sidecars running), PodScheduled as the scheduler wrote it, Ready subject to
// the pod's readiness gates.
std::string runningStatus(const json::Value& pod, const std::string& host_ip, const FakePod& run) {
  json::Document st;
  st.SetObject();
  auto& a = st.GetAllocator();
  std::string now = clock::rfc3339(clock::now());
  st.AddMember("phase", "Running", a);
  json::Value conds(rapidjson::kArrayType);
  if (const json::Value* existing = json::findPath(pod, {"status", "conditions"});
      existing && existing->IsArray())
    for (auto& c : existing->GetArray())
      if (json::getString(c, "type") == "PodScheduled") conds.PushBack(json::Value(c, a), a);
  bool gatesOpen = true;
  if (const json::Value* gates = json::findPath(pod, {"spec", "readinessGates"}); gates && gates->IsArray())
    for (auto& g : gates->GetArray())
      gatesOpen = gatesOpen && conditionTrue(pod, json::getString(g, "conditionType"));
  auto cond = [&](const char* type, bool value) {
    json::Value c(rapidjson::kObjectType);
    c.AddMember("type", rapidjson::StringRef(type), a);
    c.AddMember("status", rapidjson::StringRef(value ? "True" : "False"), a);
    c.AddMember("lastProbeTime", json::Value(), a);
    c.AddMember("lastTransitionTime", json::str(now, a), a);
    if (!value) c.AddMember("reason", "ReadinessGatesNotReady", a);
    conds.PushBack(c, a);
  };
  cond("Initialized", true);
  cond("Ready", gatesOpen);
  cond("ContainersReady", true);
  st.AddMember("conditions", conds, a);
  auto ipList = [&](const std::string& ip) {
    json::Value list(rapidjson::kArrayType);
    json::Value entry(rapidjson::kObjectType);
    entry.AddMember("ip", json::str(ip, a), a);
    list.PushBack(entry, a);
    return list;
  };
  st.AddMember("hostIP", json::str(host_ip, a), a);
  st.AddMember("hostIPs", ipList(host_ip), a);
  st.AddMember("podIP", json::str(run.ip, a), a);
  st.AddMember("podIPs", ipList(run.ip), a);
  st.AddMember("startTime", json::str(now, a), a);
  if (const json::Value* q = json::findPath(pod, {"status", "qosClass"}))
    st.AddMember("qosClass", json::Value(*q, a), a);
  auto statuses = [&](const char* list, bool init) {
    json::Value out(rapidjson::kArrayType);
    const json::Value* specs = json::findPath(pod, {"spec", list});
    if (!specs || !specs->IsArray()) return out;
    for (auto& spec : specs->GetArray()) {
      std::string name(json::getString(spec, "name"));
      json::Value cs(rapidjson::kObjectType);
      cs.AddMember("name", json::str(name, a), a);
      json::Value state(rapidjson::kObjectType);
      json::Value detail(rapidjson::kObjectType);
      // Regular init containers have completed; sidecars run beside the containers.
      const bool completed = init && json::getString(spec, "restartPolicy") != "Always";
      if (completed) {
        detail.AddMember("exitCode", 0, a);
        detail.AddMember("reason", "Completed", a);
        detail.AddMember("finishedAt", json::str(now, a), a);
        state.AddMember("terminated", detail, a);
      } else {
        detail.AddMember("startedAt", json::str(now, a), a);
        state.AddMember("running", detail, a);
      }
      cs.AddMember("state", state, a);
      cs.AddMember("lastState", json::Value(rapidjson::kObjectType), a);
      cs.AddMember("ready", !completed, a);
      cs.AddMember("restartCount", 0, a);
      cs.AddMember("image", json::str(json::getString(spec, "image"), a), a);
      cs.AddMember("imageID", json::str(json::getString(spec, "image"), a), a);
      auto id = run.ids.find(name);
      cs.AddMember("containerID", json::str("fake://" + (id == run.ids.end() ? "" : id->second), a), a);
      cs.AddMember("started", !completed, a);
      out.PushBack(cs, a);
    }
    return out;
  };
  json::Value inits = statuses("initContainers", true);
  if (!inits.Empty()) st.AddMember("initContainerStatuses", inits, a);
  st.AddMember("containerStatuses", statuses("containers", false), a);
  return json::serialize(st);
}

}  // namespace

FakeFleet::FakeFleet(client::Client& client, FakeFleetConfig cfg)
    : client_(client),
      cfg_(std::move(cfg)),
      // Every bound pod: one watch for the whole fleet (a kubelet per node would hold one each).
      pods_(client, client::InformerOptions{"", "v1", "pods", "", "", "spec.nodeName!=", 500}) {
  for (int i = 0; i < cfg_.nodes; ++i) {
    NodeConfig nc = cfg_.node;
    nc.name = cfg_.name_prefix + "-" + std::to_string(i);
    node_index_[nc.name] = agents_.size();
    agents_.push_back(std::make_unique<NodeAgent>(client_, nc, cfg_.machine));
    FakeRuntimeOptions ro;
    ro.node_index = runtimes_.size();
    ro.any_image = true;
    ro.record_calls = false;
    runtimes_.push_back(std::make_unique<FakeRuntime>(ro));
  }
  pods_.addHandlers(client::EventHandlers{
      [this](const client::Object& o) { onPod(o); },
      [this](const client::Object&, const client::Object& o) { onPod(o); },
      [this](const client::Object& o) {
        // Gone (confirmed, or deleted with grace 0): nothing of it stays in the runtime.
        if (FakeRuntime* runtime = runtimeOf(*o))
          removePod(*runtime, std::string(json::getStringPath(*o, {"metadata", "uid"})));
        std::lock_guard<std::mutex> g(mu_);
        pods_done_.erase(client::objectKey(*o));
      },
  });
}

FakeFleet::~FakeFleet() {
  stop();
}

bool FakeFleet::start(int sync_timeout_ms) {
  // Registration in parallel: a thousand sequential round trips would take seconds.
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> registrars;
  for (int t = 0; t < std::min<int>(8, cfg_.nodes); ++t)
    registrars.emplace_back([&] {
      for (size_t i = next++; i < agents_.size() && !failed; i = next++)
        if (!agents_[i]->registerNode()) failed = true;
    });
  for (auto& t : registrars) t.join();
  if (failed) return false;
  pods_.start();
  if (!pods_.waitForSync(sync_timeout_ms)) return false;
  for (int i = 0; i < std::max(1, cfg_.workers); ++i) workers_.emplace_back([this] { work(); });
  // Heartbeats start one by one across one renew interval, so the leases of a thousand
  // nodes are renewed evenly rather than all in the same instant.
  starter_ = std::thread([this] {
    auto gap = std::chrono::milliseconds(cfg_.node.renew_interval_seconds * 1000) /
               std::max<size_t>(1, agents_.size());
    for (auto& agent : agents_) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        if (cv_.wait_for(lk, gap, [&] { return stop_; })) return;
      }
      agent->start();
    }
  });
  LOG_INFO("kubelet-lite: fake fleet of " << agents_.size() << " nodes registered");
  return true;
}

void FakeFleet::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (starter_.joinable()) starter_.join();
  pods_.stop();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
  for (auto& agent : agents_) agent->stop();
}

void FakeFleet::onPod(const client::Object& obj) {
  const json::Value& pod = *obj;
  std::string_view node = json::getStringPath(pod, {"spec", "nodeName"});
  if (!node_index_.count(std::string(node))) return;
  std::string key = client::objectKey(pod);
  std::string uid(json::getStringPath(pod, {"metadata", "uid"}));
  bool deleting = json::findPath(pod, {"metadata", "deletionTimestamp"}) != nullptr;
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  std::lock_guard<std::mutex> g(mu_);
  PodRecord& rec = pods_done_[key];
  if (rec.uid != uid) rec = PodRecord{uid};
  if (deleting) {
    if (rec.delete_queued) return;
    rec.delete_queued = true;
    due_.push(Due{Steady::now(), key, Action::kConfirmDelete});
    cv_.notify_one();
    return;
  }
  // Running already (our own write coming back, or a pod from before a restart), or done.
  if (rec.run_queued || phase == "Running" || phase == "Succeeded" || phase == "Failed") return;
  rec.run_queued = true;
  due_.push(Due{Steady::now() + std::chrono::milliseconds(cfg_.startup_ms), key, Action::kRun});
  cv_.notify_one();
}

void FakeFleet::later(const std::string& key, Action action, std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> g(mu_);
  due_.push(Due{Steady::now() + delay, key, action});
  cv_.notify_one();
}

void FakeFleet::work() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_) {
    if (due_.empty()) {
      cv_.wait(lk);
      continue;
    }
    // A copy: wait_until keeps reading its argument while the lock is released, and a
    // push may reallocate the queue under it.
    const Steady::time_point next = due_.top().at;
    if (Steady::now() < next) {
      cv_.wait_until(lk, next);
      continue;
    }
    Due d = due_.top();
    due_.pop();
    lk.unlock();
    if (d.action == Action::kRun)
      markRunning(d.key);
    else
      confirmDelete(d.key);
    lk.lock();
  }
}

FakeRuntime* FakeFleet::runtimeOf(const json::Value& pod) {
  auto it = node_index_.find(std::string(json::getStringPath(pod, {"spec", "nodeName"})));
  return it == node_index_.end() ? nullptr : runtimes_[it->second].get();
}

void FakeFleet::markRunning(const std::string& key) {
  client::Object obj = pods_.get(key);
  if (!obj || json::findPath(*obj, {"metadata", "deletionTimestamp"})) return;
  const json::Value& pod = *obj;
  std::string node(json::getStringPath(pod, {"spec", "nodeName"}));
  std::string uid(json::getStringPath(pod, {"metadata", "uid"}));
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = pods_done_.find(key);
    if (it == pods_done_.end() || it->second.uid != uid) return;  // another incarnation now
  }
  std::string ns(json::getStringPath(pod, {"metadata", "namespace"}));
  std::string name(json::getStringPath(pod, {"metadata", "name"}));
  auto run = runPod(*runtimes_[node_index_.at(node)], pod);
  if (!run) {
    LOG_WARN("kubelet-lite: " << key << " not run: " << run.error().message);
    later(key, Action::kRun, std::chrono::seconds(1));
    return;
  }
  std::string body =
      R"({"status":)" + runningStatus(pod, agents_[node_index_.at(node)]->config().internal_ip, *run) + "}";
  auto r = client_.patch("/api/v1/namespaces/" + ns + "/pods/" + name + "/status?fieldManager=kubelet-lite",
                         body, "application/merge-patch+json", client::RequestOptions{10000, 1});
  if (!r && r.error().code != 404 && r.error().code != 409) {
    LOG_WARN("kubelet-lite: status of " << key << " not written: " << r.error().message);
    later(key, Action::kRun, std::chrono::seconds(1));
  }
}

void FakeFleet::confirmDelete(const std::string& key) {
  client::Object obj = pods_.get(key);
  if (!obj) return;
  std::string ns(json::getStringPath(*obj, {"metadata", "namespace"}));
  std::string name(json::getStringPath(*obj, {"metadata", "name"}));
  std::string uid(json::getStringPath(*obj, {"metadata", "uid"}));
  // Fake containers stop at once: the node confirms then, for this incarnation only.
  if (FakeRuntime* runtime = runtimeOf(*obj)) removePod(*runtime, uid);
  auto r = client_.request(
      "DELETE", "/api/v1/namespaces/" + ns + "/pods/" + name,
      R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"preconditions":{"uid":")" + uid +
          "\"}}",
      "application/json");
  if (!r || (r->status >= 300 && r->status != 404 && r->status != 409)) {
    LOG_WARN("kubelet-lite: final delete of " << key << " failed");
    later(key, Action::kConfirmDelete, std::chrono::seconds(1));
  }
}

}  // namespace shepherd::kubelet
