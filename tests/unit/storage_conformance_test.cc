// The Storage contract (storage/storage.h), one typed suite run against every backend:
// SqliteStorage in a temporary directory and EtcdStorage against a real single-member
// etcd (Debian's etcd-server, 3.4.x) started per test on free loopback ports. There is no
// skip: without etcd on PATH every etcd case fails with a message saying so.
// Backend-specific behaviour stays in sqlite_storage_test.cc and etcd_storage_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "storage/compactor.h"
#include "storage/etcd_storage.h"
#include "storage/sqlite_storage.h"
#include "storage/watch_cache.h"
#include "storage_test_util.h"
#include "test_util.h"
#include "tests/support/etcd_process.h"
#include "watch_cache_test_util.h"

using namespace shepherd;
using namespace shepherd::storage;
using testutil::WatchRecorder;
using SteadyClock = std::chrono::steady_clock;

namespace {

int64_t msSince(SteadyClock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - t0).count();
}

void ignoreEvents(const std::vector<Event>&, int64_t) {}

struct SqliteBackend {
  static constexpr const char* kName = "Sqlite";
  // watch() replays the history still kept before it returns.
  static constexpr bool kReplaysBeforeWatchReturns = true;
  // Every batch carries one revision (SQLite's group commits and replays carry several).
  static constexpr bool kOneRevisionPerBatch = false;

  std::string start() { return ""; }
  std::unique_ptr<Storage> open() {
    SqliteOptions o;
    o.path = dir.path() + "/state.db";
    auto s = SqliteStorage::open(o);
    EXPECT_TRUE(s.ok()) << codeName(s.code) << ": " << s.message;
    return std::move(s.value);
  }

  testutil::TempDir dir;
};

struct EtcdBackend {
  static constexpr const char* kName = "Etcd";
  static constexpr bool kReplaysBeforeWatchReturns = false;
  static constexpr bool kOneRevisionPerBatch = true;

  std::string start() { return etcd.start(); }
  std::unique_ptr<Storage> open() {
    EtcdOptions o;
    o.endpoints = {etcd.endpoint()};
    o.request_timeout_ms = 5000;
    auto s = EtcdStorage::open(o);
    EXPECT_TRUE(s.ok()) << codeName(s.code) << ": " << s.message;
    return std::move(s.value);
  }

  testsupport::EtcdProcess etcd;  // stopped by PID, its temporary data directory removed
};

template <class Backend>
class StorageConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error = backend_.start();
    ASSERT_TRUE(error.empty()) << error;
    store_ = backend_.open();
    ASSERT_TRUE(store_);
  }
  void TearDown() override { store_.reset(); }
  void expectOrdered(WatchRecorder& rec) { rec.expectOrdered(Backend::kOneRevisionPerBatch); }

  Backend backend_;
  std::unique_ptr<Storage> store_;  // declared after backend_: closed before it stops
};

// The watch cache over each backend: what it needs of one (a list and a watch from its
// revision, read-your-writes, every revision reached, history for older starts).
template <class Backend>
class WatchCacheConformance : public StorageConformance<Backend> {
 protected:
  struct Fixture {
    Storage* store;
    std::unique_ptr<WatchCache> cache;
    void start() { ASSERT_TRUE(cache->start().ok()); }
  };
  Fixture fixture(size_t window = 100) {
    return {this->store_.get(), std::make_unique<WatchCache>(*this->store_, "/r/", testutil::decode, window)};
  }
};

struct BackendNames {
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};

using Backends = ::testing::Types<SqliteBackend, EtcdBackend>;
TYPED_TEST_SUITE(StorageConformance, Backends, BackendNames);
TYPED_TEST_SUITE(WatchCacheConformance, Backends, BackendNames);

}  // namespace

