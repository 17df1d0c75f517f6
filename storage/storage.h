// The storage interface: a key-value store with etcd's revision semantics, so the
// embedded SQLite backend and a later etcd v3 backend are interchangeable.
//
// Every successful write gets the next global revision (strictly increasing, shared by
// all keys). A key remembers the revision that created it and the one that last changed
// it; update and delete compare the caller's expected modification revision (CAS).
// Lists read one consistent revision across pages; watches deliver every change after a
// revision, in revision order, without gaps.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace shepherd::storage {

enum class Code {
  Ok,
  NotFound,     // the key does not exist (get, update, delete)
  Exists,       // create of a key that exists
  Conflict,     // expected modification revision differs from the current one
  Compacted,    // the requested revision is older than the oldest one kept
  Unavailable,  // the backend is shutting down or cannot be reached
  Internal,     // I/O or database failure; nothing was written
};

const char* codeName(Code c);

template <class T>
struct [[nodiscard]] Outcome {
  Code code = Code::Ok;
  std::string message;
  T value{};
  // For Conflict: the key's current modification revision (0 if it no longer exists).
  int64_t current_revision = 0;

  bool ok() const { return code == Code::Ok; }
  static Outcome failure(Code c, std::string msg, int64_t current = 0) {
    Outcome o;
    o.code = c;
    o.message = std::move(msg);
    o.current_revision = current;
    return o;
  }
};

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
};

struct Event {
  enum class Type { Put, Delete };
  Type type = Type::Put;
  // Put: the new value. Delete: key, mod_revision = the deletion's revision, and
  // create_revision of the deleted incarnation; value empty.
  KeyValue kv;
  // Delete: the value just before deletion (mod_revision = its last change).
  std::optional<KeyValue> prev;
  bool isCreate() const { return type == Type::Put && kv.create_revision == kv.mod_revision; }
};

struct ListRequest {
  std::string prefix;       // keys starting with prefix
  std::string start_after;  // exclusive lower bound within prefix ("" = from the start)
  int64_t limit = 0;        // 0 = no limit
  int64_t revision = 0;     // 0 = current; otherwise read exactly at this revision
};

struct ListResponse {
  std::vector<KeyValue> kvs;
  int64_t revision = 0;   // the revision the page was read at
  int64_t remaining = 0;  // keys after this page at that revision
};

// Called with each committed batch of events matching the watch's prefix (possibly
// empty) and the revision the store has reached after the batch. Called from the
// backend's own thread, in revision order, one call at a time; must not block.
using WatchCallback = std::function<void(const std::vector<Event>& events, int64_t revision)>;

class WatchHandle {
 public:
  virtual ~WatchHandle() = default;  // stops delivery; no callback runs after it returns
};

// Thread-safety: every method may be called from any thread concurrently.
class Storage {
 public:
  virtual ~Storage() = default;

  // Returns the new revision.
  virtual Outcome<int64_t> create(const std::string& key, std::string value) = 0;
  // expected_mod_revision must equal the key's current mod_revision; 0 = unconditional.
  virtual Outcome<int64_t> update(const std::string& key, std::string value,
                                  int64_t expected_mod_revision) = 0;
  // Returns the deletion's revision and the deleted value.
  virtual Outcome<KeyValue> remove(const std::string& key, int64_t expected_mod_revision) = 0;
  virtual Outcome<KeyValue> get(const std::string& key) = 0;
  virtual Outcome<ListResponse> list(const ListRequest& req) = 0;

  // The newest revision whose writes are durable and have been delivered to watches.
  virtual int64_t currentRevision() = 0;
  // The newest revision committed by any client of the backend, read so that every write
  // acknowledged before the call is at or below it (for etcd, a linearizable read: other
  // API servers write too). Watches reach it soon after; consistent reads wait for that.
  virtual Outcome<int64_t> consistentRevision() = 0;
  // The oldest revision a list or watch may still ask for.
  virtual int64_t compactedRevision() = 0;

  // Delivers every change with revision > after_revision under prefix: first the history
  // still kept, then live batches. Fails with Compacted if that history is gone.
  virtual Outcome<std::unique_ptr<WatchHandle>> watch(const std::string& prefix, int64_t after_revision,
                                                      WatchCallback callback) = 0;

  // Discards history at or below revision (the latest value of each live key is kept).
  virtual Outcome<int64_t> compact(int64_t revision) = 0;

  // Finishes queued writes, then refuses new ones with Unavailable.
  virtual void shutdown() = 0;
};

// The smallest string greater than every string starting with prefix ("" if none).
std::string prefixEnd(const std::string& prefix);

}  // namespace shepherd::storage
