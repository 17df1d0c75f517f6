#include "storage/watch_cache.h"

#include <gtest/gtest.h>

#include <mutex>
#include <random>

#include "storage/sqlite_storage.h"
#include "test_util.h"

using namespace shepherd;
using namespace shepherd::storage;

namespace {

// Values are "label-value|payload"; the decoder exposes label "app".
ObjectPtr decode(const std::string& key, const std::string& value, int64_t rev, int64_t crev) {
  auto o = std::make_shared<CachedObject>();
  o->key = key;
  o->name = key.substr(key.rfind('/') + 1);
  o->mod_revision = rev;
  o->create_revision = crev;
  o->labels.emplace_back("app", value.substr(0, value.find('|')));
  o->fields.emplace_back("node", value.substr(0, value.find('|')));
  // Like the real decoder, re-stamping replaces the revision rather than adding one.
  o->json = value.substr(0, value.find('@')) + "@" + std::to_string(rev);
  return o;
}

struct Recorder : WatchSink {
  std::mutex mu;
  std::vector<std::pair<WatchEventType, ObjectPtr>> events;
  std::vector<int64_t> bookmarks;
  bool deliver(WatchEventType t, const ObjectPtr& o) override {
    std::lock_guard<std::mutex> g(mu);
    events.emplace_back(t, o);
    return true;
  }
  bool bookmark(int64_t rev) override {
    std::lock_guard<std::mutex> g(mu);
    bookmarks.push_back(rev);
    return true;
  }
  std::vector<std::string> summary() {
    std::lock_guard<std::mutex> g(mu);
    std::vector<std::string> out;
    for (auto& [t, o] : events)
      out.push_back(std::string(watchEventTypeName(t)) + " " + o->name + " " + o->json);
    return out;
  }
};

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

TEST(WatchCache, ServesWritesBeforeTheyAreAcknowledged) {
  Fixture f;
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

TEST(WatchCache, ListsAnOlderRevisionByRollingBackTheWindow) {
  Fixture f;
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

TEST(WatchCache, OldRevisionsExpireWithTheWindow) {
  Fixture f(20);
  ASSERT_TRUE(f.store->create("/r/first", "v|x").ok());
  f.start();
  int64_t first = f.cache->revision();
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(f.store->create("/r/k" + std::to_string(i), "v|x").ok());
  CacheListRequest req;
  req.prefix = "/r/";
  req.revision = first;
  CacheListResponse resp;
  EXPECT_EQ(f.cache->list(req, resp), CacheError::Expired);
  auto sink = std::make_shared<Recorder>();
  std::unique_ptr<CacheWatch> h;
  CacheWatchRequest w;
  w.prefix = "/r/";
  w.after_revision = first + 1;
  EXPECT_EQ(f.cache->watch(w, sink, h), CacheError::Expired);
  w.after_revision = f.cache->oldestRevision();
  EXPECT_EQ(f.cache->watch(w, sink, h), CacheError::None);
  EXPECT_EQ(sink->summary().size(), 20u);
  w.after_revision = f.cache->revision() + 5;
  EXPECT_EQ(f.cache->watch(w, std::make_shared<Recorder>(), h), CacheError::TooLarge);
}

TEST(WatchCache, WatchFromRevisionReplaysThenFollows) {
  Fixture f;
  f.start();
  auto c1 = f.store->create("/r/a", "web|1");
  auto u1 = f.store->update("/r/a", "web|2", c1.value);
  auto d1 = f.store->remove("/r/a", u1.value);
  ASSERT_TRUE(d1.ok());
  auto sink = std::make_shared<Recorder>();
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

TEST(WatchCache, InitialStateForRevisionZero) {
  Fixture f;
  ASSERT_TRUE(f.store->create("/r/a", "web|1").ok());
  ASSERT_TRUE(f.store->create("/r/b", "db|1").ok());
  f.start();
  auto sink = std::make_shared<Recorder>();
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
