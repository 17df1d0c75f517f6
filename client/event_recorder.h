// EventRecorder: the one way Shepherd's components post Events about objects, off the
// caller's path, as client-go's event broadcaster: event() only queues; one thread posts;
// when the API server falls far behind (max_queued) new events are dropped, and counted,
// rather than slowing the component down. Core/v1 Events (the controllers, kubelet-lite)
// or events.k8s.io/v1 (the scheduler, as upstream's new recorder); with `series`, an
// event repeating one already posted (same object, reason and message) grows that event's
// count (events.k8s.io: its series) instead of making a new one.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <string>
#include <thread>
#include <unordered_map>

#include "client/client.h"
#include "common/mutex.h"

namespace shepherd::client {

struct EventRecorderOptions {
  std::string component;   // source.component and reportingComponent (core/v1); reportingController
  std::string host;        // source.host (core/v1; may be empty)
  std::string instance;    // reportingInstance
  bool events_v1 = false;  // events.k8s.io/v1 instead of core/v1
  bool series = false;     // repeats grow the first event
  size_t max_queued = 1000;
};

// Thread-safety: event() from any thread; stop() once.
class EventRecorder {
 public:
  EventRecorder(Client& client, EventRecorderOptions options);
  EventRecorder(Client& client, std::string component, std::string host = "", std::string instance = "");
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // An event about `obj` (of `api_version`/`kind`); `type` is Normal or Warning; `action`
  // is events.k8s.io's (what was done: Scheduling, Binding).
  void event(const json::Value& obj, const std::string& api_version, const std::string& kind,
             const std::string& type, const std::string& reason, const std::string& message,
             const std::string& action = "");
  // Events dropped because the queue was full.
  uint64_t dropped() const { return dropped_.load(); }
  // Posts what is queued, then ends the poster.
  void stop();

 private:
  struct Pending {
    std::string ns;
    std::string series_key;  // "" without series
    std::string json;
  };
  void run();
  void post(Pending p);

  Client& client_;
  const EventRecorderOptions opts_;
  Mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> dropped_{0};
  // Series: key -> (event name, count); poster thread only.
  std::unordered_map<std::string, std::pair<std::string, int>> series_;
  std::thread thread_;
};

}  // namespace shepherd::client