TYPED_TEST(StorageConformance, CreateUpdateRemoveFollowCasRules) {
  Storage* s = this->store_.get();
  auto a = s->create("/a", "1");
  ASSERT_TRUE(a.ok()) << a.message;
  auto b = s->create("/b", "1");
  ASSERT_TRUE(b.ok()) << b.message;
  EXPECT_EQ(a.value + 1, b.value);  // revisions are global: one per write
  EXPECT_EQ(s->currentRevision(), b.value);

  auto dup = s->create("/a", "2");
  EXPECT_EQ(dup.code, Code::Exists);
  EXPECT_EQ(dup.current_revision, a.value);

  auto stale = s->update("/a", "2", a.value + 1000);
  EXPECT_EQ(stale.code, Code::Conflict);
  EXPECT_EQ(stale.current_revision, a.value);
  if (a.value > 1) {
    auto older = s->update("/a", "2", a.value - 1);
    EXPECT_EQ(older.code, Code::Conflict);
    EXPECT_EQ(older.current_revision, a.value);
  }
  // A failed compare does not consume a revision.
  auto up = s->update("/a", "2", a.value);
  ASSERT_TRUE(up.ok()) << up.message;
  EXPECT_EQ(up.value, b.value + 1);
  auto got = s->get("/a");
  ASSERT_TRUE(got.ok()) << got.message;
  EXPECT_EQ(got.value.key, "/a");
  EXPECT_EQ(got.value.value, "2");
  EXPECT_EQ(got.value.create_revision, a.value);
  EXPECT_EQ(got.value.mod_revision, up.value);

  auto unconditional = s->update("/a", "3", 0);
  ASSERT_TRUE(unconditional.ok()) << unconditional.message;
  EXPECT_GT(unconditional.value, up.value);
  EXPECT_EQ(s->update("/zzz", "x", 0).code, Code::NotFound);
  EXPECT_EQ(s->update("/zzz", "x", 5).code, Code::NotFound);
  EXPECT_EQ(s->get("/zzz").code, Code::NotFound);

  auto del = s->remove("/a", up.value);  // stale
  EXPECT_EQ(del.code, Code::Conflict);
  EXPECT_EQ(del.current_revision, unconditional.value);
  del = s->remove("/a", unconditional.value);
  ASSERT_TRUE(del.ok()) << del.message;
  EXPECT_EQ(del.value.key, "/a");
  EXPECT_EQ(del.value.value, "3");
  EXPECT_EQ(del.value.create_revision, a.value);
  EXPECT_EQ(del.value.mod_revision, unconditional.value + 1);  // the deletion's revision
  EXPECT_EQ(s->get("/a").code, Code::NotFound);
  EXPECT_EQ(s->remove("/a", 0).code, Code::NotFound);

  // A key can be created again after deletion, as a new incarnation.
  auto again = s->create("/a", "4");
  ASSERT_TRUE(again.ok()) << again.message;
  EXPECT_EQ(s->get("/a").value.create_revision, again.value);
  auto gone = s->remove("/b", 0);  // unconditional delete
  ASSERT_TRUE(gone.ok()) << gone.message;
  EXPECT_EQ(gone.value.value, "1");
}

TYPED_TEST(StorageConformance, KeysAndValuesAreBinarySafe) {
  Storage* s = this->store_.get();
  std::string key = std::string("/bin/k\xc3\xa9y with spaces+/=") + std::string("\x01\x7f", 2);
  std::string value = std::string("a\0b", 3) + "\xff\xfe{\"json\":\n\"x\"}";
  value += std::string(300 * 1024, 'z');  // well beyond one libcurl chunk
  auto c = s->create(key, value);
  ASSERT_TRUE(c.ok()) << c.message;
  auto got = s->get(key);
  ASSERT_TRUE(got.ok()) << got.message;
  EXPECT_EQ(got.value.key, key);
  EXPECT_TRUE(got.value.value == value);
  // An empty value round-trips too (etcd's gateway leaves the field out).
  ASSERT_TRUE(s->create("/bin/empty", "").ok());
  auto empty = s->get("/bin/empty");
  ASSERT_TRUE(empty.ok()) << empty.message;
  EXPECT_EQ(empty.value.value, "");
}

