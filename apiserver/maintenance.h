// The API server's periodic work on one thread: watch timeouts (every second), bookmarks
// (10 s), the API server lease (10 s), expired events, and compaction of old revisions
// (taking turns with the other API servers on one etcd, as kube-apiserver).
#pragma once

#include <chrono>
#include <condition_variable>
#include <thread>

#include "common/mutex.h"
#include "handlers/api_handler.h"
#include "registry/apiserver_leases.h"
#include "registry/registry.h"
#include "storage/storage.h"

namespace shepherd::apiserver {

// Thread-safety: made and destroyed by one thread; the work runs on its own thread. mu_
// guards stop_.
class Maintenance {
 public:
  Maintenance(registry::Registry& reg, handlers::ApiHandler& api, storage::Storage& store,
              registry::ApiServerLeases& leases, int compact_interval_s, std::chrono::seconds event_ttl);
  ~Maintenance();
  Maintenance(const Maintenance&) = delete;
  Maintenance& operator=(const Maintenance&) = delete;

 private:
  void run();
  registry::Registry& reg_;
  handlers::ApiHandler& api_;
  storage::Storage& store_;
  registry::ApiServerLeases& leases_;
  int compact_interval_;
  std::chrono::seconds event_ttl_;
  Mutex mu_;
  std::condition_variable cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace shepherd::apiserver
