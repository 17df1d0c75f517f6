// PreparedObjects: decoded forms of values that writers are about to store.
//
// The watch cache decodes every stored value on the storage's single delivery thread
// (SQLite's commit thread), which made that thread the serial bottleneck of writes. A
// writer already holds the value, so it decodes it on its own (parallel) thread first,
// with the resourceVersion left open, and parks the result here; the cache's decoder then
// only finds it, checks it is for the very same bytes, and writes the revision in.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "common/mutex.h"
#include "storage/watch_cache.h"

namespace shepherd::registry {

// A decoded object whose json has an empty slot at rv_offset for the resourceVersion's
// digits (inside the quotes of metadata.resourceVersion).
struct ObjectTemplate {
  std::shared_ptr<const storage::CachedObject> object;
  size_t rv_offset = 0;
};

class PreparedObjects {
 public:
  // Withdraws its entry (if the decoder has not taken it) when destroyed.
  class Ticket {
   public:
    Ticket() = default;
    Ticket(PreparedObjects* owner, uint64_t id) : owner_(owner), id_(id) {}
    Ticket(Ticket&& o) noexcept : owner_(o.owner_), id_(o.id_) { o.owner_ = nullptr; }
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket() {
      if (owner_) owner_->withdraw(id_);
    }

   private:
    PreparedObjects* owner_ = nullptr;
    uint64_t id_ = 0;
  };

  // `value` must stay alive and unchanged until the ticket is destroyed.
  Ticket add(const std::string& key, const std::string* value, ObjectTemplate prepared);

  // The object a writer prepared for exactly (key, value), stamped with the revisions;
  // nullptr if none.
  storage::ObjectPtr take(const std::string& key, const std::string& value, int64_t revision,
                          int64_t create_revision);

 private:
  struct Entry {
    uint64_t id;
    const std::string* value;
    ObjectTemplate prepared;
  };
  void withdraw(uint64_t id);

  Mutex mu_;
  std::unordered_multimap<std::string, Entry> pending_ GUARDED_BY(mu_);  // by key
  std::unordered_map<uint64_t, std::string> keys_ GUARDED_BY(mu_);       // id -> key, for withdraw
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
};

// Fills in a template's revision: the cached object as if decoded at that revision.
storage::ObjectPtr stampTemplate(const ObjectTemplate& t, int64_t revision, int64_t create_revision);

}  // namespace shepherd::registry