TYPED_TEST(StorageConformance, ListPagesAtOneRevisionWithExactRemaining) {
  Storage* s = this->store_.get();
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(s->create("/p/k" + std::to_string(100 + i), "v").ok());
  ASSERT_TRUE(s->create("/q/other", "v").ok());
  ASSERT_TRUE(s->create("/p", "not under /p/").ok());

  ListRequest req;
  req.prefix = "/p/";
  req.limit = 10;
  auto first = s->list(req);
  ASSERT_TRUE(first.ok()) << first.message;
  EXPECT_EQ(first.value.kvs.size(), 10u);
  EXPECT_EQ(first.value.remaining, 15);
  int64_t rev = first.value.revision;
  EXPECT_GT(rev, 0);

  // Writes after the first page must not show in later pages read at `rev`.
  ASSERT_TRUE(s->create("/p/k000", "new").ok());
  ASSERT_TRUE(s->remove("/p/k124", 0).ok());
  auto cur = s->get("/p/k115");
  ASSERT_TRUE(cur.ok());
  ASSERT_TRUE(s->update("/p/k115", "changed", cur.value.mod_revision).ok());

  std::vector<std::string> keys;
  for (auto& kv : first.value.kvs) keys.push_back(kv.key);
  std::vector<int64_t> remaining = {first.value.remaining};
  while (remaining.back() > 0) {
    ListRequest next;
    next.prefix = "/p/";
    next.limit = 10;
    next.revision = rev;
    next.start_after = keys.back();
    auto page = s->list(next);
    ASSERT_TRUE(page.ok()) << page.message;
    EXPECT_EQ(page.value.revision, rev);
    ASSERT_FALSE(page.value.kvs.empty());
    for (auto& kv : page.value.kvs) {
      keys.push_back(kv.key);
      if (kv.key == "/p/k115") {
        EXPECT_EQ(kv.value, "v");
      }
    }
    remaining.push_back(page.value.remaining);
  }
  EXPECT_EQ(remaining, (std::vector<int64_t>{15, 5, 0}));
  ASSERT_EQ(keys.size(), 25u);
  EXPECT_EQ(keys.front(), "/p/k100");
  EXPECT_EQ(keys.back(), "/p/k124");
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));

  // At the current revision the changes are visible; no limit means everything.
  ListRequest now;
  now.prefix = "/p/";
  auto latest = s->list(now);
  ASSERT_TRUE(latest.ok()) << latest.message;
  EXPECT_EQ(latest.value.kvs.size(), 25u);  // +k000, -k124
  EXPECT_EQ(latest.value.kvs.front().key, "/p/k000");
  EXPECT_EQ(latest.value.remaining, 0);
  EXPECT_GT(latest.value.revision, rev);

  // A limit larger than the range, and an empty range.
  now.limit = 100;
  EXPECT_EQ(s->list(now).value.remaining, 0);
  ListRequest none;
  none.prefix = "/nothing/";
  auto empty = s->list(none);
  ASSERT_TRUE(empty.ok()) << empty.message;
  EXPECT_TRUE(empty.value.kvs.empty());
  EXPECT_EQ(empty.value.remaining, 0);

  // A revision the store has not reached yet.
  ListRequest future;
  future.prefix = "/p/";
  future.revision = latest.value.revision + 1000;
  EXPECT_EQ(s->list(future).code, Code::Conflict);
}

TYPED_TEST(StorageConformance, CompactionKeepsLatestValuesAndExpiresOldRevisions) {
  Storage* s = this->store_.get();
  auto h = testutil::writeCompactedHistory(*s, "/c/");
  ASSERT_TRUE(h.ok);
  int64_t cut = h.cut;
  EXPECT_EQ(s->compactedRevision(), cut);
  EXPECT_EQ(s->get("/c/a").value.value, "2");
  EXPECT_EQ(s->get("/c/a").value.mod_revision, h.a_updated);
  EXPECT_EQ(s->get("/c/b").code, Code::NotFound);

  ListRequest old;
  old.prefix = "/c/";
  old.revision = h.a_created;
  auto l = s->list(old);
  EXPECT_EQ(l.code, Code::Compacted) << l.message;
  old.revision = cut;  // the compaction revision itself is kept
  auto atCut = s->list(old);
  ASSERT_TRUE(atCut.ok()) << atCut.message;
  EXPECT_EQ(atCut.value.kvs.size(), 1u);

  auto w = s->watch("/c/", h.a_created, ignoreEvents);
  EXPECT_EQ(w.code, Code::Compacted);
  auto fromCut = s->watch("/c/", cut, ignoreEvents);
  EXPECT_TRUE(fromCut.ok()) << fromCut.message;
  fromCut.value.reset();

  // Compacting at or below what is already compacted is a no-op that succeeds.
  auto again = s->compact(h.a_created);
  ASSERT_TRUE(again.ok()) << again.message;
  EXPECT_EQ(again.value, cut);
  EXPECT_EQ(s->compactedRevision(), cut);

  // Beyond the current revision compacts to the current one.
  ASSERT_TRUE(s->create("/c/late", "x").ok());
  int64_t now = s->currentRevision();
  auto far = s->compact(now + 1000);
  ASSERT_TRUE(far.ok()) << far.message;
  EXPECT_EQ(far.value, now);
  // Revisions keep increasing after compaction.
  auto next = s->create("/c/next", "x");
  ASSERT_TRUE(next.ok()) << next.message;
  EXPECT_EQ(next.value, now + 1);
}

