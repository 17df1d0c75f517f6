// The queue of pods waiting to be scheduled: an active heap (higher priority first, then
// older first), pods waiting out their back-off, and pods being scheduled right now.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>

#include "common/mutex.h"

namespace shepherd::scheduler {

// Thread-safety: all methods lock one mutex.
class SchedulingQueue {
 public:
  using Clock = std::chrono::steady_clock;
  SchedulingQueue(std::chrono::milliseconds initial_backoff, std::chrono::milliseconds max_backoff);

  // A pod that needs scheduling (no-op if already queued or in flight).
  void add(const std::string& key, int32_t priority, const std::string& creation);
  // The last attempt failed: retry after the pod's next back-off.
  void backoff(const std::string& key);
  // Something changed in the cluster: every waiting pod is retried now.
  void moveAllToActive();
  // The pod is gone or bound: forget it entirely.
  void remove(const std::string& key);
  // The scheduling attempt of `key` finished (it stays known for back-off counting
  // until remove()).
  void done(const std::string& key);

  // Blocks until a pod is ready (or `deadline` passes, or shutdown). False on shutdown.
  bool pop(std::string& key, std::chrono::milliseconds wait);
  void shutDown();

  size_t activeCount();
  size_t backoffCount();
  int attempts(const std::string& key);

 private:
  struct Entry {
    int32_t priority;
    std::string creation;
    std::string key;
    bool operator<(const Entry& o) const;  // heap order: "less urgent"
  };
  struct PodState {
    int32_t priority = 0;
    std::string creation;
    int attempts = 0;
    enum class Where { Active, Waiting, InFlight, Idle } where = Where::Idle;
    Clock::time_point ready_at;
  };
  void pushActive(const std::string& key, PodState& st) REQUIRES(mu_);
  void promoteDue() REQUIRES(mu_);

  std::chrono::milliseconds initial_, max_;
  Mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<Entry> active_ GUARDED_BY(mu_);
  std::unordered_map<std::string, PodState> pods_ GUARDED_BY(mu_);
  std::multimap<Clock::time_point, std::string> waiting_ GUARDED_BY(mu_);
  bool shutdown_ GUARDED_BY(mu_) = false;
};

}  // namespace shepherd::scheduler
