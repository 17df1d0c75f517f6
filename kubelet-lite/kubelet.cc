#include "kubelet-lite/kubelet.h"

#include <unistd.h>

#include <filesystem>
#include <set>

#include "common/base64.h"
#include "common/clock.h"
#include "common/ids.h"
#include "common/log.h"
#include "kubelet-lite/cgroups.h"
#include "kubelet-lite/pod_worker.h"
#include "kubelet-lite/volumes.h"

namespace shepherd::kubelet {

namespace fs = std::filesystem;

namespace {

client::InformerOptions podInformerOptions(const std::string& node) {
  client::InformerOptions o;
  o.plural = "pods";
  o.field_selector = "spec.nodeName=" + node;
  return o;
}

// The attempt numbers of a container's log files (<attempt>.log), highest first.
std::vector<int> logAttempts(const std::string& dir) {
  std::vector<int> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    std::string f = e.path().filename().string();
    if (f.size() < 5 || f.substr(f.size() - 4) != ".log") continue;
    try {
      out.push_back(std::stoi(f.substr(0, f.size() - 4)));
    } catch (...) {
    }
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

}  // namespace

Kubelet::Kubelet(client::Client& client, RuntimeService& runtime, KubeletConfig cfg)
    : client_(client),
      runtime_(runtime),
      cfg_(std::move(cfg)),
      pods_(client, podInformerOptions(cfg_.node_name)),
      events_(client, "kubelet", cfg_.node_name, cfg_.node_name) {
  client::EventHandlers h;
  h.on_add = [this](const client::Object& o) { onPod(o); };
  h.on_update = [this](const client::Object&, const client::Object& o) { onPod(o); };
  h.on_delete = [this](const client::Object& o) { onPodDelete(o); };
  pods_.addHandlers(std::move(h));
}

Kubelet::~Kubelet() {
  stop();
}

bool Kubelet::start(int sync_timeout_ms) {
  std::error_code ec;
  fs::create_directories(cfg_.root_dir + "/pods", ec);
  fs::create_directories(cfg_.root_dir + "/logs/pods", ec);
  pods_.start();
  if (!pods_.waitForSync(sync_timeout_ms)) return false;
  housekeeper_ = std::thread([this] { housekeeping(); });
  return true;
}

void Kubelet::stop() {
  if (stop_.exchange(true)) return;
  pods_.stop();
  if (housekeeper_.joinable()) housekeeper_.join();
  events_.stop();
  std::map<std::string, std::shared_ptr<PodWorker>> workers;
  {
    std::lock_guard<std::mutex> g(mu_);
    workers.swap(workers_);
  }
  for (auto& [uid, w] : workers) w->stop();
}

void Kubelet::onPod(const client::Object& obj) {
  if (stop_.load()) return;
  std::string uid(json::getStringPath(*obj, {"metadata", "uid"}));
  std::lock_guard<std::mutex> g(mu_);
  auto it = workers_.find(uid);
  if (it != workers_.end()) {
    it->second->update(obj);
    return;
  }
  workers_[uid] = std::make_shared<PodWorker>(*this, obj, admit(*obj));
}

std::optional<PodRejection> Kubelet::admit(const json::Value& pod) {
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  if (phase == "Succeeded" || phase == "Failed" || json::findPath(pod, {"metadata", "deletionTimestamp"}))
    return std::nullopt;
  std::string uid(json::getStringPath(pod, {"metadata", "uid"}));
  std::vector<client::Object> pods = pods_.list();
  std::vector<const json::Value*> active;
  for (const auto& o : pods) {
    std::string other(json::getStringPath(*o, {"metadata", "uid"}));
    std::string_view p = json::getStringPath(*o, {"status", "phase"});
    if (other == uid || !workers_.count(other) || rejected_.count(other) || p == "Succeeded" || p == "Failed")
      continue;
    active.push_back(o.get());
  }
  auto rejection = admitPod(pod, active);
  if (rejection) {
    LOG_INFO("kubelet-lite: pod " << json::getStringPath(pod, {"metadata", "namespace"}) << "/"
                                  << json::getStringPath(pod, {"metadata", "name"})
                                  << " rejected: " << rejection->message);
    rejected_.insert(uid);
  }
  return rejection;
}

void Kubelet::onPodDelete(const client::Object& obj) {
  // The pod is gone from the API (our final DELETE, or a forced deletion): its worker
  // tears down whatever still runs and ends.
  std::string uid(json::getStringPath(*obj, {"metadata", "uid"}));
  std::lock_guard<std::mutex> g(mu_);
  auto it = workers_.find(uid);
  if (it != workers_.end()) it->second->removed();
}

client::Object Kubelet::currentPod(const std::string& key) {
  return pods_.get(key);
}

size_t Kubelet::workerCount() {
  std::lock_guard<std::mutex> g(mu_);
  return workers_.size();
}

void Kubelet::housekeeping() {
  auto lastOrphanSweep = std::chrono::steady_clock::now() - std::chrono::seconds(25);
  while (!stop_.load()) {
    for (int i = 0; i < 20 && !stop_.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (stop_.load()) break;
    // Reap workers whose pods are gone.
    std::vector<std::shared_ptr<PodWorker>> finished;
    {
      std::lock_guard<std::mutex> g(mu_);
      for (auto it = workers_.begin(); it != workers_.end();) {
        if (it->second->done()) {
          finished.push_back(it->second);
          rejected_.erase(it->first);
          it = workers_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& w : finished) w->stop();
    if (std::chrono::steady_clock::now() - lastOrphanSweep > std::chrono::seconds(30)) {
      lastOrphanSweep = std::chrono::steady_clock::now();
      cleanupOrphans();
    }
  }
}

void Kubelet::cleanupOrphans() {
  std::set<std::string> known;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& [uid, w] : workers_) known.insert(uid);
  }
  for (const auto& obj : pods_.list())
    known.insert(std::string(json::getStringPath(*obj, {"metadata", "uid"})));
  // Sandboxes this node made for pods that no longer exist (e.g. deleted while
  // kubelet-lite was down) are stopped and removed with their cgroups and volumes.
  runtime::v1::PodSandboxFilter f;
  (*f.mutable_label_selector())["io.shepherd.node"] = cfg_.node_name;
  auto sandboxes = runtime_.listPodSandbox(f);
  if (!sandboxes) return;
  for (const auto& sb : sandboxes.value()) {
    auto it = sb.labels().find("io.kubernetes.pod.uid");
    if (it == sb.labels().end() || known.count(it->second)) continue;
    LOG_INFO("kubelet-lite: removing orphaned sandbox " << sb.id().substr(0, 12) << " of pod uid "
                                                        << it->second);
    runtime::v1::ContainerFilter cf;
    cf.set_pod_sandbox_id(sb.id());
    if (auto cs = runtime_.listContainers(cf))
      for (const auto& c : cs.value()) {
        (void)runtime_.stopContainer(c.id(), 0);
        (void)runtime_.removeContainer(c.id());
      }
    (void)runtime_.stopPodSandbox(sb.id());
    (void)runtime_.removePodSandbox(sb.id());
    if (!cfg_.fake)
      for (const char* qos : {"", "/burstable", "/besteffort"})
        removePodCgroups(cfg_.cgroup_root + qos + "/pod" + it->second);
  }
  std::error_code ec;
  for (auto& e : fs::directory_iterator(cfg_.root_dir + "/pods", ec)) {
    std::string uid = e.path().filename().string();
    if (!known.count(uid)) teardownVolumes(e.path().string());
  }
  for (auto& e : fs::directory_iterator(cfg_.root_dir + "/logs/pods", ec)) {
    std::string dir = e.path().filename().string();
    size_t us = dir.rfind('_');
    if (us != std::string::npos && !known.count(dir.substr(us + 1))) fs::remove_all(e.path(), ec);
  }
}

DataLookup Kubelet::dataLookup() {
  return [this](const std::string& resource, const std::string& ns,
                const std::string& name) -> std::optional<std::map<std::string, std::string>> {
    bool secret = resource == "secrets";
    auto r = client_.get("/api/v1/namespaces/" + ns + (secret ? "/secrets/" : "/configmaps/") + name,
                         client::RequestOptions{10000, 3});
    if (!r) return std::nullopt;
    std::map<std::string, std::string> out;
    if (const json::Value* data = json::find(r.value(), "data"); data && data->IsObject())
      for (auto& kv : data->GetObject()) {
        std::string v(json::view(kv.value));
        if (secret) v = base64Decode(v).value_or("");
        out[std::string(json::view(kv.name))] = v;
      }
    if (const json::Value* bin = json::find(r.value(), "binaryData"); bin && bin->IsObject())
      for (auto& kv : bin->GetObject())
        out[std::string(json::view(kv.name))] = base64Decode(json::view(kv.value)).value_or("");
    return out;
  };
}

ClaimLookup Kubelet::claimLookup() {
  return [this](const std::string& ns, const std::string& name) -> Result<std::string> {
    std::string what = "error processing PVC " + ns + "/" + name + ": ";
    auto claim = client_.get(
        "/api/v1/namespaces/" + client::urlEncode(ns) + "/persistentvolumeclaims/" + client::urlEncode(name),
        client::RequestOptions{10000, 3});
    if (!claim)
      return ApiError::make(400, "FailedMount",
                            what + "failed to fetch PVC from API server: " + claim.error().message);
    if (const json::Value* d = json::findPath(*claim, {"metadata", "deletionTimestamp"}); d && !d->IsNull())
      return ApiError::make(400, "FailedMount",
                            what + "can't start pod because PVC " + ns + "/" + name + " is being deleted");
    std::string volume(json::getStringPath(*claim, {"spec", "volumeName"}));
    if (volume.empty() || json::getStringPath(*claim, {"status", "phase"}) != "Bound")
      return ApiError::make(400, "FailedMount", what + "PVC is not bound");
    auto pv = client_.get("/api/v1/persistentvolumes/" + client::urlEncode(volume),
                          client::RequestOptions{10000, 3});
    if (!pv)
      return ApiError::make(
          400, "FailedMount",
          what + "failed to fetch PV " + volume + " from API server: " + pv.error().message);
    if (const json::Value* local = json::findPath(*pv, {"spec", "local"}); local && local->IsObject()) {
      std::string path(json::getString(*local, "path"));
      std::error_code ec;
      if (!fs::is_directory(path, ec))
        return ApiError::make(400, "FailedMount",
                              "MountVolume.NewMounter initialization failed for volume \"" + volume +
                                  "\" : path \"" + path + "\" does not exist");
      return path;
    }
    if (const json::Value* hp = json::findPath(*pv, {"spec", "hostPath"}); hp && hp->IsObject()) {
      std::string path(json::getString(*hp, "path"));
      if (auto st = checkHostPathType(path, std::string(json::getString(*hp, "type"))); !st)
        return st.error();
      return path;
    }
    return ApiError::make(400, "FailedMount",
                          "volume " + volume + ": only local and hostPath volumes can be mounted");
  };
}

std::optional<std::string> Kubelet::containerLogPath(const std::string& ns, const std::string& pod,
                                                     const std::string& container, size_t skip) {
  client::Object obj = pods_.get(ns + "/" + pod);
  if (!obj) return std::nullopt;
  std::string uid(json::getStringPath(*obj, {"metadata", "uid"}));
  std::string dir = podLogDir(ns, pod, uid) + "/" + container;
  auto attempts = logAttempts(dir);
  if (attempts.size() <= skip) return std::nullopt;
  return dir + "/" + std::to_string(attempts[skip]) + ".log";
}

void Kubelet::event(const json::Value& pod, const std::string& type, const std::string& reason,
                    const std::string& message) {
  events_.event(pod, "v1", "Pod", type, reason, message);
}

}  // namespace shepherd::kubelet
