// EtcdStorage's writes, reads and compaction; the transport (etcd_transport), the codec
// (etcd_codec) and the watch hub (etcd_watch_hub) are in files of their own.
#include "storage/etcd_storage.h"

#include <algorithm>
#include <chrono>
#include <string_view>
#include <utility>

#include "common/json.h"
#include "common/log.h"
#include "storage/etcd_codec.h"
#include "storage/etcd_transport.h"
#include "storage/etcd_watch_hub.h"

namespace shepherd::storage {

using namespace etcd_internal;

// ---- Write admission (shutdown) ----

class EtcdStorage::WriteScope {
 public:
  explicit WriteScope(EtcdStorage& s) : s_(s) {
    MutexLock g(s_.write_mu_);
    admitted_ = !s_.stopping_;
    if (admitted_) ++s_.writes_in_flight_;
  }
  ~WriteScope() {
    if (!admitted_) return;
    MutexLock g(s_.write_mu_);
    if (--s_.writes_in_flight_ == 0) s_.write_cv_.notify_all();
  }
  WriteScope(const WriteScope&) = delete;
  WriteScope& operator=(const WriteScope&) = delete;
  explicit operator bool() const { return admitted_; }

 private:
  EtcdStorage& s_;
  bool admitted_ = false;
};

// ---- EtcdStorage ----

EtcdStorage::EtcdStorage(EtcdOptions opts)
    : opts_(std::move(opts)), transport_(std::make_unique<etcd_internal::Transport>(opts_)) {}

Outcome<std::unique_ptr<EtcdStorage>> EtcdStorage::open(const EtcdOptions& opts) {
  using Out = Outcome<std::unique_ptr<EtcdStorage>>;
  if (opts.endpoints.empty()) return Out::failure(Code::Internal, "etcd: no endpoints given");
  for (const std::string& e : opts.endpoints) {
    if (e.rfind("http://", 0) != 0 && e.rfind("https://", 0) != 0)
      return Out::failure(Code::Internal, "etcd: endpoint " + e + " is not an http:// or https:// URL");
  }
  if (opts.request_timeout_ms <= 0)
    return Out::failure(Code::Internal, "etcd: request_timeout_ms must be positive");
  std::unique_ptr<EtcdStorage> s(new EtcdStorage(opts));
  // Reach etcd once, so a wrong endpoint fails here rather than on the first request.
  int64_t rev = 0;
  Reply r;
  if (!s->fetchRevision(rev, r)) return Out::failure(r.code, r.message);
  s->observed_.store(rev);
  Out out;
  out.value = std::move(s);
  return out;
}

EtcdStorage::~EtcdStorage() {
  shutdown();
  size_t left;
  {
    MutexLock g(wmu_);
    left = subs_.size() + joining_.size();
  }
  if (left) LOG_WARN("etcd storage destroyed with " << left << " live watches");
  stopHub();
}

void EtcdStorage::shutdown() {
  UniqueMutexLock lk(write_mu_);
  stopping_ = true;
  // Each write in flight ends within the request timeout plus the delivery wait.
  lk.wait(write_cv_, [&]() REQUIRES(write_mu_) { return writes_in_flight_ == 0; });
}

std::string EtcdStorage::wireKey(const std::string& key) const {
  if (key.compare(0, opts_.root.size(), opts_.root) == 0)
    return opts_.key_prefix + key.substr(opts_.root.size());
  return opts_.key_prefix + key;  // outside root (a caller's mistake): kept apart, never read back
}

bool EtcdStorage::localKey(const std::string& wire, std::string& key) const {
  return KeySpace{opts_.root, opts_.key_prefix}.local(wire, key);
}

std::string EtcdStorage::wirePrefix(const std::string& prefix) const {
  // A prefix of root ("" or "/reg") covers the whole key space.
  if (prefix.size() < opts_.root.size() && opts_.root.compare(0, prefix.size(), prefix) == 0)
    return opts_.key_prefix;
  return wireKey(prefix);
}

void EtcdStorage::wireRange(const std::string& prefix, const std::string& start_after, std::string& key,
                            std::string& range_end) const {
  std::string wp = wirePrefix(prefix);
  // start_after is exclusive: the next possible key is start_after + "\0".
  key = start_after.empty() || start_after < prefix ? wp : std::max(wp, wireKey(start_after) + '\0');
  range_end = prefixEnd(wp);
  if (key.empty()) key.assign(1, '\0');              // etcd refuses an empty key; "\0" is the smallest
  if (range_end.empty()) range_end.assign(1, '\0');  // range_end "\0" means "no upper bound"
}

bool EtcdStorage::fetchRevision(int64_t& revision, Reply& reply) {
  RangeArgs a;
  a.key = opts_.key_prefix.empty() ? std::string(1, '\0') : opts_.key_prefix;
  a.keys_only = true;
  reply = transport_->post("/v3/kv/range", rangeBody(a), true);
  if (!reply.ok()) return false;
  revision = headerRevision(reply.doc);
  if (revision > 0) return true;
  reply = failed(Code::Internal, "etcd: range answer without a header revision");
  return false;
}

void EtcdStorage::raiseCompacted(int64_t revision) {
  atomicMax(compacted_, revision);
}

// Read-your-writes. SqliteStorage delivers a batch to every watch before it answers the
// writers; here etcd delivers on the hub's connection, so the writer waits until the hub
// has handed the write's revision to every watch. The wait is bounded by the request
// timeout; past it the write is answered anyway (it did commit) and logged.
void EtcdStorage::awaitDelivery(int64_t revision) {
  atomicMax(observed_, revision);  // a writer's next currentRevision() is at least its write's
  if (t_hub_of == this) return;
  UniqueMutexLock lk(wmu_);
  StreamPtr hub = hub_;
  if (!hub) return;
  bool ok = lk.waitFor(wcv_, std::chrono::milliseconds(opts_.request_timeout_ms), [&]() REQUIRES(wmu_) {
    return delivered_ >= revision || hub->phase == WatchState::Phase::Ended;
  });
  lk.unlock();
  if (!ok)
    LOG_WARN("etcd: watches had not been handed revision "
             << revision << " after " << opts_.request_timeout_ms << " ms; answering the write anyway");
}

namespace {

// One write txn on a key. create: the key must not exist; otherwise its mod_revision must
// equal `expected` (0: any, but the key must exist, as in SqliteStorage). Gives the
// txn's revision (the reply is kept for the caller), or what the failure branch's read
// says: Exists, NotFound or Conflict with the key's current revision.
Outcome<int64_t> writeTxn(etcd_internal::Transport& transport, const std::string& wire_key, bool create,
                          int64_t expected, Then then, std::string_view value, Reply& r) {
  using Out = Outcome<int64_t>;
  std::string body = create ? txnBody(wire_key, "CREATE", "create_revision", "EQUAL", 0, then, value)
                            : txnBody(wire_key, "MOD", "mod_revision", expected ? "EQUAL" : "GREATER",
                                      expected, then, value);
  r = transport.post("/v3/kv/txn", body, false);
  if (!r.ok()) return Out::failure(r.code, r.message);
  if (!json::getBool(r.doc, "succeeded")) {  // absent when false
    const json::Value* cur = firstOf(firstResponse(r.doc, "response_range"), "kvs");
    int64_t current = cur ? int64Field(*cur, "mod_revision") : 0;
    if (create) return Out::failure(Code::Exists, "key exists", current);
    if (!cur) return Out::failure(Code::NotFound, "key not found");
    return Out::failure(Code::Conflict, "revision mismatch", current);
  }
  int64_t rev = headerRevision(r.doc);
  if (rev <= 0) return Out::failure(Code::Internal, "etcd: txn answer without a header revision");
  Out out;
  out.value = rev;
  return out;
}

}  // namespace

Outcome<int64_t> EtcdStorage::create(const std::string& key, std::string value) {
  WriteScope scope(*this);
  if (!scope) return Outcome<int64_t>::failure(Code::Unavailable, "storage is shutting down");
  Reply r;
  auto out = writeTxn(*transport_, wireKey(key), true, 0, Then::Put, value, r);
  if (out.ok()) awaitDelivery(out.value);
  return out;
}

Outcome<int64_t> EtcdStorage::update(const std::string& key, std::string value,
                                     int64_t expected_mod_revision) {
  WriteScope scope(*this);
  if (!scope) return Outcome<int64_t>::failure(Code::Unavailable, "storage is shutting down");
  Reply r;
  auto out = writeTxn(*transport_, wireKey(key), false, expected_mod_revision, Then::Put, value, r);
  if (out.ok()) awaitDelivery(out.value);
  return out;
}

Outcome<KeyValue> EtcdStorage::remove(const std::string& key, int64_t expected_mod_revision) {
  using Out = Outcome<KeyValue>;
  WriteScope scope(*this);
  if (!scope) return Out::failure(Code::Unavailable, "storage is shutting down");
  Reply r;
  auto txn = writeTxn(*transport_, wireKey(key), false, expected_mod_revision, Then::Delete, "", r);
  if (!txn.ok()) return Out::failure(txn.code, txn.message, txn.current_revision);
  const json::Value* prev = firstOf(firstResponse(r.doc, "response_delete_range"), "prev_kvs");
  KeyValue old;
  if (!prev || decodeKv(*prev, KeySpace{opts_.root, opts_.key_prefix}, old) != Decoded::Ok)
    return Out::failure(Code::Internal, "etcd: delete answer without the deleted value");
  awaitDelivery(txn.value);
  // As SqliteStorage: the deleted value, its incarnation's create_revision, the deletion's revision.
  Out out;
  out.value = KeyValue{key, std::move(old.value), old.create_revision, txn.value};
  return out;
}

Outcome<KeyValue> EtcdStorage::get(const std::string& key) {
  using Out = Outcome<KeyValue>;
  RangeArgs a;
  a.key = wireKey(key);
  if (a.key.empty()) return Out::failure(Code::NotFound, "key not found");
  Reply r = transport_->post("/v3/kv/range", rangeBody(a), true);
  if (!r.ok()) return Out::failure(r.code, r.message);
  const json::Value* kv = firstOf(&r.doc, "kvs");
  if (!kv) return Out::failure(Code::NotFound, "key not found");
  Out out;
  if (decodeKv(*kv, KeySpace{opts_.root, opts_.key_prefix}, out.value) != Decoded::Ok)
    return Out::failure(Code::Internal, "etcd: malformed key-value in a range answer");
  return out;
}

Outcome<ListResponse> EtcdStorage::list(const ListRequest& req) {
  using Out = Outcome<ListResponse>;
  RangeArgs a;
  wireRange(req.prefix, req.start_after, a.key, a.range_end);
  a.limit = req.limit;
  a.revision = req.revision;
  Reply r = transport_->post("/v3/kv/range", rangeBody(a), true);
  if (r.code == Code::Compacted) raiseCompacted(req.revision + 1);  // etcd compacted past it
  if (!r.ok()) return Out::failure(r.code, r.message);
  Out out;
  // etcd's header carries its current revision even for a read at an older one.
  out.value.revision = req.revision ? req.revision : headerRevision(r.doc);
  if (const json::Value* kvs = json::find(r.doc, "kvs"); kvs && kvs->IsArray()) {
    out.value.kvs.reserve(kvs->Size());
    for (const json::Value& o : kvs->GetArray()) {
      KeyValue kv;
      if (decodeKv(o, KeySpace{opts_.root, opts_.key_prefix}, kv) != Decoded::Ok)
        return Out::failure(Code::Internal, "etcd: malformed key-value in a range answer");
      out.value.kvs.push_back(std::move(kv));
    }
  }
  // count is every key of the range at that revision, whatever the limit: exact.
  out.value.remaining =
      std::max<int64_t>(0, int64Field(r.doc, "count") - static_cast<int64_t>(out.value.kvs.size()));
  return out;
}

int64_t EtcdStorage::currentRevision() {
  {
    MutexLock g(wmu_);
    if (hub_ && hub_->phase == WatchState::Phase::Running) return observed_.load();
  }
  int64_t rev = 0;
  Reply r;
  if (fetchRevision(rev, r)) atomicMax(observed_, rev);
  return observed_.load();
}

Outcome<int64_t> EtcdStorage::consistentRevision() {
  int64_t rev = 0;
  Reply r;
  if (!fetchRevision(rev, r)) return Outcome<int64_t>::failure(r.code, r.message);
  atomicMax(observed_, rev);
  Outcome<int64_t> out;
  out.value = rev;
  return out;
}

Outcome<int64_t> EtcdStorage::compact(int64_t revision) {
  using Out = Outcome<int64_t>;
  WriteScope scope(*this);
  if (!scope) return Out::failure(Code::Unavailable, "storage is shutting down");
  Out out;
  out.value = compacted_.load();
  if (revision <= out.value) return out;
  Reply r = transport_->post("/v3/kv/compaction", compactionBody(revision), true);
  if (r.code == Code::Conflict) {
    // Beyond etcd's revision: compact to the current one instead, as SqliteStorage does.
    int64_t current = 0;
    Reply f;
    if (!fetchRevision(current, f)) return Out::failure(f.code, "compaction failed: " + f.message);
    if (current <= out.value) return out;
    revision = current;
    r = transport_->post("/v3/kv/compaction", compactionBody(revision), true);
  }
  if (r.code == Code::Compacted) {
    // etcd was compacted at or past this revision already (another client, or a retry).
    raiseCompacted(revision);
    out.value = compacted_.load();
    return out;
  }
  if (!r.ok()) return Out::failure(r.code, "compaction failed: " + r.message);
  raiseCompacted(revision);
  out.value = compacted_.load();
  return out;
}

}  // namespace shepherd::storage
