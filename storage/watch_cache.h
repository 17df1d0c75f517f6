// WatchCache: the in-memory view of one resource that serves get, list and watch.
//
// It keeps every current object of a key prefix (decoded once, serialized once) and a
// bounded window of recent events. It follows the Storage through Storage::watch, so its
// revision is always the store's: the SQLite backend delivers each batch before it
// acknowledges the writes, so a client that got a write's response reads it back here.
// Lists can be served at any revision still inside the window (consistent pagination),
// by rolling the current state back through the window's events.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "storage/storage.h"

namespace shepherd::storage {

using StringPairs = std::vector<std::pair<std::string, std::string>>;

// One object as the API serves it.
struct CachedObject {
  std::string key;
  int64_t mod_revision = 0;
  int64_t create_revision = 0;
  std::string ns;
  std::string name;
  StringPairs labels;  // sorted by key
  StringPairs fields;  // field-selector attributes, e.g. {"spec.nodeName", "n1"}
  std::string json;    // full object JSON with metadata.resourceVersion set

  const std::string* label(std::string_view k) const;
  const std::string* field(std::string_view k) const;
};
using ObjectPtr = std::shared_ptr<const CachedObject>;

// Turns a stored value into a CachedObject whose resourceVersion is `revision`. Returns
// nullptr for a value that cannot be decoded (it is then skipped and logged).
using Decoder = std::function<ObjectPtr(const std::string& key, const std::string& value, int64_t revision,
                                        int64_t create_revision)>;

using Predicate = std::function<bool(const CachedObject&)>;

enum class WatchEventType { Added, Modified, Deleted, Bookmark, Error };
const char* watchEventTypeName(WatchEventType t);

// Receives a watch's events. Called with the cache's lock held, in revision order; must
// not block. Returning false ends the watch (the sink is then released, never while the
// cache's lock is held, so a sink's destructor may stop its own CacheWatch).
class WatchSink {
 public:
  virtual ~WatchSink() = default;
  virtual bool deliver(WatchEventType type, const ObjectPtr& object) = 0;
  virtual bool bookmark(int64_t revision) = 0;
};

struct CacheListRequest {
  std::string prefix;       // e.g. /registry/pods/ or /registry/pods/default/
  std::string start_after;  // exclusive; from a continue token
  int64_t limit = 0;        // 0 = all
  int64_t revision = 0;     // 0 = current; otherwise exactly this revision
  Predicate predicate;      // empty = everything
  // Set when every match must have field `index_field` equal to `index_value` (an
  // equality term of the selector): an indexed field is then read from its index instead
  // of scanning the prefix. The predicate is still applied.
  std::string index_field;
  std::string index_value;
};

struct CacheListResponse {
  std::vector<ObjectPtr> items;
  int64_t revision = 0;
  bool more = false;      // another page exists
  int64_t remaining = 0;  // matching items after this page (exact)
  std::string last_key;   // continue from here
};

struct CacheWatchRequest {
  std::string prefix;
  // 0: start with synthetic ADDED events for the current state, then follow.
  // N: every change after revision N (410 Expired if N has left the window).
  int64_t after_revision = 0;
  bool send_initial_state = false;
  Predicate predicate;
};

class WatchCache;
// Ends the watch when destroyed (or when `stop()` is called).
class CacheWatch {
 public:
  CacheWatch(WatchCache* cache, uint64_t id) : cache_(cache), id_(id) {}
  ~CacheWatch() { stop(); }
  void stop();

 private:
  WatchCache* cache_;
  uint64_t id_;
};

enum class CacheError { None, Expired, TooLarge, Unavailable };

// Thread-safety: all public methods are safe from any thread. Readers share a lock;
// applying a storage batch and registering watches take it exclusively.
class WatchCache {
 public:
  // `indexed_fields`: field-selector attributes kept in an index (value -> keys), as
  // upstream's watch cache indexes pods by spec.nodeName.
  WatchCache(Storage& storage, std::string prefix, Decoder decoder, size_t window = 10000,
             std::vector<std::string> indexed_fields = {});
  ~WatchCache();
  WatchCache(const WatchCache&) = delete;
  WatchCache& operator=(const WatchCache&) = delete;

  // Loads the current state and starts following the store. Call once, before use.
  Outcome<int64_t> start();

  ObjectPtr get(const std::string& key) const;
  int64_t revision() const;
  // Waits until the cache has reached `revision` (at most `timeout`); false if it has not.
  bool waitForRevision(int64_t revision, std::chrono::milliseconds timeout) const;
  // How many changes to this cache's objects have been applied (grows by one per event);
  // lets readers that derive state from the objects rebuild only when it moved.
  uint64_t changeCount() const { return changes_.load(std::memory_order_acquire); }
  int64_t oldestRevision() const;
  size_t size() const;

  // Lists; fails with Expired when an old revision has left the window.
  CacheError list(const CacheListRequest& req, CacheListResponse& out) const;

  CacheError watch(const CacheWatchRequest& req, std::shared_ptr<WatchSink> sink,
                   std::unique_ptr<CacheWatch>& handle);

  // Sends a BOOKMARK at the current revision to every watch whose sink wants it
  // (called periodically by the server).
  void sendBookmarks();

 private:
  friend class CacheWatch;
  struct Event {
    int64_t revision;
    ObjectPtr object;  // after (for deletes: last state re-stamped with the delete's RV)
    ObjectPtr prev;    // before; nullptr for creates
    bool is_delete;
    mutable ObjectPtr prev_restamped;  // prev content with RV = revision, made on demand
  };
  struct Watcher {
    uint64_t id;
    std::string prefix;
    Predicate predicate;
    std::shared_ptr<WatchSink> sink;
  };

  void onBatch(const std::vector<storage::Event>& events, int64_t revision);
  // Delivers one event to one watcher; false when the watcher must go.
  bool deliverTo(const Watcher& w, const Event& e) const;
  ObjectPtr restamp(const ObjectPtr& obj, int64_t revision) const;
  void indexAdd(const CachedObject& obj) REQUIRES(mu_);
  void indexRemove(const CachedObject& obj) REQUIRES(mu_);
  void removeWatcher(uint64_t id);

  Storage& storage_;
  const std::string prefix_;
  const Decoder decoder_;
  const size_t window_capacity_;

  mutable SharedMutex mu_;
  std::map<std::string, ObjectPtr> objects_ GUARDED_BY(mu_);
  // Indexed field -> value -> keys of the current objects with that value (sorted, so an
  // indexed list pages in key order like a scan).
  std::map<std::string, std::unordered_map<std::string, std::set<std::string>>> field_index_ GUARDED_BY(mu_);
  std::deque<Event> window_ GUARDED_BY(mu_);
  int64_t revision_ GUARDED_BY(mu_) = 0;
  // revision_, published for waitForRevision without taking mu_ (rev_mu_ is taken under
  // mu_ by the writer, never the other way round).
  std::atomic<int64_t> published_revision_{0};
  mutable Mutex rev_mu_;
  mutable std::condition_variable rev_cv_;
  std::atomic<uint64_t> changes_{0};
  int64_t oldest_ GUARDED_BY(mu_) = 0;  // a watch/list may ask for any revision >= oldest_
  std::vector<Watcher> watchers_ GUARDED_BY(mu_);
  uint64_t next_watcher_id_ GUARDED_BY(mu_) = 1;
  std::unique_ptr<WatchHandle> storage_watch_;
};

}  // namespace shepherd::storage
