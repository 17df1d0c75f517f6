// Kubelet: kubelet-lite's core. It watches the pods bound to its node and runs one
// PodWorker per pod, which drives the container runtime (containerd's CRI, or the
// FakeRuntime) toward the pod's spec and reports the pod's status.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/event_recorder.h"
#include "client/informer.h"
#include "kubelet-lite/env.h"
#include "kubelet-lite/pod_admission.h"
#include "kubelet-lite/runtime_service.h"
#include "kubelet-lite/volumes.h"

namespace shepherd::kubelet {

struct KubeletConfig {
  std::string node_name;
  std::string node_ip = "127.0.0.1";
  std::string root_dir;  // pods/<uid>/..., logs/pods/...
  std::string cgroup_root = "/kubepods";
  // The runtime is a FakeRuntime: no processes, so nothing is made on the host for pods
  // (volumes, /etc/hosts, termination-message files, log directories, cgroups) and
  // probes pass.
  bool fake = false;
  std::string runtime_name = "containerd";  // containerIDs are "<runtime_name>://<id>"
  std::string node_cpu = "1";               // allocatable, for resourceFieldRef defaults
  std::string node_memory = "1Gi";
  std::vector<std::string> dns_servers;
  std::vector<std::string> dns_searches;
  std::vector<std::string> dns_options;
};

class PodWorker;

// Thread-safety: start/stop from one thread; the pod workers run on their own threads.
class Kubelet {
 public:
  Kubelet(client::Client& client, RuntimeService& runtime, KubeletConfig cfg);
  ~Kubelet();
  bool start(int sync_timeout_ms);
  // Stops workers; containers keep running (a restarted kubelet-lite adopts them).
  void stop();

  client::Client& api() { return client_; }
  RuntimeService& runtime() { return runtime_; }
  const KubeletConfig& config() const { return cfg_; }
  DataLookup dataLookup();
  // Claims resolved through the API to their bound volume's host path (local or hostPath).
  ClaimLookup claimLookup();
  std::string podDir(const std::string& uid) const { return cfg_.root_dir + "/pods/" + uid; }
  std::string podLogDir(const std::string& ns, const std::string& name, const std::string& uid) const {
    return cfg_.root_dir + "/logs/pods/" + ns + "_" + name + "_" + uid;
  }
  // The pod's current object from the informer (nullptr if gone).
  client::Object currentPod(const std::string& key);
  // Where a container's log lives (for the log server): the newest run's file, skipping
  // `skip` newer ones.
  std::optional<std::string> containerLogPath(const std::string& ns, const std::string& pod,
                                              const std::string& container, size_t skip);
  // Queues an event about a pod; a separate thread posts it (best effort, so a slow API
  // server never delays a pod's start).
  void event(const json::Value& pod, const std::string& type, const std::string& reason,
             const std::string& message);
  size_t workerCount();

 private:
  void onPod(const client::Object& obj);
  void onPodDelete(const client::Object& obj);
  // Node admission of a pod new to this node (mu_ held); a rejection is remembered so
  // the pod does not count as active for the next one.
  std::optional<PodRejection> admit(const json::Value& pod);
  void housekeeping();
  void cleanupOrphans();

  client::Client& client_;
  RuntimeService& runtime_;
  KubeletConfig cfg_;
  client::Informer pods_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<PodWorker>> workers_;  // by pod uid
  std::set<std::string> rejected_;  // uids of workers whose pods admission rejected
  std::atomic<bool> stop_{false};
  std::thread housekeeper_;
  client::EventRecorder events_;  // source kubelet, host and instance the node
};

}  // namespace shepherd::kubelet
