// FakeClient: an API server in memory, for unit tests of controllers, informers and the
// node agent without a process (client-go's fake clientset with its object tracker).
//
// Kept deliberately small: objects by group/resource/namespace/name, one resourceVersion
// counter, create (generateName, uid, creationTimestamp), update and patch with
// resourceVersion conflicts, the status subresource (only status changes) and
// namespaces/finalize, delete (an object with finalizers, or a pod bound to a node deleted
// with a grace period, stays with a deletionTimestamp), lists and watches (from any
// revision) with label selectors and equality field selectors. Strategic merge patches
// are applied as JSON merge patches, except that lists of objects with a `type` or `name`
// merge by it (the conditions and containers controllers patch). No defaulting, no
// validation, no admission: tests give complete objects. Every request is recorded
// (actions()) and any can be made to fail (failNext()).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "client/client.h"
#include "common/mutex.h"

namespace shepherd::client {

// Thread-safety: every method may be called from any thread; watches block in stream()
// on their own threads.
class FakeClient final : public Client {
 public:
  struct Action {
    std::string verb;  // get, list, watch, create, update, patch, delete
    std::string path;  // without the query
    std::string body;
  };

  // A request path taken apart (group, version, plural, namespace, name, subresource).
  struct Path;

  FakeClient() = default;
  ~FakeClient() override;

  Result<json::Document> get(const std::string& path, RequestOptions o = {}) override;
  Result<json::Document> post(const std::string& path, const std::string& body,
                              RequestOptions o = {}) override;
  Result<json::Document> put(const std::string& path, const std::string& body,
                             RequestOptions o = {}) override;
  Result<json::Document> patch(const std::string& path, const std::string& body,
                               const std::string& content_type, RequestOptions o = {}) override;
  Result<json::Document> del(const std::string& path, const std::string& body = "",
                             RequestOptions o = {}) override;
  Result<HttpResult> request(const std::string& method, const std::string& path, const std::string& body,
                             const std::string& content_type, RequestOptions o = {}) override;
  Status stream(const std::string& path, const std::function<bool(std::string_view line)>& on_line,
                const std::atomic<bool>* stop, int idle_timeout_s = 90) override;

  // Every request so far (watches included), in order; clearActions() forgets them.
  std::vector<Action> actions() const;
  std::vector<Action> actions(const std::string& verb) const;
  void clearActions();
  // The next request with this verb (see Action) whose path starts with `path_prefix`
  // fails with `error`.
  void failNext(const std::string& verb, const std::string& path_prefix, ApiError error);
  // The current revision (the last resourceVersion given out).
  int64_t revision() const;
  // Ends every open watch (clients see the stream close and watch again).
  void closeWatches();
  // Waits until at least `watches` watches are open and every open one has handed its
  // client every event up to the current revision (informers then show every write made
  // so far); false after `timeout`. What unit tests wait on instead of sleeping.
  bool waitForWatches(size_t watches, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Waits until `pred` holds, checking it again after every write (it is called without
  // the fake's lock, so it may make requests); false after `timeout`.
  bool waitFor(const std::function<bool()>& pred,
               std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  struct Object {
    std::string json;
    int64_t rv = 0;
  };
  struct Event {
    int64_t rv;
    std::string type;        // ADDED, MODIFIED, DELETED
    std::string collection;  // group/plural
    std::string ns, name;
    std::string json;
  };

  Result<json::Document> dispatch(const std::string& method, const std::string& path, const std::string& body,
                                  const std::string& content_type);
  Result<json::Document> list(const Path& p, const std::string& query) REQUIRES(mu_);
  Result<json::Document> create(const Path& p, const std::string& body) REQUIRES(mu_);
  Result<json::Document> write(const Path& p, json::Document obj, bool check_rv) REQUIRES(mu_);
  Result<json::Document> remove(const Path& p, const std::string& body) REQUIRES(mu_);
  // Stores `obj` (its resourceVersion set) and records the event; returns the stored form.
  json::Document store(const Path& p, const std::string& name, json::Document obj, const char* type)
      REQUIRES(mu_);
  std::optional<ApiError> takeFailure(const std::string& verb, const std::string& path) REQUIRES(mu_);
  void record(const std::string& verb, const std::string& path, const std::string& body) REQUIRES(mu_);

  mutable Mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Object> objects_ GUARDED_BY(mu_);  // "group/plural/ns/name"
  std::deque<Event> events_ GUARDED_BY(mu_);
  int64_t rv_ GUARDED_BY(mu_) = 0;
  uint64_t watch_epoch_ GUARDED_BY(mu_) = 0;                // closeWatches() bumps it
  std::map<const void*, int64_t> watches_ GUARDED_BY(mu_);  // open streams: revision handed over
  std::vector<Action> actions_ GUARDED_BY(mu_);
  struct Failure {
    std::string verb, prefix;
    ApiError error;
  };
  std::vector<Failure> failures_ GUARDED_BY(mu_);
};

}  // namespace shepherd::client
