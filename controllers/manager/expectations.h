// ControllerExpectations, as upstream's: after a controller asks for N creations and some
// deletions of a key's pods it does not act on that key again until its informer has seen
// them (or five minutes have passed), so a cache that is behind never causes extra pods.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>

#include "common/clock.h"
#include "common/mutex.h"

namespace shepherd::controllers {

// Thread-safety: every method may be called from any thread; mu_ guards entries_.
class Expectations {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  explicit Expectations(std::chrono::steady_clock::duration ttl = std::chrono::minutes(5),
                        const clock::Clock& clock = clock::realClock())
      : ttl_(ttl), clock_(clock) {}

  bool satisfied(const std::string& key);
  void expectCreations(const std::string& key, int n);
  void expectDeletions(const std::string& key, const std::set<std::string>& pod_keys);
  void creationObserved(const std::string& key);
  // A pod deletion seen (or a deletion request that failed): counts once per pod key.
  void deletionObserved(const std::string& key, const std::string& pod_key);
  void remove(const std::string& key);

 private:
  struct Entry {
    int adds = 0;
    std::set<std::string> deletes;
    TimePoint at;
  };
  std::chrono::steady_clock::duration ttl_;
  const clock::Clock& clock_;
  Mutex mu_;
  std::map<std::string, Entry> entries_ GUARDED_BY(mu_);
};

}  // namespace shepherd::controllers
