// PodWorker: the thread, its wake-ups and one sync pass. The sandbox, the containers and
// the status are in pod_worker_sandbox.cc, pod_worker_containers.cc and pod_worker_status.cc.
#include "kubelet-lite/pod_worker.h"

#include "common/clock.h"
#include "common/log.h"
#include "kubelet-lite/pod_worker_internal.h"

namespace shepherd::kubelet {

using namespace pod_worker_detail;

PodWorker::PodWorker(Kubelet& kubelet, const client::Object& pod, std::optional<PodRejection> rejection)
    : k_(kubelet), rejection_(std::move(rejection)), pod_(pod) {
  ns_ = json::getStringPath(*pod, {"metadata", "namespace"});
  name_ = json::getStringPath(*pod, {"metadata", "name"});
  uid_ = json::getStringPath(*pod, {"metadata", "uid"});
  key_ = ns_ + "/" + name_;
  thread_ = std::thread([this] { run(); });
}

PodWorker::~PodWorker() {
  stop();
}

void PodWorker::update(const client::Object& pod) {
  std::lock_guard<std::mutex> g(mu_);
  pod_ = pod;
  if (!own_rv_.empty() && json::getStringPath(*pod, {"metadata", "resourceVersion"}) == own_rv_) return;
  updated_ = true;
  cv_.notify_all();
}

void PodWorker::removed() {
  std::lock_guard<std::mutex> g(mu_);
  removed_ = true;
  updated_ = true;
  cv_.notify_all();
}

void PodWorker::stop() {
  stop_ = true;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PodWorker::run() {
  while (!stop_.load()) {
    bool more = true;
    try {
      more = sync();
    } catch (const std::exception& e) {
      LOG_ERROR("kubelet-lite: pod " << key_ << ": sync failed: " << e.what());
    }
    if (!more) break;
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, std::chrono::milliseconds(k_.config().fake ? 500 : 1000),
                 [&] { return updated_ || stop_.load(); });
    updated_ = false;
  }
  done_ = true;
}

bool PodWorker::sync() {
  client::Object obj;
  bool removed = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    obj = pod_;
    removed = removed_;
  }
  const json::Value& pod = *obj;
  if (removed) {
    terminate(pod, false);
    return false;
  }
  if (json::findPath(pod, {"metadata", "deletionTimestamp"})) return terminate(pod, true);
  if (rejection_) {
    if (failed_reason_.empty()) {
      failed_reason_ = rejection_->reason;
      failed_message_ = "Pod was rejected: " + rejection_->message;
      k_.event(pod, "Warning", rejection_->reason, rejection_->message);
    }
    writeStatus(pod);
    return true;
  }
  if (!adopted_) {
    adopted_ = true;
    adopt(pod);
  }
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  bool terminal = phase == "Succeeded" || phase == "Failed";
  if (terminal) {
    // Finished pods keep their status; their containers and sandbox are stopped.
    if (!sandbox_id_.empty()) {
      terminate(pod, false);
      sandbox_id_.clear();
    }
    return true;
  }
  // activeDeadlineSeconds: the pod fails once it has been active that long.
  if (auto deadline = json::getInt(*json::find(pod, "spec"), "activeDeadlineSeconds");
      deadline && !start_time_.empty()) {
    auto started = clock::parseRfc3339(start_time_);
    if (started && clock::now() - *started > std::chrono::seconds(*deadline)) {
      failed_reason_ = "DeadlineExceeded";
      failed_message_ = "Pod was active on the node longer than the specified deadline";
      k_.event(pod, "Normal", "DeadlineExceeded", failed_message_);
      for (auto* m : {&containers_, &init_})
        for (auto& [n, rec] : *m)
          if (!rec.id.empty()) (void)k_.runtime().stopContainer(rec.id, 0);
      for (auto& spec : containersOf(pod, false).GetArray())
        refreshContainer(spec, containers_[std::string(json::getString(spec, "name"))]);
      writeStatus(pod);
      return true;
    }
  }
  auto sb = ensureSandbox(pod);
  if (!sb) {
    for (auto& spec : containersOf(pod, false).GetArray()) {
      auto& rec = containers_[std::string(json::getString(spec, "name"))];
      rec.waiting_reason = "ContainerCreating";
    }
    writeStatus(pod);
    return true;
  }
  syncContainers(pod, true);
  if (initializedNow(pod)) {
    initialized_ = true;
    syncContainers(pod, false);
    if (!sidecars_stopped_ && mainsFinished(pod)) {
      // As upstream: a pod whose main containers are done for good is killed, and its
      // sidecars with it; their exits do not count for the phase.
      sidecars_stopped_ = true;
      stopSidecars(pod, json::getInt(*json::find(pod, "spec"), "terminationGracePeriodSeconds").value_or(30));
      syncContainers(pod, true);  // refresh their records
    }
  } else {
    for (auto& spec : containersOf(pod, false).GetArray()) {
      auto& rec = containers_[std::string(json::getString(spec, "name"))];
      if (rec.id.empty()) rec.waiting_reason = "PodInitializing";
    }
  }
  writeStatus(pod);
  return true;
}

bool PodWorker::initializedNow(const json::Value& pod) {
  if (initialized_) return true;
  for (auto& [n, rec] : containers_)
    if (rec.started_once) return true;
  for (auto& spec : containersOf(pod, true).GetArray()) {
    auto& rec = init_[std::string(json::getString(spec, "name"))];
    bool done = isSidecar(spec) ? rec.startedWith(spec) : rec.exited && rec.exit_code == 0;
    if (!done) return false;
  }
  return true;
}

bool PodWorker::mainsFinished(const json::Value& pod) {
  std::string policy = restartPolicy(pod);
  if (policy == "Always") return false;
  bool any = false;
  for (auto& spec : containersOf(pod, false).GetArray()) {
    auto& rec = containers_[std::string(json::getString(spec, "name"))];
    if (!rec.exited || rec.running) return false;
    if (policy == "OnFailure" && rec.exit_code != 0) return false;  // it will be restarted
    any = true;
  }
  return any;
}

}  // namespace shepherd::kubelet