TYPED_TEST(StorageConformance, WatchReplaysHistoryThenFollowsLiveWrites) {
  Storage* s = this->store_.get();
  auto r1 = s->create("/w/a", "1");
  ASSERT_TRUE(r1.ok()) << r1.message;
  auto r2 = s->update("/w/a", "2", r1.value);
  ASSERT_TRUE(r2.ok());
  ASSERT_TRUE(s->create("/x/ignored", "x").ok());
  auto r3 = s->remove("/w/a", r2.value);
  ASSERT_TRUE(r3.ok());

  WatchRecorder rec;
  auto w = s->watch("/w/", r1.value - 1, rec.callback());
  ASSERT_TRUE(w.ok()) << w.message;
  if (TypeParam::kReplaysBeforeWatchReturns) {
    EXPECT_EQ(rec.events().size(), 3u) << "history was not replayed before watch() returned";
  }
  ASSERT_TRUE(rec.waitForEvents(3)) << "history was not replayed";
  {
    auto seen = rec.events();
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_TRUE(seen[0].isCreate());
    EXPECT_EQ(seen[0].kv.key, "/w/a");
    EXPECT_EQ(seen[0].kv.value, "1");
    EXPECT_EQ(seen[0].kv.mod_revision, r1.value);
    EXPECT_EQ(seen[1].type, Event::Type::Put);
    EXPECT_FALSE(seen[1].isCreate());
    EXPECT_EQ(seen[1].kv.value, "2");
    EXPECT_EQ(seen[1].kv.create_revision, r1.value);
    EXPECT_EQ(seen[1].kv.mod_revision, r2.value);
    EXPECT_EQ(seen[2].type, Event::Type::Delete);
    EXPECT_EQ(seen[2].kv.key, "/w/a");
    EXPECT_EQ(seen[2].kv.value, "");
    EXPECT_EQ(seen[2].kv.mod_revision, r3.value.mod_revision);
    EXPECT_EQ(seen[2].kv.create_revision, r1.value);
    ASSERT_TRUE(seen[2].prev.has_value());
    EXPECT_EQ(seen[2].prev->value, "2");
    EXPECT_EQ(seen[2].prev->mod_revision, r2.value);
  }

  auto r4 = s->create("/w/b", "live");
  ASSERT_TRUE(r4.ok());
  // Delivered before create() returned.
  EXPECT_EQ(rec.events().size(), 4u);
  EXPECT_EQ(rec.lastRevision(), r4.value);
  auto r5 = s->update("/w/b", "live2", r4.value);
  ASSERT_TRUE(r5.ok());
  ASSERT_TRUE(s->create("/x/also-ignored", "x").ok());
  auto seen = rec.events();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[3].kv.key, "/w/b");
  EXPECT_TRUE(seen[3].isCreate());
  EXPECT_EQ(seen[4].kv.value, "live2");
  for (const Event& e : seen) EXPECT_EQ(e.kv.key.rfind("/w/", 0), 0u) << e.kv.key;
  this->expectOrdered(rec);
  EXPECT_GE(s->currentRevision(), r5.value);

  // A watch from 0 replays everything still kept.
  WatchRecorder all;
  auto w0 = s->watch("/w/", 0, all.callback());
  ASSERT_TRUE(w0.ok()) << w0.message;
  ASSERT_TRUE(all.waitForEvents(5));
  EXPECT_EQ(all.events().size(), 5u);
  this->expectOrdered(all);

  // No delivery after the handle is gone.
  w.value.reset();
  ASSERT_TRUE(s->create("/w/c", "after").ok());
  EXPECT_EQ(rec.events().size(), 5u);
  EXPECT_TRUE(all.sawKey("/w/c"));
}

