// WorkQueue: the rate-limited work queue controllers process keys from (as client-go's).
// A key queued several times before a worker takes it is processed once; a key being
// processed is never handed to a second worker (if it is added meanwhile, it is queued
// again when the first worker calls done()); failed keys come back after a per-key
// exponential back-off with a cap; shutDown() lets workers drain what is queued.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "common/mutex.h"

namespace shepherd::client {

// Thread-safety: all methods may be called from any thread.
class WorkQueue {
 public:
  using Clock = std::chrono::steady_clock;
  WorkQueue(std::chrono::milliseconds base_delay = std::chrono::milliseconds(5),
            std::chrono::milliseconds max_delay = std::chrono::milliseconds(1000 * 1000));
  ~WorkQueue();

  void add(const std::string& key);
  void addAfter(const std::string& key, std::chrono::milliseconds delay);
  // Re-adds after base * 2^(failures) (capped); counts a failure for the key.
  void addRateLimited(const std::string& key);
  // Forgets the key's failures (after a success).
  void forget(const std::string& key);
  int numRequeues(const std::string& key);
  std::chrono::milliseconds nextDelay(const std::string& key);

  // Blocks until a key is available; false once shut down and drained.
  bool get(std::string& key);
  // The worker finished `key` (successfully or not).
  void done(const std::string& key);

  void shutDown();
  bool shuttingDown();
  size_t len();

 private:
  void delayLoop() EXCLUDES(mu_);
  void addLocked(const std::string& key) REQUIRES(mu_);

  std::chrono::milliseconds base_, max_;
  Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_ GUARDED_BY(mu_);
  std::unordered_set<std::string> dirty_ GUARDED_BY(mu_);  // queued (or to re-queue after processing)
  std::unordered_set<std::string> processing_ GUARDED_BY(mu_);
  std::unordered_map<std::string, int> failures_ GUARDED_BY(mu_);
  std::multimap<Clock::time_point, std::string> waiting_ GUARDED_BY(mu_);
  bool shutting_down_ GUARDED_BY(mu_) = false;
  std::condition_variable delay_cv_;
  std::thread delay_thread_;
};

}  // namespace shepherd::client
