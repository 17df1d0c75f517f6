// Empties a namespace that is being deleted, as upstream's namespaced resources deleter:
// discovers every namespaced resource the API serves, deletes pods first and waits for
// them to go (their containers stop with their grace period), then deletes every other
// resource's collection, and reports what remains (counts, finalizers, failures) for the
// namespace's conditions.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "client/client.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/mutex.h"

namespace shepherd::controllers {

struct NamespacedResource {
  std::string group, version, resource;
  bool deletecollection = false;
  bool list = false;
};

// The outcome of one pass over a namespace's content.
struct ContentDeletionReport {
  std::vector<std::string> discovery_failures;  // "group/version: message"
  std::vector<std::string> deletion_failures;   // one message per resource that failed
  std::map<std::string, int> remaining;         // qualified resource -> objects left
  std::map<std::string, int> finalizers;        // finalizer -> objects still carrying it
  int64_t estimate_seconds = 0;                 // how long until the rest should be gone
  bool empty() const { return remaining.empty() && deletion_failures.empty() && discovery_failures.empty(); }
};

// The namespace's status.conditions for a report, as upstream words them; a condition
// keeps its lastTransitionTime while its status does not change.
json::Value namespaceConditions(const ContentDeletionReport& r, const json::Value* old_conditions,
                                const std::string& now, json::Allocator& a);

// Thread-safety: deleteAll() may run for several namespaces at once; mu_ guards the
// discovery cache (cached_, cached_at_).
class NamespacedContentDeleter {
 public:
  explicit NamespacedContentDeleter(client::Client& c) : client_(c) {}
  ContentDeletionReport deleteAll(const std::string& ns, clock::TimePoint deleted_at);

 private:
  std::vector<NamespacedResource> discover(std::vector<std::string>& failures);
  void deleteResource(const NamespacedResource& r, const std::string& ns, clock::TimePoint deleted_at,
                      ContentDeletionReport& report);

  client::Client& client_;
  Mutex mu_;
  std::vector<NamespacedResource> cached_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point cached_at_ GUARDED_BY(mu_){};
};

}  // namespace shepherd::controllers