TYPED_TEST(StorageConformance, WriteAnswersOnlyAfterCoveringWatchesDeliveredIt) {
  Storage* s = this->store_.get();
  WatchRecorder rec;
  auto w = s->watch("/ryw/", s->currentRevision(), rec.callback());
  ASSERT_TRUE(w.ok()) << w.message;

  // No waiting in the test: each write's answer implies the watch already has it.
  for (int i = 0; i < 20; ++i) {
    std::string key = "/ryw/k" + std::to_string(i);
    auto r = s->create(key, "v");
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_GE(rec.lastRevision(), r.value)
        << "create of " << key << " answered before the watch delivered it";
    EXPECT_TRUE(rec.sawKey(key));
  }
  auto up = s->update("/ryw/k0", "v2", 0);
  ASSERT_TRUE(up.ok());
  EXPECT_GE(rec.lastRevision(), up.value);
  auto del = s->remove("/ryw/k1", 0);
  ASSERT_TRUE(del.ok());
  EXPECT_GE(rec.lastRevision(), del.value.mod_revision);

  // A slow callback holds the writer until it has run.
  rec.delay_ms = 300;
  auto t0 = SteadyClock::now();
  auto slow = s->create("/ryw/slow", "v");
  ASSERT_TRUE(slow.ok()) << slow.message;
  EXPECT_GE(msSince(t0), 250);
  EXPECT_GE(rec.lastRevision(), slow.value);
  EXPECT_EQ(rec.running.load(), 0);
  rec.delay_ms = 0;

  // A write outside the watch's prefix also moves it (an empty batch) before it answers:
  // every watch reaches every revision.
  auto elsewhere = s->create("/elsewhere/x", "v");
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.message;
  EXPECT_GE(rec.lastRevision(), elsewhere.value);
  EXPECT_FALSE(rec.sawKey("/elsewhere/x"));
  this->expectOrdered(rec);
}

TYPED_TEST(StorageConformance, DestroyingTheHandleStopsCallbacks) {
  Storage* s = this->store_.get();
  WatchRecorder rec;
  rec.delay_ms = 200;
  auto w = s->watch("/d/", s->currentRevision(), rec.callback());
  ASSERT_TRUE(w.ok()) << w.message;
  std::jthread writer([&] {  // joined on every path out, including a failed ASSERT
    for (int i = 0; i < 5; ++i) (void)s->create("/d/k" + std::to_string(i), "v");
  });
  ASSERT_TRUE(rec.waitForRunning()) << "no callback started";

  auto t0 = SteadyClock::now();
  w.value.reset();
  EXPECT_LT(msSince(t0), 2000) << "stopping a watch must be prompt";
  EXPECT_EQ(rec.running.load(), 0) << "a callback was still running after the handle was destroyed";
  size_t calls = rec.calls();
  writer.join();  // its writes no longer wait for the stopped watch
  // A write is delivered to every live watch before it is answered: had the stopped
  // watch still been registered, it would have had this one by now.
  ASSERT_TRUE(s->create("/d/after", "v").ok());
  EXPECT_EQ(rec.calls(), calls);
  EXPECT_FALSE(rec.sawKey("/d/after"));

  // An idle watch (nothing to deliver) also stops promptly.
  WatchRecorder idle;
  auto w2 = s->watch("/idle-stop/", s->currentRevision(), idle.callback());
  ASSERT_TRUE(w2.ok()) << w2.message;
  t0 = SteadyClock::now();
  w2.value.reset();
  EXPECT_LT(msSince(t0), 2000);
}

TYPED_TEST(StorageConformance, ConcurrentWritersGetUniqueRevisions) {
  Storage* s = this->store_.get();
  constexpr int kThreads = 16, kPer = 20;
  std::mutex mu;
  std::set<int64_t> revs;
  {
    std::vector<std::jthread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&, t] {
        for (int i = 0; i < kPer; ++i) {
          auto r = s->create("/g/" + std::to_string(t) + "/" + std::to_string(i), "v");
          EXPECT_TRUE(r.ok()) << r.message;
          std::lock_guard<std::mutex> g(mu);
          revs.insert(r.value);
        }
      });
  }
  EXPECT_EQ(revs.size(), static_cast<size_t>(kThreads * kPer));
  EXPECT_EQ(*revs.rbegin(), s->currentRevision());
  ListRequest all;
  all.prefix = "/g/";
  auto l = s->list(all);
  ASSERT_TRUE(l.ok()) << l.message;
  EXPECT_EQ(l.value.kvs.size(), static_cast<size_t>(kThreads * kPer));
}

