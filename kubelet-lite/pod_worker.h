// PodWorker: one per pod on this node, on its own thread. Each sync drives the runtime
// toward the pod's spec — volumes, sandbox, init containers in order, then containers,
// restarts by restartPolicy with back-off, probes, activeDeadlineSeconds — and writes the
// pod's status when it changed. On deletion it stops the containers with the grace
// period, removes the sandbox, cgroups and volumes, and makes the final DELETE.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "api.pb.h"
#include "client/informer.h"
#include "kubelet-lite/kubelet.h"
#include "kubelet-lite/pod_admission.h"
#include "kubelet-lite/probes.h"

namespace shepherd::kubelet {

struct ContainerRecord {
  std::string id;        // CRI container id of the current attempt ("" = none)
  uint32_t attempt = 0;  // restartCount = attempt
  bool started_once = false;
  // Restart back-off as upstream's per-container entry: the current delay (0 = none yet)
  // and the finish time it was last advanced for; `finished_at` is this attempt's.
  int backoff_seconds = 0;
  std::chrono::system_clock::time_point backoff_updated{}, finished_at{};
  std::set<std::string> events_sent;  // per attempt: each distinct event once
  std::string waiting_reason;         // set while not running (ContainerCreating, CrashLoopBackOff, ...)
  std::string waiting_message;
  std::string last_terminated;  // JSON of the previous attempt's terminated state
  std::string terminated;       // JSON of this attempt's terminated state (when exited)
  int exit_code = 0;
  bool exited = false;
  bool running = false;
  std::string started_at;
  std::string image_ref;
  // Image "pull" back-off as upstream's: after a failure the image is not looked at
  // again for 10 s, doubling to 300 s; meanwhile the container waits in ImagePullBackOff.
  int pull_backoff_seconds = 0;
  std::chrono::steady_clock::time_point pull_retry_at{};
  ProbeState liveness, readiness, startup;

  // Running, and its startup probe (if any) succeeded: upstream's `started`.
  bool startedWith(const json::Value& spec) const {
    return running && (!json::find(spec, "startupProbe") || startup.ok);
  }
};

class PodWorker {
 public:
  // A rejected pod (node admission) is never started: its status says why.
  PodWorker(Kubelet& kubelet, const client::Object& pod,
            std::optional<PodRejection> rejection = std::nullopt);
  ~PodWorker();
  void update(const client::Object& pod);
  // The pod is gone from the API: tear down what still runs, then end.
  void removed();
  void stop();
  bool done() const { return done_.load(); }

 private:
  void run();
  // One pass; false when the pod is gone for good.
  bool sync();
  bool terminate(const json::Value& pod, bool final_delete);
  Status ensureSandbox(const json::Value& pod);
  void syncContainers(const json::Value& pod, bool init);
  // Every regular init container exited 0 and every sidecar has started (or a main
  // container has run: the pod stays initialized while a sidecar restarts).
  bool initializedNow(const json::Value& pod);
  // Restart policy Never/OnFailure: every main container is done for good, so the
  // sidecars are stopped (and not restarted).
  bool mainsFinished(const json::Value& pod);
  void stopSidecars(const json::Value& pod, int64_t grace_seconds);
  Status startContainer(const json::Value& pod, const json::Value& spec, ContainerRecord& rec, bool init);
  // An event about one container, sent once per attempt.
  void containerEvent(const json::Value& pod, ContainerRecord& rec, const std::string& type,
                      const std::string& reason, const std::string& message);
  void refreshContainer(const json::Value& spec, ContainerRecord& rec);
  void runProbes(const json::Value& pod, const json::Value& spec, ContainerRecord& rec);
  // Writes the status when it changed; false when the write failed.
  bool writeStatus(const json::Value& pod);
  std::string buildStatus(const json::Value& pod);
  runtime::v1::PodSandboxConfig sandboxConfig(const json::Value& pod);
  bool adopt(const json::Value& pod);
  // A container's id as the API shows it: "<runtime>://<id>".
  std::string containerId(const std::string& id) const;

  Kubelet& k_;
  const std::optional<PodRejection> rejection_;
  std::string key_, uid_, ns_, name_;
  std::mutex mu_;
  std::condition_variable cv_;
  client::Object pod_;
  // resourceVersion of our own last status write: its watch event is not a reason to
  // sync again (otherwise every write would trigger an immediate second pass).
  std::string own_rv_;
  bool updated_ = true;
  bool removed_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;

  // Runtime state (worker thread only).
  std::string sandbox_id_;
  std::string pod_ip_;
  std::string start_time_;
  std::map<std::string, ContainerRecord> init_;
  std::map<std::string, ContainerRecord> containers_;
  std::string last_status_;
  std::map<std::string, std::string> condition_since_;  // "Type=Status" -> transition time
  std::string failed_reason_, failed_message_;          // pod-level failure (DeadlineExceeded)
  std::string sandbox_error_;
  std::chrono::steady_clock::time_point next_sandbox_try_{};
  bool adopted_ = false;
  bool initialized_ = false;           // init containers done (sidecars started) once
  bool sidecars_stopped_ = false;      // the main containers finished: sidecars stay stopped
  bool stopped_for_deletion_ = false;  // containers stopped because the pod is being deleted
};

}  // namespace shepherd::kubelet
