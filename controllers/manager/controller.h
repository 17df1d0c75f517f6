// Controller: the shape every controller of shepherd-controller-manager shares, as
// upstream's: informer events put keys into a work queue; worker threads take a key and
// sync it (level-triggered: sync looks at the current state, never at the event); a
// failed sync comes back after a per-key back-off; a sync may ask to be called again later.
#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "client/informer.h"
#include "client/workqueue.h"
#include "common/api_error.h"

namespace shepherd::controllers {

// What a sync asks for: nothing more (0), or another pass after `requeue_after`.
struct SyncResult {
  std::chrono::milliseconds requeue_after{0};
};

// Thread-safety: run() and stop() from the owning thread; sync() runs on several workers,
// never for the same key at once (the work queue guarantees it).
class Controller {
 public:
  explicit Controller(std::string name) : name_(std::move(name)) {}
  virtual ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  const std::string& name() const { return name_; }
  virtual void run(int workers);
  // Drains the queue's current work and joins the workers.
  virtual void stop();
  // One sync of `key` on the calling thread, as a worker runs it (unit tests drive
  // controllers this way, as upstream's tests call syncHandler).
  Result<SyncResult> syncNow(const std::string& key) { return sync(key); }

 protected:
  virtual Result<SyncResult> sync(const std::string& key) = 0;
  // Informer handlers that queue the key of every added, updated or deleted object
  // (callers may replace one of them).
  client::EventHandlers enqueueKeys();
  client::WorkQueue queue_{std::chrono::milliseconds(5), std::chrono::milliseconds(60 * 1000)};

 private:
  void worker();
  std::string name_;
  std::vector<std::thread> workers_;
};

}  // namespace shepherd::controllers