TYPED_TEST(StorageConformance, ConsistentRevisionCoversAcknowledgedWrites) {
  Storage* s = this->store_.get();
  auto r = s->create("/cr/a", "1");
  ASSERT_TRUE(r.ok()) << r.message;
  auto c = s->consistentRevision();
  ASSERT_TRUE(c.ok()) << c.message;
  EXPECT_GE(c.value, r.value);
  EXPECT_GE(s->currentRevision(), r.value);
}

TYPED_TEST(StorageConformance, ShutdownRefusesWritesButNotReads) {
  Storage* s = this->store_.get();
  auto c = s->create("/s/a", "1");
  ASSERT_TRUE(c.ok());
  s->shutdown();
  EXPECT_EQ(s->create("/s/b", "1").code, Code::Unavailable);
  EXPECT_EQ(s->update("/s/a", "2", 0).code, Code::Unavailable);
  EXPECT_EQ(s->remove("/s/a", 0).code, Code::Unavailable);
  EXPECT_EQ(s->compact(c.value).code, Code::Unavailable);
  EXPECT_EQ(s->get("/s/a").value.value, "1");
  s->shutdown();  // twice is fine
}

// Two API servers on one store, each with its own compactor (storage/compactor).
TYPED_TEST(StorageConformance, CompactorCompactsToTheRevisionOfTheRoundBeforeAndServersTakeTurns) {
  Storage* s = this->store_.get();
  Compactor a(*s), b(*s);
  ASSERT_TRUE(s->create("/k", "1").ok());
  auto first = a.round();  // notes the revision, compacts nothing
  ASSERT_TRUE(first.ok()) << first.message;
  EXPECT_EQ(first.value, 0);
  ASSERT_TRUE(b.round().ok());
  int64_t seen = s->currentRevision();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(s->update("/k", std::to_string(i), 0).ok());

  auto r = a.round();  // a's turn: to the revision of its first round
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.value, seen);
  EXPECT_EQ(s->compactedRevision(), seen);
  // b saw the key move: it skips this interval rather than compacting again.
  auto skipped = b.round();
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ(skipped.value, 0);
  // History younger than one round is kept.
  ListRequest at;
  at.prefix = "/k";
  at.revision = seen + 1;
  EXPECT_TRUE(s->list(at).ok());
  // a keeps its turn while nobody else moves the key.
  int64_t next = s->currentRevision();
  auto again = a.round();
  ASSERT_TRUE(again.ok());
  EXPECT_GE(again.value, seen);
  EXPECT_LE(again.value, next);
}

