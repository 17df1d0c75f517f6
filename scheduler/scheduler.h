// The scheduler: watches unscheduled pods with its schedulerName and all nodes, picks a
// node for each pod (filter, score, random tie-break among the best), assumes the pod on
// that node in its cache before binding, binds through pods/binding, and records the
// outcome (Scheduled event; or PodScheduled=False/Unschedulable with upstream's message,
// a FailedScheduling event and a back-off retry).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/client.h"
#include "client/event_recorder.h"
#include "client/informer.h"
#include "common/mutex.h"
#include "scheduler/node_info.h"
#include "scheduler/scheduling_queue.h"
#include "scheduler/volume_binding.h"

namespace shepherd::scheduler {

struct SchedulerOptions {
  std::string scheduler_name = "default-scheduler";
  std::string instance;                  // reportingInstance of events
  int percentage_of_nodes_to_score = 0;  // 0 = adaptive, as upstream
  int bind_workers = 16;
  // How long PreBind waits for a pod's claims to be bound (bindTimeoutSeconds).
  std::chrono::seconds volume_bind_timeout{600};
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{10000};
};

struct SchedulerMetrics {
  std::atomic<uint64_t> scheduled{0}, unschedulable{0}, errors{0}, bind_conflicts{0};
  // Histogram of the scheduling attempt duration (seconds) with upstream-like buckets.
  static constexpr double kBuckets[] = {0.001, 0.002, 0.004, 0.008, 0.016, 0.032,
                                        0.064, 0.128, 0.256, 0.512, 1.024};
  std::atomic<uint64_t> bucket_counts[sizeof(kBuckets) / sizeof(double) + 1] = {};
  std::atomic<uint64_t> duration_count{0};
  std::atomic<uint64_t> duration_sum_us{0};
  void observe(double seconds);
};

// Thread-safety: start/stop from one thread; event handlers and workers synchronize on
// the cache mutex and the queue. cache_mu_ guards the cache (node_map_, node_order_,
// next_start_, pod_node_, last_failure_) and rng_; bind_mu_ guards bind_queue_.
class Scheduler {
 public:
  Scheduler(client::Client& client, SchedulerOptions opts);
  ~Scheduler();

  // Starts informers (pods, nodes) and waits for their first sync.
  bool startInformers(int timeout_ms);
  // Starts scheduling (call when leading).
  void run();
  // Stops scheduling (call when no longer leading, or at exit).
  void stop();
  void stopInformers();

  const SchedulerMetrics& metrics() const { return metrics_; }
  size_t pendingActive() { return queue_.activeCount(); }
  size_t pendingBackoff() { return queue_.backoffCount(); }
  std::string metricsText();

 private:
  struct BindTask {
    PodInfo pod;
    client::Object object;  // the pod as scheduled
    bool volumes = false;   // it has claims: PreBind them first
    std::string node;
    std::string resource_version;
    std::chrono::steady_clock::time_point started;
  };

  void onPodAdd(const client::Object& obj);
  void onPodUpdate(const client::Object& old_obj, const client::Object& obj);
  void onPodDelete(const client::Object& obj);
  void onNodeChange(const client::Object& obj);
  void onNodeDelete(const client::Object& obj);

  void addPodToCache(const PodInfo& pod);
  void removePodFromCache(const std::string& key);

  void scheduleLoop();
  void scheduleOne(const std::string& key);
  void bindLoop();
  // Forgets that `pod` was assumed on `node` (its bind failed).
  void forgetAssumed(const PodInfo& pod, const std::string& node);
  void recordFailure(const PodInfo& pod, const std::string& rv, const std::string& message);
  // An events.k8s.io event about `pod` (at `resource_version`).
  void emit(const PodInfo& pod, const std::string& resource_version, const std::string& reason,
            const std::string& note, const std::string& type, const std::string& action);
  bool mine(const PodInfo& pod) const { return pod.scheduler_name == opts_.scheduler_name; }

  client::Client& client_;
  SchedulerOptions opts_;
  client::Informer pods_;
  client::Informer nodes_;
  VolumeBinding volume_binding_;
  SchedulingQueue queue_;
  SchedulerMetrics metrics_;

  // Cache: nodes with the pods bound or assumed there.
  Mutex cache_mu_;
  std::map<std::string, NodeInfo> node_map_ GUARDED_BY(cache_mu_);
  std::vector<std::string> node_order_ GUARDED_BY(cache_mu_);  // for rotating the search start
  size_t next_start_ GUARDED_BY(cache_mu_) = 0;
  std::unordered_map<std::string, std::string> pod_node_
      GUARDED_BY(cache_mu_);  // pod key -> node it counts on
  std::unordered_map<std::string, std::string> last_failure_
      GUARDED_BY(cache_mu_);  // pod key -> message written

  Mutex bind_mu_;
  std::condition_variable bind_cv_;
  std::deque<BindTask> bind_queue_ GUARDED_BY(bind_mu_);

  // Events never hold back scheduling: a full queue drops them (and counts them).
  client::EventRecorder events_;

  std::atomic<bool> running_{false};
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
  std::mt19937_64 rng_ GUARDED_BY(cache_mu_){std::random_device{}()};
};

}  // namespace shepherd::scheduler
