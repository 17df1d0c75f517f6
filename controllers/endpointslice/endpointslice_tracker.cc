#include "controllers/endpointslice/endpointslice_tracker.h"

#include <charconv>

namespace shepherd::controllers {

namespace {

// resourceVersions are opaque to clients, but ours are increasing integers; when one is
// not, only equality counts.
bool atLeast(std::string_view have, std::string_view want) {
  uint64_t h = 0, w = 0;
  auto [hp, he] = std::from_chars(have.data(), have.data() + have.size(), h);
  auto [wp, we] = std::from_chars(want.data(), want.data() + want.size(), w);
  if (he != std::errc() || we != std::errc() || hp != have.data() + have.size() ||
      wp != want.data() + want.size())
    return have == want;
  return h >= w;
}

}  // namespace

void EndpointSliceTracker::expectWritten(const std::string& service_key, const std::string& slice_key,
                                         const std::string& rv) {
  MutexLock lock(mu_);
  by_service_[service_key][slice_key] = Expectation{rv, std::chrono::steady_clock::now()};
}

void EndpointSliceTracker::expectDeleted(const std::string& service_key, const std::string& slice_key) {
  MutexLock lock(mu_);
  by_service_[service_key][slice_key] = Expectation{"", std::chrono::steady_clock::now()};
}

void EndpointSliceTracker::observedDeleted(const std::string& slice_key) {
  MutexLock lock(mu_);
  for (auto it = by_service_.begin(); it != by_service_.end();) {
    it->second.erase(slice_key);
    it = it->second.empty() ? by_service_.erase(it) : std::next(it);
  }
}

bool EndpointSliceTracker::stale(const std::string& service_key, const Lookup& lookup,
                                 std::chrono::steady_clock::duration give_up) {
  MutexLock lock(mu_);
  auto it = by_service_.find(service_key);
  if (it == by_service_.end()) return false;
  auto now = std::chrono::steady_clock::now();
  for (auto e = it->second.begin(); e != it->second.end();) {
    client::Object seen = lookup(e->first);
    bool met =
        e->second.rv.empty()
            ? !seen
            : seen && atLeast(json::getStringPath(*seen, {"metadata", "resourceVersion"}), e->second.rv);
    e = (met || now - e->second.since > give_up) ? it->second.erase(e) : std::next(e);
  }
  bool pending = !it->second.empty();
  if (!pending) by_service_.erase(it);
  return pending;
}

void EndpointSliceTracker::forget(const std::string& service_key) {
  MutexLock lock(mu_);
  by_service_.erase(service_key);
}

}  // namespace shepherd::controllers
