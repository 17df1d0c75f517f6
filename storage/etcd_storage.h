// etcd v3 backend of Storage, spoken through etcd's JSON gateway (/v3/kv/*, /v3/watch) with
// libcurl, so the API server can run against an external etcd cluster.
//
// Revisions are etcd's own: every successful write is one etcd txn and its header revision
// is the Storage revision. Writes are compare-and-swap txns on mod_revision/create_revision
// (as kube-apiserver does), with a failure branch that reads the key so a failed write
// reports the key's current revision. Lists are ranges pinned to a revision.
//
// All watches of one EtcdStorage share one etcd watch stream over the whole key space (the
// hub): each batch etcd sends is passed to every watch, filtered to its prefix and possibly
// empty, so every watch moves to every revision as with SqliteStorage. A new watch whose
// start lies within the hub's recent buffer is replayed from it; an older start makes the
// hub stream again from there (watches skip what they already have).
//
// Read-your-writes: a write returns only after the hub has passed the write's revision to
// every watch (or the request timeout passed), so a WatchCache fed by this backend already
// holds a write when the writer gets its answer, as with SqliteStorage.
//
// Files: etcd_storage.cc (writes, reads, compaction), etcd_transport.{h,cc} (gateway
// calls), etcd_codec.{h,cc} (etcd JSON <-> storage types), etcd_watch_hub.{h,cc} (the hub).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "storage/storage.h"

namespace shepherd::storage {

namespace etcd_internal {
class Transport;
struct Reply;
struct WatchState;
struct Subscriber;
struct Batch;
}  // namespace etcd_internal

struct EtcdOptions {
  // Client URLs ("http://host:port"); a request that cannot connect tries the next one.
  std::vector<std::string> endpoints{"http://127.0.0.1:2379"};
  // Every key the caller passes starts with `root`; on the wire `root` is replaced by
  // `key_prefix`. The API server passes keys under "/registry" and sets key_prefix to its
  // --etcd-prefix, so with the default prefix the wire keys are the caller's (as upstream's
  // layout), and "--etcd-prefix=/cluster-a" stores "/cluster-a/pods/...". With an empty
  // root, key_prefix is simply put in front of every key.
  std::string root;
  std::string key_prefix;
  // Bound on every unary request, and on how long a write waits for watches to deliver it.
  int request_timeout_ms = 10000;
  // Events kept for watches that start at a past revision (bytes of keys and values).
  size_t watch_buffer_bytes = 32u << 20;
  // TLS for https endpoints (CA, client certificate and key), handed to libcurl.
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

// Thread-safety: all public methods may be called concurrently from any thread. Watch
// callbacks run one at a time on the hub's thread; a write issued from inside a watch
// callback does not wait for delivery (it would wait for itself). Every WatchHandle must
// be destroyed before the EtcdStorage that made it (as with SqliteStorage).
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
  // etcd's revision now, from a linearizable range (one round trip).
  Outcome<int64_t> consistentRevision() override;
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
  using StreamPtr = std::shared_ptr<etcd_internal::WatchState>;
  using SubPtr = std::shared_ptr<etcd_internal::Subscriber>;
  enum class StreamEnd { Stopped, Broken, Compacted, Canceled, Failed, Rewind };

  explicit EtcdStorage(EtcdOptions opts);

  // An exact key on the wire; a key read back in the caller's key space ("" if outside).
  std::string wireKey(const std::string& key) const;
  bool localKey(const std::string& wire, std::string& key) const;
  // The wire prefix of every key under prefix (also when prefix is shorter than root).
  std::string wirePrefix(const std::string& prefix) const;
  // [key, range_end) on the wire for the keys under prefix that sort after start_after.
  void wireRange(const std::string& prefix, const std::string& start_after, std::string& key,
                 std::string& range_end) const;
  // etcd's current revision, from a one-key range.
  bool fetchRevision(int64_t& revision, etcd_internal::Reply& reply);
  void raiseCompacted(int64_t revision);
  // Blocks until the hub has passed revision to every watch (read-your-writes).
  void awaitDelivery(int64_t revision);

  // The hub: its thread, one stream at a time, and the hand-out of its batches.
  void hubLoop(const StreamPtr& hub);
  StreamEnd runStream(etcd_internal::WatchState& w, const std::string& endpoint, bool& created,
                      std::string& message);
  void markCreated(etcd_internal::WatchState& w);
  void fanOut(const std::vector<Event>& events, int64_t revision);
  void handTo(etcd_internal::Subscriber& sub, const std::vector<Event>& events, int64_t revision,
              std::vector<Event>& scratch);
  // Replays the buffer to joining watches; true when one starts before the buffer, and the
  // hub must stream again from hub.last (already set).
  bool serviceJoins(etcd_internal::WatchState& hub);
  void endHub(etcd_internal::WatchState& hub, Code code, const std::string& message);
  void unsubscribe(const SubPtr& sub);
  void stopHub();

  EtcdOptions opts_;
  std::unique_ptr<etcd_internal::Transport> transport_;

  // Shutdown: writes in flight are counted so shutdown() can wait for them.
  Mutex write_mu_;
  std::condition_variable write_cv_;
  bool stopping_ GUARDED_BY(write_mu_) = false;
  int writes_in_flight_ GUARDED_BY(write_mu_) = 0;

  // The hub and its watches. wcv_ is notified on every delivery and every change of the
  // hub's phase (writers waiting for read-your-writes, watch() waiting to join, handles
  // waiting for a delivery in progress, the destructor waiting for the hub thread).
  Mutex wmu_;
  std::condition_variable wcv_;
  StreamPtr hub_ GUARDED_BY(wmu_);                // null until the first watch, and after the hub ended
  std::vector<SubPtr> subs_ GUARDED_BY(wmu_);     // following the hub
  std::vector<SubPtr> joining_ GUARDED_BY(wmu_);  // to be replayed from the buffer by the hub thread
  std::deque<etcd_internal::Batch> buffer_ GUARDED_BY(wmu_);  // every event with revision > buffer_base_
  int64_t buffer_base_ GUARDED_BY(wmu_) = 0;
  size_t buffer_bytes_ GUARDED_BY(wmu_) = 0;
  int64_t delivered_ GUARDED_BY(wmu_) = 0;            // highest revision handed to every watch
  uint64_t hand_outs_started_ GUARDED_BY(wmu_) = 0;   // fanOut/replay rounds begun and finished, so a
  uint64_t hand_outs_finished_ GUARDED_BY(wmu_) = 0;  // removed watch can wait for the one in progress
  int hub_threads_ GUARDED_BY(wmu_) = 0;

  std::atomic<int64_t> observed_{0};  // highest revision delivered or fetched
  std::atomic<int64_t> compacted_{0};
};

}  // namespace shepherd::storage
