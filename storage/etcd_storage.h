// etcd v3 backend of Storage, spoken through etcd's JSON gateway (/v3/kv/*, /v3/watch) with
// libcurl, so the API server can run against an external etcd cluster.
//
// Revisions are etcd's own: every successful write is one etcd txn and its header revision
// is the Storage revision. Writes are compare-and-swap txns on mod_revision/create_revision
// (as kube-apiserver does), with a failure branch that reads the key so a failed write
// reports the key's current revision. Lists are ranges pinned to a revision; watches are
// one streaming POST /v3/watch per watch, run on its own thread.
//
// Read-your-writes: a write returns only after every live watch of this EtcdStorage whose
// prefix contains the written key has delivered the write's revision (or the request
// timeout passed), so a WatchCache fed by this backend already holds a write when the
// writer gets its answer, as with SqliteStorage. Watches whose prefix does not contain the
// key are not waited for: the gateway stream cannot carry etcd's progress_request, so they
// move forward only on their own events and etcd's periodic progress notifications
// (--experimental-watch-progress-notify-interval). See docs/research/etcd-storage-draft-notes.md.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "storage/storage.h"

namespace shepherd::storage {

namespace etcd_internal {
class Transport;
struct Reply;
struct WatchState;
}  // namespace etcd_internal

struct EtcdOptions {
  // Client URLs ("http://host:port"); a request that cannot connect tries the next one.
  std::vector<std::string> endpoints{"http://127.0.0.1:2379"};
  // An extra namespace put in front of every key on the wire and removed from every key
  // read back. Callers already pass full keys ("/registry/pods/ns/name", i.e. including
  // the API server's --etcd-prefix), so the default is none; set it to share one etcd
  // between several clusters (e.g. "/cluster-a" stores "/cluster-a/registry/...").
  std::string key_prefix;
  // Bound on every unary request, and on how long a write waits for watches to deliver it.
  int request_timeout_ms = 10000;
  // TLS for https endpoints: handed to libcurl as is (not exercised by the tests yet).
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

// Thread-safety: all public methods may be called concurrently from any thread. Watch
// callbacks run on the watch's own thread; a write issued from inside a watch callback
// does not wait for that same watch (it would wait for itself). Every WatchHandle must be
// destroyed before the EtcdStorage that made it (as with SqliteStorage).
class EtcdStorage final : public Storage {
 public:
  // Checks that an endpoint answers (Unavailable otherwise).
  static Outcome<std::unique_ptr<EtcdStorage>> open(const EtcdOptions& opts);
  ~EtcdStorage() override;

  Outcome<int64_t> create(const std::string& key, std::string value) override;
  Outcome<int64_t> update(const std::string& key, std::string value, int64_t expected_mod_revision) override;
  Outcome<KeyValue> remove(const std::string& key, int64_t expected_mod_revision) override;
  Outcome<KeyValue> get(const std::string& key) override;
  Outcome<ListResponse> list(const ListRequest& req) override;
  // The highest revision any watch has delivered; with no live watch, etcd's current one.
  int64_t currentRevision() override;
  // What this process knows: its own compactions and the compactions etcd reported.
  int64_t compactedRevision() override { return compacted_.load(std::memory_order_acquire); }
  Outcome<std::unique_ptr<WatchHandle>> watch(const std::string& prefix, int64_t after_revision,
                                              WatchCallback callback) override;
  Outcome<int64_t> compact(int64_t revision) override;
  // Waits for writes in flight, then refuses new writes (and compactions) with
  // Unavailable. Reads and watches keep working.
  void shutdown() override;

 private:
  class Handle;
  class Stream;
  class WriteScope;
  using WatchPtr = std::shared_ptr<etcd_internal::WatchState>;
  enum class StreamEnd { Stopped, Broken, Compacted, Canceled, Failed };

  explicit EtcdStorage(EtcdOptions opts);

  std::string wireKey(const std::string& key) const { return opts_.key_prefix + key; }
  // [key, range_end) on the wire for the keys under prefix that sort after start_after.
  void wireRange(const std::string& prefix, const std::string& start_after, std::string& key,
                 std::string& range_end) const;
  // etcd's current revision, from a one-key range.
  bool fetchRevision(int64_t& revision, etcd_internal::Reply& reply);
  void raiseCompacted(int64_t revision);
  // Blocks until every live watch whose prefix holds key has delivered revision.
  void awaitDelivery(const std::string& key, int64_t revision);

  void watchLoop(const WatchPtr& w);
  StreamEnd runStream(etcd_internal::WatchState& w, const std::string& endpoint, bool& created,
                      std::string& message);
  void markCreated(etcd_internal::WatchState& w);
  void markDelivered(etcd_internal::WatchState& w, int64_t revision);
  void markEnded(etcd_internal::WatchState& w, Code code, const std::string& message);
  void stopWatch(const WatchPtr& w);

  EtcdOptions opts_;
  std::unique_ptr<etcd_internal::Transport> transport_;

  // Shutdown: writes in flight are counted so shutdown() can wait for them.
  std::mutex write_mu_;
  std::condition_variable write_cv_;
  bool stopping_ = false;
  int writes_in_flight_ = 0;

  // Watches and their delivery progress; wcv_ is notified on every delivery and every
  // change of a watch's phase (writers waiting for read-your-writes, watch() waiting for
  // etcd's confirmation, the destructor waiting for watch threads to finish).
  std::mutex wmu_;
  std::condition_variable wcv_;
  std::vector<WatchPtr> watches_;
  int watch_threads_ = 0;

  std::atomic<int64_t> observed_{0};  // highest revision delivered or fetched
  std::atomic<int64_t> compacted_{0};
};

}  // namespace shepherd::storage
