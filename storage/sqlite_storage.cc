#include "storage/sqlite_storage.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"

namespace shepherd::storage {

namespace {

// Schema: `kv` is the revision log. A row is one write: rev is its global revision,
// deleted=1 marks a tombstone. (key, rev) is indexed so the latest row of a key and the
// state of a prefix at a revision are index range scans.
const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS kv (
  rev INTEGER PRIMARY KEY,
  key BLOB NOT NULL,
  create_rev INTEGER NOT NULL,
  prev_rev INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  value BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS kv_key_rev ON kv(key, rev);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
)sql";

struct Stmt {
  sqlite3_stmt* s = nullptr;
  Stmt(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) s = nullptr;
  }
  ~Stmt() { sqlite3_finalize(s); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  explicit operator bool() const { return s != nullptr; }
};

void bindText(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_blob(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
std::string columnText(sqlite3_stmt* s, int i) {
  const void* p = sqlite3_column_blob(s, i);
  int n = sqlite3_column_bytes(s, i);
  return p ? std::string(static_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
}

bool exec(sqlite3* db, const char* sql, std::string& error) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    error = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return false;
  }
  return true;
}

sqlite3* openConnection(const std::string& path, bool fsync, std::string& error) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    error = db ? sqlite3_errmsg(db) : "cannot open database";
    sqlite3_close(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 10000);
  std::string pragmas = "PRAGMA journal_mode=WAL; PRAGMA synchronous=";
  pragmas += fsync ? "FULL;" : "OFF;";
  pragmas += "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-16384;";
  if (!exec(db, pragmas.c_str(), error)) {
    sqlite3_close(db);
    return nullptr;
  }
  return db;
}

}  // namespace

class SqliteStorage::Handle final : public WatchHandle {
 public:
  Handle(SqliteStorage* s, uint64_t id) : s_(s), id_(id) {}
  ~Handle() override { s_->unwatch(id_); }

