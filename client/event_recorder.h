// EventRecorder: posts core/v1 Events about objects, off the caller's path, as client-go's
// event broadcaster: event() only queues; one thread posts; when the API server falls far
// behind (1,000 queued) new events are dropped rather than slowing the component down.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "client/rest_client.h"

namespace shepherd::client {

// Thread-safety: event() from any thread; stop() once.
class EventRecorder {
 public:
  // `component` is source.component and reportingComponent; `host` source.host (may be
  // empty); `instance` reportingInstance.
  EventRecorder(RestClient& client, std::string component, std::string host = "", std::string instance = "");
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // An event about `obj` (of `api_version`/`kind`); `type` is Normal or Warning.
  void event(const json::Value& obj, const std::string& api_version, const std::string& kind,
             const std::string& type, const std::string& reason, const std::string& message);
  // Posts what is queued, then ends the poster.
  void stop();

 private:
  void run();

  RestClient& client_;
  std::string component_, host_, instance_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, std::string>> queue_;  // namespace, Event JSON
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace shepherd::client
