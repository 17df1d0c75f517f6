// Informer: keeps a local, indexed cache of one resource in sync with the API server —
// list, then watch from the list's resourceVersion; on a dropped stream, watch again from
// the last revision seen; on 410 Expired, list again (and report what changed) — and
// calls event handlers for every change.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/client.h"
#include "common/json.h"
#include "common/mutex.h"

namespace shepherd::client {

using Object = std::shared_ptr<const json::Document>;

struct InformerOptions {
  std::string group;
  std::string version = "v1";
  std::string plural;
  std::string ns;  // "" = all namespaces
  std::string label_selector;
  std::string field_selector;
  int64_t page_size = 500;
};

struct EventHandlers {
  std::function<void(const Object& obj)> on_add;
  std::function<void(const Object& old_obj, const Object& new_obj)> on_update;
  std::function<void(const Object& obj)> on_delete;
};

// "ns/name" or "name".
std::string objectKey(const json::Value& obj);

// Thread-safety: all public methods are safe from any thread. Handlers run on the
// informer's own thread, one at a time, after the cache reflects the change.
class Informer {
 public:
  using IndexFunc = std::function<std::vector<std::string>(const json::Value& obj)>;

  Informer(Client& client, InformerOptions opts);
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void addHandlers(EventHandlers h);                     // before start()
  void addIndex(const std::string& name, IndexFunc fn);  // before start()
  void start();
  void stop();
  bool hasSynced() const { return synced_.load(); }
  bool waitForSync(int timeout_ms);

  Object get(const std::string& key) const;
  std::vector<Object> list() const;
  std::vector<Object> byIndex(const std::string& index, const std::string& value) const;
  std::string lastResourceVersion() const;
  // Counters, for tests and metrics.
  uint64_t relists() const { return relists_.load(); }
  uint64_t watchRestarts() const { return watch_restarts_.load(); }

 private:
  void run();
  bool relist();
  void watchLoop();
  void applyAdd(const Object& obj);
  void applyUpdate(const Object& obj);
  void applyDelete(const Object& obj);
  void indexInsert(const std::string& key, const json::Value& obj) REQUIRES(mu_);
  void indexRemove(const std::string& key, const json::Value& obj) REQUIRES(mu_);
  std::string listPath(const std::string& cont, const std::string& rv) const;

  Client& client_;
  InformerOptions opts_;
  std::vector<EventHandlers> handlers_;
  std::map<std::string, IndexFunc> index_funcs_;

  mutable Mutex mu_;
  std::unordered_map<std::string, Object> items_ GUARDED_BY(mu_);
  std::map<std::string, std::map<std::string, std::set<std::string>>> indexes_
      GUARDED_BY(mu_);  // index -> value -> keys
  std::string rv_ GUARDED_BY(mu_);

  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<uint64_t> relists_{0}, watch_restarts_{0};
  Mutex sync_mu_;
  std::condition_variable sync_cv_;
  std::thread thread_;
};

}  // namespace shepherd::client
