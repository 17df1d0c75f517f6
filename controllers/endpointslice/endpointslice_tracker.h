// The slice writes the EndpointSlice controller made that its informer has not shown yet,
// as upstream's endpointSliceTracker: a sync that planned from a cache missing its own
// last writes would create duplicate slices or undo its own updates, so it waits instead.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>

#include "client/informer.h"
#include "common/mutex.h"

namespace shepherd::controllers {

// Thread-safety: every member may be called from any thread; mu_ guards by_service_.
class EndpointSliceTracker {
 public:
  using Lookup = std::function<client::Object(const std::string& key)>;  // "ns/name"

  // After a create or update answered with resourceVersion `rv`.
  void expectWritten(const std::string& service_key, const std::string& slice_key, const std::string& rv);
  // After a delete was accepted.
  void expectDeleted(const std::string& service_key, const std::string& slice_key);
  // The informer saw `slice_key` go: nothing more will be seen of it.
  void observedDeleted(const std::string& slice_key);
  // Whether the cache (through `lookup`) still lacks one of the service's writes.
  // Expectations older than `give_up` are dropped (a missed event must not wedge a Service).
  bool stale(const std::string& service_key, const Lookup& lookup,
             std::chrono::steady_clock::duration give_up = std::chrono::seconds(30));
  void forget(const std::string& service_key);

 private:
  struct Expectation {
    std::string rv;  // empty: expected deleted
    std::chrono::steady_clock::time_point since;
  };
  Mutex mu_;
  std::map<std::string, std::map<std::string, Expectation>> by_service_
      GUARDED_BY(mu_);  // service -> slice -> expectation
};

}  // namespace shepherd::controllers
