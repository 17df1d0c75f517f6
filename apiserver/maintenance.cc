#include "apiserver/maintenance.h"

#include "common/log.h"
#include "storage/compactor.h"

namespace shepherd::apiserver {

Maintenance::Maintenance(registry::Registry& reg, handlers::ApiHandler& api, storage::Storage& store,
                         registry::ApiServerLeases& leases, int compact_interval_s,
                         std::chrono::seconds event_ttl)
    : reg_(reg),
      api_(api),
      store_(store),
      leases_(leases),
      compact_interval_(compact_interval_s),
      event_ttl_(event_ttl) {
  thread_ = std::thread([this] { run(); });
}
Maintenance::~Maintenance() {
  {
    MutexLock g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Maintenance::run() {
  auto lastBookmark = std::chrono::steady_clock::now();
  auto lastCompact = std::chrono::steady_clock::now();
  auto lastEventSweep = std::chrono::steady_clock::now();
  auto lastLease = std::chrono::steady_clock::now();
  storage::Compactor compactor(store_);
  if (compact_interval_ > 0) (void)compactor.round();  // notes the revision to compact to next
  UniqueMutexLock lk(mu_);
  while (!lk.waitFor(cv_, std::chrono::seconds(1), [&]() REQUIRES(mu_) { return stop_; })) {
    lk.unlock();
    api_.watches().expire();
    auto now = std::chrono::steady_clock::now();
    // Lease renewal at two thirds of its 15 s lifetime.
    if (now - lastLease >= std::chrono::seconds(10)) {
      if (auto live = leases_.reconcile(); !live) LOG_WARN("API server lease: " << live.error().message);
      lastLease = now;
    }
    if (now - lastBookmark >= std::chrono::seconds(10)) {
      reg_.sendBookmarks();
      lastBookmark = now;
    }
    if (event_ttl_.count() > 0 &&
        now - lastEventSweep >= std::min<std::chrono::seconds>(event_ttl_, std::chrono::seconds(60))) {
      size_t n = reg_.expireEvents(event_ttl_);
      if (n) LOG_INFO("expired " << n << " events older than " << event_ttl_.count() << "s");
      lastEventSweep = now;
    }
    // Like kube-apiserver: compact to the revision seen one interval ago (taking turns
    // with the other API servers on the same etcd).
    if (compact_interval_ > 0 && now - lastCompact >= std::chrono::seconds(compact_interval_)) {
      auto r = compactor.round();
      if (!r.ok()) LOG_WARN(r.message);
      lastCompact = now;
    }
    lk.lock();
  }
}

}  // namespace shepherd::apiserver
