// SQLite backend of Storage: the embedded, durable default.
//
// The database is an append-only revision log (one row per write, etcd-style MVCC), so a
// list can read any revision that has not been compacted and a watch can replay history.
// One commit thread owns the write connection and group-commits every queued write in a
// single transaction (WAL, synchronous=FULL: the WAL is fsynced before any caller of that
// batch returns), then delivers the batch to watches before publishing its revision.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <thread>

#include "common/mutex.h"
#include "storage/storage.h"

namespace shepherd::storage {

struct SqliteOptions {
  std::string path;         // database file; created if missing
  size_t max_batch = 2048;  // writes per group commit at most
  bool fsync = true;        // synchronous=FULL; false only for throwaway test stores
};

// Thread-safety: all public methods are safe to call concurrently from any thread.
class SqliteStorage final : public Storage {
 public:
  static Outcome<std::unique_ptr<SqliteStorage>> open(const SqliteOptions& opts);
  ~SqliteStorage() override;

  Outcome<int64_t> create(const std::string& key, std::string value) override;
  Outcome<int64_t> update(const std::string& key, std::string value, int64_t expected_mod_revision) override;
  Outcome<KeyValue> remove(const std::string& key, int64_t expected_mod_revision) override;
  Outcome<KeyValue> get(const std::string& key) override;
  Outcome<ListResponse> list(const ListRequest& req) override;
  int64_t currentRevision() override { return published_.load(std::memory_order_acquire); }
  // Every write goes through this process, and is delivered before it is acknowledged.
  Outcome<int64_t> consistentRevision() override {
    Outcome<int64_t> out;
    out.value = currentRevision();
    return out;
  }
  int64_t compactedRevision() override { return compacted_.load(std::memory_order_acquire); }
  Outcome<std::unique_ptr<WatchHandle>> watch(const std::string& prefix, int64_t after_revision,
                                              WatchCallback callback) override;
  Outcome<int64_t> compact(int64_t revision) override;
  void shutdown() override;

  // Writes committed since open, and how many group commits carried them (for metrics).
  uint64_t writesCommitted() const { return writes_committed_.load(); }
  uint64_t batchesCommitted() const { return batches_committed_.load(); }

 private:
  struct Op {
    enum class Kind { Create, Update, Delete, Compact } kind;
    std::string key;
    std::string value;
    int64_t expected = 0;
    Outcome<KeyValue> result;  // filled by the commit thread
    std::promise<Outcome<KeyValue>> done;
  };
  struct Watcher {
    uint64_t id;
    std::string prefix;
    WatchCallback callback;
  };
  class Handle;

  explicit SqliteStorage(SqliteOptions opts);
  // Runs before the commit thread starts: nothing else touches the state yet.
  bool init(std::string& error) NO_THREAD_SAFETY_ANALYSIS;
  Outcome<KeyValue> submit(std::unique_ptr<Op> op);
  void commitLoop();
  void applyBatch(std::vector<std::unique_ptr<Op>>& batch) EXCLUDES(commit_mu_);
  void apply(Op& op, int64_t& rev, std::vector<Event>& events) REQUIRES(commit_mu_);
  void applyCompact(Op& op) REQUIRES(commit_mu_);
  void unwatch(uint64_t id);

  sqlite3* acquireReader();
  void releaseReader(sqlite3* db);

  SqliteOptions opts_;
  sqlite3* writer_ = nullptr;
  sqlite3_stmt* stmt_latest_ = nullptr;
  sqlite3_stmt* stmt_insert_ = nullptr;

  Mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::unique_ptr<Op>> queue_ GUARDED_BY(queue_mu_);
  bool stopping_ GUARDED_BY(queue_mu_) = false;
  std::thread committer_;

  // Held while a batch is applied and delivered, and while a watch replays history and
  // joins, so no batch can fall between a watch's replay and its live delivery.
  Mutex commit_mu_;
  std::vector<Watcher> watchers_ GUARDED_BY(commit_mu_);
  uint64_t next_watcher_id_ GUARDED_BY(commit_mu_) = 1;
  int64_t revision_ GUARDED_BY(commit_mu_) = 0;  // commit thread's view

  std::atomic<int64_t> published_{0};
  std::atomic<int64_t> compacted_{0};
  std::atomic<uint64_t> writes_committed_{0};
  std::atomic<uint64_t> batches_committed_{0};

  Mutex readers_mu_;
  std::vector<sqlite3*> readers_ GUARDED_BY(readers_mu_);
  std::vector<sqlite3*> all_readers_ GUARDED_BY(readers_mu_);
};

}  // namespace shepherd::storage