 private:
  SqliteStorage* s_;
  uint64_t id_;
};

SqliteStorage::SqliteStorage(SqliteOptions opts) : opts_(std::move(opts)) {}

Outcome<std::unique_ptr<SqliteStorage>> SqliteStorage::open(const SqliteOptions& opts) {
  std::unique_ptr<SqliteStorage> s(new SqliteStorage(opts));
  std::string error;
  if (!s->init(error))
    return Outcome<std::unique_ptr<SqliteStorage>>::failure(Code::Internal,
                                                            "sqlite " + opts.path + ": " + error);
  Outcome<std::unique_ptr<SqliteStorage>> out;
  out.value = std::move(s);
  return out;
}

bool SqliteStorage::init(std::string& error) {
  writer_ = openConnection(opts_.path, opts_.fsync, error);
  if (!writer_) return false;
  if (!exec(writer_, kSchema, error)) return false;
  {
    Stmt s(writer_, "SELECT coalesce(max(rev), 0) FROM kv");
    if (!s || sqlite3_step(s.s) != SQLITE_ROW) {
      error = sqlite3_errmsg(writer_);
      return false;
    }
    revision_ = sqlite3_column_int64(s.s, 0);
  }
  {
    Stmt s(writer_, "SELECT value FROM meta WHERE name='compacted'");
    if (!s) {
      error = sqlite3_errmsg(writer_);
      return false;
    }
    if (sqlite3_step(s.s) == SQLITE_ROW) compacted_ = sqlite3_column_int64(s.s, 0);
  }
  // Compaction may have removed the newest tombstones; the revision never goes back.
  if (compacted_ > revision_) revision_ = compacted_;
  {
    Stmt s(writer_, "SELECT value FROM meta WHERE name='revision'");
    if (s && sqlite3_step(s.s) == SQLITE_ROW && sqlite3_column_int64(s.s, 0) > revision_)
      revision_ = sqlite3_column_int64(s.s, 0);
  }
  published_ = revision_;
  if (sqlite3_prepare_v2(writer_,
                         "SELECT rev, create_rev, deleted, value FROM kv WHERE key = ?1 "
                         "ORDER BY rev DESC LIMIT 1",
                         -1, &stmt_latest_, nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(writer_,
                         "INSERT INTO kv (rev, key, create_rev, prev_rev, deleted, value) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                         -1, &stmt_insert_, nullptr) != SQLITE_OK) {
    error = sqlite3_errmsg(writer_);
    return false;
  }
  committer_ = std::thread([this] { commitLoop(); });
  return true;
}

SqliteStorage::~SqliteStorage() {
  shutdown();
  sqlite3_finalize(stmt_latest_);
  sqlite3_finalize(stmt_insert_);
  for (sqlite3* db : all_readers_) sqlite3_close(db);
  if (writer_) sqlite3_close(writer_);
}

void SqliteStorage::shutdown() {
  {
    MutexLock g(queue_mu_);
    if (stopping_ && !committer_.joinable()) return;
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (committer_.joinable()) committer_.join();
}

Outcome<KeyValue> SqliteStorage::submit(std::unique_ptr<Op> op) {
  std::future<Outcome<KeyValue>> done = op->done.get_future();
  {
    MutexLock g(queue_mu_);
    if (stopping_) return Outcome<KeyValue>::failure(Code::Unavailable, "storage is shutting down");
    queue_.push_back(std::move(op));
  }
  queue_cv_.notify_one();
  return done.get();
}

void SqliteStorage::commitLoop() {
  for (;;) {
    std::vector<std::unique_ptr<Op>> batch;
    {
      UniqueMutexLock lk(queue_mu_);
      lk.wait(queue_cv_, [&]() REQUIRES(queue_mu_) { return stopping_ || !queue_.empty(); });
      if (queue_.empty() && stopping_) return;
      while (!queue_.empty() && batch.size() < opts_.max_batch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    applyBatch(batch);
    for (auto& op : batch) op->done.set_value(std::move(op->result));
  }
}

void SqliteStorage::applyBatch(std::vector<std::unique_ptr<Op>>& batch) {
  MutexLock g(commit_mu_);
  // Compactions run alone in their own transaction.
  std::vector<Op*> writes;
  for (auto& op : batch) {
    if (op->kind == Op::Kind::Compact)
      applyCompact(*op);
    else
      writes.push_back(op.get());
  }
  if (writes.empty()) return;

  std::string error;
  if (!exec(writer_, "BEGIN IMMEDIATE", error)) {
    for (Op* op : writes) op->result = Outcome<KeyValue>::failure(Code::Internal, error);
    return;
  }
  int64_t rev = revision_;
  std::vector<Event> events;
  events.reserve(writes.size());
  for (Op* op : writes) apply(*op, rev, events);
  if (rev != revision_) {
    std::string meta =
        "INSERT OR REPLACE INTO meta(name, value) VALUES('revision', " + std::to_string(rev) + ")";
    bool ok = exec(writer_, meta.c_str(), error) && exec(writer_, "COMMIT", error);
    if (!ok) {
      std::string ignored;
      exec(writer_, "ROLLBACK", ignored);
      LOG_ERROR("storage: group commit of " << writes.size() << " writes failed: " << error);
      for (Op* op : writes)
        if (op->result.ok())
          op->result = Outcome<KeyValue>::failure(Code::Internal, "storage write failed: " + error);
      return;
    }
  } else {
    exec(writer_, "ROLLBACK", error);  // nothing was written (every op failed a check)
  }
  revision_ = rev;
  writes_committed_ += events.size();
  batches_committed_ += 1;
  // Deliver before publishing: once currentRevision() reports rev, every watch has it.
  for (auto& w : watchers_) {
    std::vector<Event> mine;
    for (const Event& e : events)
      if (e.kv.key.compare(0, w.prefix.size(), w.prefix) == 0) mine.push_back(e);
    w.callback(mine, rev);
  }
  published_.store(rev, std::memory_order_release);
}

void SqliteStorage::apply(Op& op, int64_t& rev, std::vector<Event>& events) {
  sqlite3_stmt* q = stmt_latest_;
  sqlite3_reset(q);
  bindText(q, 1, op.key);
  int rc = sqlite3_step(q);
  bool exists = false;
  int64_t cur_rev = 0, cur_create = 0;
  std::string cur_value;
  if (rc == SQLITE_ROW) {
    exists = sqlite3_column_int64(q, 2) == 0;
    cur_rev = sqlite3_column_int64(q, 0);
    cur_create = sqlite3_column_int64(q, 1);
    if (exists && op.kind == Op::Kind::Delete) cur_value = columnText(q, 3);
  } else if (rc != SQLITE_DONE) {
    op.result = Outcome<KeyValue>::failure(Code::Internal, sqlite3_errmsg(writer_));
    sqlite3_reset(q);
    return;
  }
  sqlite3_reset(q);

  switch (op.kind) {
    case Op::Kind::Create:
      if (exists) {
        op.result = Outcome<KeyValue>::failure(Code::Exists, "key exists", cur_rev);
        return;
      }
      break;
    case Op::Kind::Update:
    case Op::Kind::Delete:
      if (!exists) {
        op.result = Outcome<KeyValue>::failure(Code::NotFound, "key not found");
        return;
      }
      if (op.expected != 0 && op.expected != cur_rev) {
        op.result = Outcome<KeyValue>::failure(Code::Conflict, "revision mismatch", cur_rev);
        return;
      }
      break;
    case Op::Kind::Compact:
      return;
  }

  int64_t new_rev = rev + 1;
  bool del = op.kind == Op::Kind::Delete;
  int64_t create_rev = op.kind == Op::Kind::Create ? new_rev : cur_create;
  sqlite3_stmt* ins = stmt_insert_;
  sqlite3_reset(ins);
  sqlite3_bind_int64(ins, 1, new_rev);
  bindText(ins, 2, op.key);
  sqlite3_bind_int64(ins, 3, create_rev);
  sqlite3_bind_int64(ins, 4, cur_rev);
  sqlite3_bind_int(ins, 5, del ? 1 : 0);
  if (del)
    sqlite3_bind_blob(ins, 6, "", 0, SQLITE_STATIC);
  else
    bindText(ins, 6, op.value);
  rc = sqlite3_step(ins);
  sqlite3_reset(ins);
  sqlite3_clear_bindings(ins);
  if (rc != SQLITE_DONE) {
    op.result = Outcome<KeyValue>::failure(Code::Internal, sqlite3_errmsg(writer_));
    return;
  }
  rev = new_rev;

  Event ev;
  ev.type = del ? Event::Type::Delete : Event::Type::Put;
  ev.kv.key = op.key;
  ev.kv.create_revision = create_rev;
  ev.kv.mod_revision = new_rev;
  op.result.code = Code::Ok;
  op.result.value.key = op.key;
  op.result.value.create_revision = create_rev;
  op.result.value.mod_revision = new_rev;
  if (del) {
    KeyValue prev{op.key, std::move(cur_value), cur_create, cur_rev};
    op.result.value.value = prev.value;
    ev.prev = std::move(prev);
  } else {
    ev.kv.value = std::move(op.value);
  }
  events.push_back(std::move(ev));
}

void SqliteStorage::applyCompact(Op& op) {
  int64_t target = op.expected;
  if (target <= compacted_.load()) {
    op.result.code = Code::Ok;
    op.result.value.mod_revision = compacted_.load();
    return;
  }
  if (target > revision_) target = revision_;
  std::string error;
  std::string sql =
      "BEGIN IMMEDIATE;"
      "DELETE FROM kv WHERE rev <= " +
      std::to_string(target) +
      " AND (deleted = 1 OR rev < (SELECT max(k2.rev) FROM kv k2 WHERE k2.key = kv.key AND "
      "k2.rev <= " +
      std::to_string(target) +
      "));"
      "INSERT OR REPLACE INTO meta(name, value) VALUES('compacted', " +
      std::to_string(target) +
      ");"
      "INSERT OR REPLACE INTO meta(name, value) VALUES('revision', " +
      std::to_string(revision_) + ");COMMIT;";
  if (!exec(writer_, sql.c_str(), error)) {
    std::string ignored;
    exec(writer_, "ROLLBACK", ignored);
    op.result = Outcome<KeyValue>::failure(Code::Internal, "compaction failed: " + error);
    return;
  }
  compacted_.store(target);
  op.result.code = Code::Ok;
  op.result.value.mod_revision = target;
}

Outcome<int64_t> SqliteStorage::create(const std::string& key, std::string value) {
  auto op = std::make_unique<Op>();
  op->kind = Op::Kind::Create;
  op->key = key;
  op->value = std::move(value);
  auto r = submit(std::move(op));
  if (!r.ok()) return Outcome<int64_t>::failure(r.code, r.message, r.current_revision);
  Outcome<int64_t> out;
  out.value = r.value.mod_revision;
  return out;
}

Outcome<int64_t> SqliteStorage::update(const std::string& key, std::string value,
                                       int64_t expected_mod_revision) {
  auto op = std::make_unique<Op>();
  op->kind = Op::Kind::Update;
  op->key = key;
  op->value = std::move(value);
  op->expected = expected_mod_revision;
  auto r = submit(std::move(op));
  if (!r.ok()) return Outcome<int64_t>::failure(r.code, r.message, r.current_revision);
  Outcome<int64_t> out;
  out.value = r.value.mod_revision;
  return out;
}

Outcome<KeyValue> SqliteStorage::remove(const std::string& key, int64_t expected_mod_revision) {
  auto op = std::make_unique<Op>();
  op->kind = Op::Kind::Delete;
  op->key = key;
  op->expected = expected_mod_revision;
  return submit(std::move(op));
}

Outcome<int64_t> SqliteStorage::compact(int64_t revision) {
  auto op = std::make_unique<Op>();
  op->kind = Op::Kind::Compact;
  op->expected = revision;
  auto r = submit(std::move(op));
  if (!r.ok()) return Outcome<int64_t>::failure(r.code, r.message);
  Outcome<int64_t> out;
  out.value = r.value.mod_revision;
  return out;
}

sqlite3* SqliteStorage::acquireReader() {
  {
    MutexLock g(readers_mu_);
    if (!readers_.empty()) {
      sqlite3* db = readers_.back();
      readers_.pop_back();
      return db;
    }
  }
  std::string error;
  sqlite3* db = openConnection(opts_.path, opts_.fsync, error);
  if (!db) {
    LOG_ERROR("storage: cannot open reader: " << error);
    return nullptr;
  }
  MutexLock g(readers_mu_);
  all_readers_.push_back(db);
  return db;
}

void SqliteStorage::releaseReader(sqlite3* db) {
  MutexLock g(readers_mu_);
  readers_.push_back(db);
}

Outcome<KeyValue> SqliteStorage::get(const std::string& key) {
  sqlite3* db = acquireReader();
  if (!db) return Outcome<KeyValue>::failure(Code::Internal, "no database connection");
  Outcome<KeyValue> out;
  {
    Stmt s(db,
           "SELECT rev, create_rev, deleted, value FROM kv WHERE key = ?1 ORDER BY rev DESC "
           "LIMIT 1");
    if (!s) {
      out = Outcome<KeyValue>::failure(Code::Internal, sqlite3_errmsg(db));
    } else {
      bindText(s.s, 1, key);
      int rc = sqlite3_step(s.s);
      if (rc == SQLITE_ROW && sqlite3_column_int64(s.s, 2) == 0) {
        out.value =
            KeyValue{key, columnText(s.s, 3), sqlite3_column_int64(s.s, 1), sqlite3_column_int64(s.s, 0)};
      } else if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
        out = Outcome<KeyValue>::failure(Code::NotFound, "key not found");
      } else {
        out = Outcome<KeyValue>::failure(Code::Internal, sqlite3_errmsg(db));
      }
    }
  }
  releaseReader(db);
  return out;
}

Outcome<ListResponse> SqliteStorage::list(const ListRequest& req) {
  int64_t at = req.revision ? req.revision : currentRevision();
  if (req.revision && req.revision < compactedRevision())
    return Outcome<ListResponse>::failure(Code::Compacted, "required revision has been compacted");
  if (req.revision > currentRevision())
    return Outcome<ListResponse>::failure(Code::Conflict, "revision is in the future");
  sqlite3* db = acquireReader();
  if (!db) return Outcome<ListResponse>::failure(Code::Internal, "no database connection");
  Outcome<ListResponse> out;
  out.value.revision = at;
  std::string lo = std::max(req.prefix, req.start_after);
  std::string hi = prefixEnd(req.prefix);
  // Latest row per key at or below `at`, live rows only, keys in (lo, hi).
  const char* sql =
      "SELECT k.key, k.create_rev, k.rev, k.value FROM kv k JOIN ("
      " SELECT key, max(rev) AS mr FROM kv WHERE key >= ?1 AND (length(?2) = 0 OR key < ?2) AND rev <= ?3 "
      " GROUP BY key) m ON k.rev = m.mr "
      "WHERE k.deleted = 0 AND (?4 = 0 OR k.key > ?1) ORDER BY k.key";
  {
    Stmt s(db, sql);
    if (!s) {
      out = Outcome<ListResponse>::failure(Code::Internal, sqlite3_errmsg(db));
    } else {
      bindText(s.s, 1, lo);
      bindText(s.s, 2, hi);
      sqlite3_bind_int64(s.s, 3, at);
      sqlite3_bind_int(s.s, 4, req.start_after.empty() ? 0 : 1);
      int rc;
      int64_t n = 0;
      while ((rc = sqlite3_step(s.s)) == SQLITE_ROW) {
        if (req.limit > 0 && n >= req.limit) {
          ++out.value.remaining;
          continue;
        }
        out.value.kvs.push_back(KeyValue{columnText(s.s, 0), columnText(s.s, 3), sqlite3_column_int64(s.s, 1),
                                         sqlite3_column_int64(s.s, 2)});
        ++n;
      }
      if (rc != SQLITE_DONE) out = Outcome<ListResponse>::failure(Code::Internal, sqlite3_errmsg(db));
    }
  }
  releaseReader(db);
  // A compaction racing with the read could have removed rows of revision `at`.
  if (out.ok() && req.revision && req.revision < compactedRevision())
    return Outcome<ListResponse>::failure(Code::Compacted, "required revision has been compacted");
  return out;
}

Outcome<std::unique_ptr<WatchHandle>> SqliteStorage::watch(const std::string& prefix, int64_t after_revision,
                                                           WatchCallback callback) {
  using Out = Outcome<std::unique_ptr<WatchHandle>>;
  MutexLock g(commit_mu_);
  if (after_revision < compacted_.load())
    return Out::failure(Code::Compacted, "required revision has been compacted");
  if (after_revision < revision_) {
    sqlite3* db = acquireReader();
    if (!db) return Out::failure(Code::Internal, "no database connection");
    std::vector<Event> events;
    std::string error;
    {
      Stmt s(db,
             "SELECT k.rev, k.key, k.create_rev, k.deleted, k.value, p.value, p.rev "
             "FROM kv k LEFT JOIN kv p ON p.rev = k.prev_rev "
             "WHERE k.rev > ?1 AND k.rev <= ?2 AND k.key >= ?3 AND (length(?4) = 0 OR k.key < ?4) "
             "ORDER BY k.rev");
      if (!s) {
        error = sqlite3_errmsg(db);
      } else {
        sqlite3_bind_int64(s.s, 1, after_revision);
        sqlite3_bind_int64(s.s, 2, revision_);
        bindText(s.s, 3, prefix);
        bindText(s.s, 4, prefixEnd(prefix));
        int rc;
        while ((rc = sqlite3_step(s.s)) == SQLITE_ROW) {
          Event e;
          e.kv.key = columnText(s.s, 1);
          e.kv.mod_revision = sqlite3_column_int64(s.s, 0);
          e.kv.create_revision = sqlite3_column_int64(s.s, 2);
          if (sqlite3_column_int(s.s, 3)) {
            e.type = Event::Type::Delete;
            e.prev =
                KeyValue{e.kv.key, columnText(s.s, 5), e.kv.create_revision, sqlite3_column_int64(s.s, 6)};
          } else {
            e.kv.value = columnText(s.s, 4);
          }
          events.push_back(std::move(e));
        }
        if (rc != SQLITE_DONE) error = sqlite3_errmsg(db);
      }
    }
    releaseReader(db);
    if (!error.empty()) return Out::failure(Code::Internal, error);
    callback(events, revision_);
  }
  uint64_t id = next_watcher_id_++;
  watchers_.push_back(Watcher{id, prefix, std::move(callback)});
  Out out;
  out.value = std::make_unique<Handle>(this, id);
  return out;
}

void SqliteStorage::unwatch(uint64_t id) {
  MutexLock g(commit_mu_);
  for (auto it = watchers_.begin(); it != watchers_.end(); ++it) {
    if (it->id == id) {
      watchers_.erase(it);
      return;
    }
  }
}

}  // namespace shepherd::storage
