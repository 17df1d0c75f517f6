// The watch cache's own logic over the SQLite backend: selector transitions, failing and
// self-owning sinks, field indexes. What it expects of a backend (read-your-writes,
// history, rollback lists, revision 0) is in storage_conformance_test.cc, on every backend.
#include "storage/watch_cache.h"

#include <gtest/gtest.h>

#include <mutex>
#include <random>

#include "storage/sqlite_storage.h"
#include "test_util.h"
#include "watch_cache_test_util.h"

using namespace shepherd;
using namespace shepherd::storage;
using testutil::decode;
using Recorder = testutil::CacheRecorder;

namespace {

struct Fixture {
  testutil::TempDir dir;
  std::unique_ptr<SqliteStorage> store;
  std::unique_ptr<WatchCache> cache;
  explicit Fixture(size_t window = 100, std::vector<std::string> indexed = {}) {
    SqliteOptions o;
    o.path = dir.path() + "/db";
    store = std::move(SqliteStorage::open(o).value);
    cache = std::make_unique<WatchCache>(*store, "/r/", decode, window, indexed);
  }
  void start() { ASSERT_TRUE(cache->start().ok()); }
};

}  // namespace

TEST(WatchCache, SelectorTransitionsBecomeAddedAndDeleted) {
  Fixture f;
  f.start();
  auto c = f.store->create("/r/a", "web|1");
  auto sink = std::make_shared<Recorder>();
  std::unique_ptr<CacheWatch> h;
  CacheWatchRequest w;
  w.prefix = "/r/";
  w.after_revision = f.cache->revision();
  w.predicate = [](const CachedObject& o) { return *o.label("app") == "web"; };
  ASSERT_EQ(f.cache->watch(w, sink, h), CacheError::None);
  auto u1 = f.store->update("/r/a", "db|2", c.value);    // leaves the selector
  auto u2 = f.store->update("/r/a", "db|3", u1.value);   // still outside
  auto u3 = f.store->update("/r/a", "web|4", u2.value);  // enters again
  auto s = sink->summary();
  ASSERT_EQ(s.size(), 2u);
  // The DELETED event shows the last matching state, stamped with the event's revision.
  EXPECT_EQ(s[0], "DELETED a web|1@" + std::to_string(u1.value));
  EXPECT_EQ(s[1], "ADDED a web|4@" + std::to_string(u3.value));
}

TEST(WatchCache, ASinkThatFailsIsDropped) {
  Fixture f;
  f.start();
  struct Failing : WatchSink {
    int calls = 0;
    bool deliver(WatchEventType, const ObjectPtr&) override { return ++calls < 2; }
    bool bookmark(int64_t) override { return true; }
  };
  auto sink = std::make_shared<Failing>();
  std::unique_ptr<CacheWatch> h;
  CacheWatchRequest w;
  w.prefix = "/r/";
  w.after_revision = f.cache->revision();
  ASSERT_EQ(f.cache->watch(w, sink, h), CacheError::None);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(f.store->create("/r/k" + std::to_string(i), "x|1").ok());
  EXPECT_EQ(sink->calls, 2);
}

// A sink that owns its own registration (as the HTTP watch stream does) is destroyed
// when the cache drops it; that must not deadlock on the cache's lock.
TEST(WatchCache, DroppedSinkMayStopItsOwnWatch) {
  Fixture f;
  f.start();
  struct SelfOwning : WatchSink {
    std::unique_ptr<CacheWatch> handle;
    bool deliver(WatchEventType, const ObjectPtr&) override { return false; }
    bool bookmark(int64_t) override { return false; }
  };
  auto sink = std::make_shared<SelfOwning>();
  CacheWatchRequest w;
  w.prefix = "/r/";
  w.after_revision = f.cache->revision();
  ASSERT_EQ(f.cache->watch(w, sink, sink->handle), CacheError::None);
  std::weak_ptr<SelfOwning> weak = sink;
  sink.reset();  // the cache now holds the only reference
  ASSERT_TRUE(f.store->create("/r/a", "x|1").ok());
  EXPECT_TRUE(weak.expired());
}

// An indexed list must answer exactly what a scan with the same predicate answers: same
// items in the same order, same paging, same remaining counts, at the current revision
// and at older ones, after creates, moves between values, deletes and re-creates.
TEST(WatchCache, IndexedListsAnswerLikeAScan) {
  Fixture f(10000, {"node"});
  std::mt19937 rng(7);
  auto node = [&] { return "n" + std::to_string(rng() % 5); };
  auto key = [&] { return std::string(rng() % 2 ? "/r/a/" : "/r/b/") + "k" + std::to_string(rng() % 60); };
  auto mutate = [&](int n) {
    for (int i = 0; i < n; ++i) {
      std::string k = key();
      auto cur = f.store->get(k);
      if (!cur.ok()) {
        ASSERT_TRUE(f.store->create(k, node() + "|" + std::to_string(i)).ok());
      } else if (rng() % 4 == 0) {
        ASSERT_TRUE(f.store->remove(k, cur.value.mod_revision).ok());
      } else {
        ASSERT_TRUE(f.store->update(k, node() + "|" + std::to_string(i), cur.value.mod_revision).ok());
      }
    }
  };
  mutate(150);  // some objects exist before the cache loads
  f.start();
  std::vector<int64_t> revisions;
  for (int round = 0; round < 4; ++round) {
    revisions.push_back(f.cache->revision());
    mutate(120);
  }
  revisions.push_back(0);  // current
  int compared = 0, nonEmpty = 0;
  for (int64_t rev : revisions)
    for (std::string prefix : {"/r/", "/r/a/"})
      for (int64_t limit : {0, 7})
        for (int n = 0; n < 6; ++n) {  // n5 never occurs
          std::string value = "n" + std::to_string(n);
          auto pages = [&](bool indexed) {
            std::vector<std::string> seen;
            CacheListRequest req;
            req.prefix = prefix;
            req.limit = limit;
            req.revision = rev;
            req.predicate = [value](const CachedObject& o) { return *o.field("node") == value; };
            if (indexed) {
              req.index_field = "node";
              req.index_value = value;
            }
            while (true) {
              CacheListResponse out;
              EXPECT_EQ(f.cache->list(req, out), CacheError::None);
              for (auto& o : out.items) seen.push_back(o->key + "=" + o->json);
              seen.push_back("remaining " + std::to_string(out.remaining));
              if (!out.more) break;
              req.start_after = out.last_key;
              req.revision = out.revision;
            }
            return seen;
          };
          auto scanned = pages(false);
          EXPECT_EQ(pages(true), scanned)
              << "rev " << rev << " prefix " << prefix << " limit " << limit << " " << value;
          ++compared;
          if (scanned.size() > 2) ++nonEmpty;
        }
  EXPECT_EQ(compared, 5 * 2 * 2 * 6);
  EXPECT_GT(nonEmpty, 40);  // the comparison saw real answers, not only empty ones
}