TYPED_TEST(WatchCacheConformance, ServesWritesBeforeTheyAreAcknowledged) {
  auto f = this->fixture();
  ASSERT_TRUE(f.store->create("/r/a", "web|1").ok());
  f.start();
  EXPECT_EQ(f.cache->size(), 1u);
  auto r = f.store->create("/r/b", "db|1");
  ASSERT_TRUE(r.ok());
  // The create returned: the cache must already have it (read-your-writes).
  auto b = f.cache->get("/r/b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->mod_revision, r.value);
  EXPECT_EQ(f.cache->revision(), r.value);
  // Writes outside the prefix advance the revision too.
  auto other = f.store->create("/other", "x");
  EXPECT_EQ(f.cache->revision(), other.value);
}

TYPED_TEST(WatchCacheConformance, ListsAnOlderRevisionByRollingBackTheWindow) {
  auto f = this->fixture();
  f.start();
  for (char c = 'a'; c <= 'e'; ++c) ASSERT_TRUE(f.store->create(std::string("/r/") + c, "v|old").ok());
  int64_t at = f.cache->revision();
  auto cur = f.store->get("/r/b");
  ASSERT_TRUE(f.store->update("/r/b", "v|new", cur.value.mod_revision).ok());
  ASSERT_TRUE(f.store->remove("/r/c", 0).ok());
  ASSERT_TRUE(f.store->create("/r/f", "v|added").ok());
  ASSERT_TRUE(f.store->create("/r/bb", "v|added").ok());

  CacheListRequest req;
  req.prefix = "/r/";
  req.revision = at;
  req.limit = 2;
  std::vector<std::string> names;
  int64_t remainingFirst = -1;
  while (true) {
    CacheListResponse resp;
    ASSERT_EQ(f.cache->list(req, resp), CacheError::None);
    EXPECT_EQ(resp.revision, at);
    if (remainingFirst < 0) remainingFirst = resp.remaining;
    for (auto& o : resp.items) {
      names.push_back(o->name);
      if (o->name == "b") {
        EXPECT_EQ(o->json.substr(0, 5), "v|old");
      }
    }
    if (!resp.more) break;
    req.start_after = resp.last_key;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(remainingFirst, 3);

  CacheListRequest now;
  now.prefix = "/r/";
  CacheListResponse resp;
  ASSERT_EQ(f.cache->list(now, resp), CacheError::None);
  std::vector<std::string> current;
  for (auto& o : resp.items) current.push_back(o->name);
  EXPECT_EQ(current, (std::vector<std::string>{"a", "b", "bb", "d", "e", "f"}));
}

TYPED_TEST(WatchCacheConformance, OldRevisionsExpireWithTheWindow) {
  auto f = this->fixture(20);
  ASSERT_TRUE(f.store->create("/r/first", "v|x").ok());
  f.start();
  int64_t first = f.cache->revision();
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(f.store->create("/r/k" + std::to_string(i), "v|x").ok());
  CacheListRequest req;
  req.prefix = "/r/";
  req.revision = first;
  CacheListResponse resp;
  EXPECT_EQ(f.cache->list(req, resp), CacheError::Expired);
  auto sink = std::make_shared<testutil::CacheRecorder>();
  std::unique_ptr<CacheWatch> h;
  CacheWatchRequest w;
  w.prefix = "/r/";
  w.after_revision = first + 1;
  EXPECT_EQ(f.cache->watch(w, sink, h), CacheError::Expired);
  w.after_revision = f.cache->oldestRevision();
  EXPECT_EQ(f.cache->watch(w, sink, h), CacheError::None);
  EXPECT_EQ(sink->summary().size(), 20u);
  w.after_revision = f.cache->revision() + 5;
  EXPECT_EQ(f.cache->watch(w, std::make_shared<testutil::CacheRecorder>(), h), CacheError::TooLarge);
}

TYPED_TEST(WatchCacheConformance, WatchFromRevisionReplaysThenFollows) {
  auto f = this->fixture();
  f.start();
  auto c1 = f.store->create("/r/a", "web|1");
  auto u1 = f.store->update("/r/a", "web|2", c1.value);
  auto d1 = f.store->remove("/r/a", u1.value);
  ASSERT_TRUE(d1.ok());
  auto sink = std::make_shared<testutil::CacheRecorder>();
  std::unique_ptr<CacheWatch> h;
  CacheWatchRequest w;
  w.prefix = "/r/";
  w.after_revision = c1.value;
  ASSERT_EQ(f.cache->watch(w, sink, h), CacheError::None);
  auto c2 = f.store->create("/r/b", "web|3");
  ASSERT_TRUE(c2.ok());
  auto s = sink->summary();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], "MODIFIED a web|2@" + std::to_string(u1.value));
  // A deleted object carries the deletion's revision.
  EXPECT_EQ(s[1], "DELETED a web|2@" + std::to_string(d1.value.mod_revision));
  EXPECT_EQ(s[2], "ADDED b web|3@" + std::to_string(c2.value));
  h.reset();
  ASSERT_TRUE(f.store->create("/r/c", "x|1").ok());
  EXPECT_EQ(sink->summary().size(), 3u);
}

TYPED_TEST(WatchCacheConformance, InitialStateForRevisionZero) {
  auto f = this->fixture();
  ASSERT_TRUE(f.store->create("/r/a", "web|1").ok());
  ASSERT_TRUE(f.store->create("/r/b", "db|1").ok());
  f.start();
  auto sink = std::make_shared<testutil::CacheRecorder>();
  std::unique_ptr<CacheWatch> h;
  CacheWatchRequest w;
  w.prefix = "/r/";
  w.after_revision = 0;
  ASSERT_EQ(f.cache->watch(w, sink, h), CacheError::None);
  auto s = sink->summary();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].substr(0, 7), "ADDED a");
  EXPECT_EQ(s[1].substr(0, 7), "ADDED b");
  f.cache->sendBookmarks();
  std::lock_guard<std::mutex> g(sink->mu);
  ASSERT_EQ(sink->bookmarks.size(), 1u);
  EXPECT_EQ(sink->bookmarks[0], f.cache->revision());
}
