// EtcdStorage's watch hub: one etcd watch stream over the whole key space, its batches
// handed to every Storage::watch (see etcd_storage.h), and the buffer of recent revisions
// for watches that start in the past. The hub's member functions are in
// etcd_watch_hub.cc. Internal to storage/etcd_*.cc.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "storage/storage.h"

namespace shepherd::storage::etcd_internal {

// One etcd watch stream: the hub's (shared by EtcdStorage::hub_ and its thread, which keeps
// it alive until the thread is done).
struct WatchState {
  enum class Phase { Starting, Running, Ended };

  std::string key;  // the range on the wire
  std::string range_end;
  WatchCallback callback;
  CURLM* multi = nullptr;  // drives the stream; curl_multi_wakeup interrupts its waits
  std::thread thread;
  std::atomic<bool> stop{false};

  // Touched only by the hub thread (set before it starts): every event at or below this
  // revision has been passed to callback. A broken stream resumes at last + 1.
  int64_t last = 0;

  // Under EtcdStorage::wmu_.
  Phase phase = Phase::Starting;
  Code error_code = Code::Ok;
  std::string error;

  ~WatchState() {
    if (multi) curl_multi_cleanup(multi);
  }
};

// One Storage::watch: a prefix and a callback fed by the hub.
struct Subscriber {
  std::string prefix;
  WatchCallback callback;
  // Hub thread only (set by watch() before the sub is handed over): the last revision
  // passed to callback.
  int64_t last = 0;
  std::atomic<bool> removed{false};
  bool joined = false;  // under wmu_: following the hub
};

// One revision's events, kept for watches that start in the past.
struct Batch {
  int64_t revision = 0;
  std::shared_ptr<const std::vector<Event>> events;
  size_t bytes = 0;
};

// The EtcdStorage whose hub runs on this thread, if any: a write made from inside a
// callback must not wait for the hub to deliver it (it would wait for itself).
extern thread_local const void* t_hub_of;

inline void atomicMax(std::atomic<int64_t>& a, int64_t v) {
  int64_t cur = a.load();
  while (cur < v && !a.compare_exchange_weak(cur, v)) {
  }
}

}  // namespace shepherd::storage::etcd_internal
