#include "storage/sqlite_storage.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <set>
#include <thread>

#include "storage/compactor.h"
#include "test_util.h"

using namespace shepherd;
using namespace shepherd::storage;

namespace {

std::unique_ptr<SqliteStorage> openAt(const std::string& dir) {
  SqliteOptions o;
  o.path = dir + "/state.db";
  auto s = SqliteStorage::open(o);
  EXPECT_TRUE(s.ok()) << s.message;
  return std::move(s.value);
}

}  // namespace

TEST(SqliteStorage, RevisionsIncreaseGloballyAndCasGuardsUpdates) {
  testutil::TempDir dir;
  auto s = openAt(dir.path());
  auto a = s->create("/a", "1");
  ASSERT_TRUE(a.ok());
  auto b = s->create("/b", "1");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a.value + 1, b.value);
  EXPECT_EQ(s->currentRevision(), b.value);

  auto dup = s->create("/a", "2");
  EXPECT_EQ(dup.code, Code::Exists);

  auto stale = s->update("/a", "2", a.value - 1 == 0 ? 999 : a.value - 1);
  EXPECT_EQ(stale.code, Code::Conflict);
  EXPECT_EQ(stale.current_revision, a.value);

  auto up = s->update("/a", "2", a.value);
  ASSERT_TRUE(up.ok());
  EXPECT_GT(up.value, b.value);
  auto got = s->get("/a");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.value.value, "2");
  EXPECT_EQ(got.value.create_revision, a.value);
  EXPECT_EQ(got.value.mod_revision, up.value);

  auto unconditional = s->update("/a", "3", 0);
  ASSERT_TRUE(unconditional.ok());

  auto missing = s->update("/zzz", "x", 0);
  EXPECT_EQ(missing.code, Code::NotFound);

  auto del = s->remove("/a", up.value);  // stale
  EXPECT_EQ(del.code, Code::Conflict);
  del = s->remove("/a", unconditional.value);
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del.value.value, "3");
  EXPECT_EQ(s->get("/a").code, Code::NotFound);
  // A key can be created again after deletion, as a new incarnation.
  auto again = s->create("/a", "4");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(s->get("/a").value.create_revision, again.value);
}

TEST(SqliteStorage, ListPagesAtOneRevisionWhileWritesContinue) {
  testutil::TempDir dir;
  auto s = openAt(dir.path());
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(s->create("/p/k" + std::to_string(100 + i), "v").ok());
  ASSERT_TRUE(s->create("/q/other", "v").ok());

  ListRequest req;
  req.prefix = "/p/";
  req.limit = 10;
  auto first = s->list(req);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first.value.kvs.size(), 10u);
  EXPECT_EQ(first.value.remaining, 15);
  int64_t rev = first.value.revision;

  // Writes after the first page must not show in later pages read at `rev`.
  ASSERT_TRUE(s->create("/p/k000", "new").ok());
  ASSERT_TRUE(s->remove("/p/k124", 0).ok());
  auto cur = s->get("/p/k115");
  ASSERT_TRUE(s->update("/p/k115", "changed", cur.value.mod_revision).ok());

  std::vector<std::string> keys;
  for (auto& kv : first.value.kvs) keys.push_back(kv.key);
  std::string after = keys.back();
  while (true) {
    ListRequest next;
    next.prefix = "/p/";
    next.limit = 10;
    next.revision = rev;
    next.start_after = after;
    auto page = s->list(next);
    ASSERT_TRUE(page.ok()) << page.message;
    EXPECT_EQ(page.value.revision, rev);
    for (auto& kv : page.value.kvs) {
      keys.push_back(kv.key);
      if (kv.key == "/p/k115") {
        EXPECT_EQ(kv.value, "v");
      }
    }
    if (page.value.remaining == 0) break;
    after = keys.back();
  }
  ASSERT_EQ(keys.size(), 25u);
  EXPECT_EQ(keys.front(), "/p/k100");
  EXPECT_EQ(keys.back(), "/p/k124");
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));

  // At the current revision the changes are visible.
  ListRequest now;
  now.prefix = "/p/";
  auto latest = s->list(now);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest.value.kvs.size(), 25u);  // +k000, -k124
  EXPECT_EQ(latest.value.kvs.front().key, "/p/k000");
}

TEST(SqliteStorage, WatchReplaysHistoryThenFollowsLiveInOrder) {
  testutil::TempDir dir;
  auto s = openAt(dir.path());
  auto r1 = s->create("/w/a", "1");
  auto r2 = s->update("/w/a", "2", r1.value);
  ASSERT_TRUE(s->create("/x/ignored", "x").ok());
  auto r3 = s->remove("/w/a", r2.value);
  ASSERT_TRUE(r3.ok());

  std::mutex mu;
  std::vector<Event> seen;
  int64_t lastProgress = 0;
  auto w = s->watch("/w/", r1.value - 1, [&](const std::vector<Event>& evs, int64_t rev) {
    std::lock_guard<std::mutex> g(mu);
    for (auto& e : evs) seen.push_back(e);
    lastProgress = rev;
  });
  ASSERT_TRUE(w.ok());
  {
    std::lock_guard<std::mutex> g(mu);
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_TRUE(seen[0].isCreate());
    EXPECT_EQ(seen[1].kv.value, "2");
    EXPECT_EQ(seen[2].type, Event::Type::Delete);
    ASSERT_TRUE(seen[2].prev.has_value());
    EXPECT_EQ(seen[2].prev->value, "2");
  }
  auto r4 = s->create("/w/b", "live");
  ASSERT_TRUE(r4.ok());
  {
    std::lock_guard<std::mutex> g(mu);
    ASSERT_EQ(seen.size(), 4u);  // delivered before create() returned
    EXPECT_EQ(seen[3].kv.key, "/w/b");
    EXPECT_EQ(lastProgress, r4.value);
    for (size_t i = 1; i < seen.size(); ++i) EXPECT_LT(seen[i - 1].kv.mod_revision, seen[i].kv.mod_revision);
  }
  w.value.reset();
  ASSERT_TRUE(s->create("/w/c", "after").ok());
  std::lock_guard<std::mutex> g(mu);
  EXPECT_EQ(seen.size(), 4u);  // no delivery after the handle is gone
}

TEST(SqliteStorage, CompactionKeepsLatestValuesAndExpiresOldRevisions) {
  testutil::TempDir dir;
  auto s = openAt(dir.path());
  auto a = s->create("/c/a", "1");
  auto a2 = s->update("/c/a", "2", a.value);
  auto b = s->create("/c/b", "1");
  ASSERT_TRUE(s->remove("/c/b", b.value).ok());
  int64_t cut = s->currentRevision();
  ASSERT_TRUE(s->compact(cut).ok());
  EXPECT_EQ(s->compactedRevision(), cut);
  EXPECT_EQ(s->get("/c/a").value.value, "2");
  EXPECT_EQ(s->get("/c/a").value.mod_revision, a2.value);
  EXPECT_EQ(s->get("/c/b").code, Code::NotFound);
  ListRequest old;
  old.prefix = "/c/";
  old.revision = a.value;
  EXPECT_EQ(s->list(old).code, Code::Compacted);
  auto w = s->watch("/c/", a.value, [](const std::vector<Event>&, int64_t) {});
  EXPECT_EQ(w.code, Code::Compacted);
  // Revisions keep increasing after compaction and a reopen.
  s.reset();
  auto s2 = openAt(dir.path());
  EXPECT_EQ(s2->currentRevision(), cut);
  auto n = s2->create("/c/new", "x");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n.value, cut + 1);
}

TEST(SqliteStorage, ConcurrentWritersAreGroupCommitted) {
  testutil::TempDir dir;
  auto s = openAt(dir.path());
  constexpr int kThreads = 32, kPer = 40;
  std::vector<std::thread> ts;
  std::mutex mu;
  std::set<int64_t> revs;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < kPer; ++i) {
        auto r = s->create("/g/" + std::to_string(t) + "/" + std::to_string(i), "v");
        ASSERT_TRUE(r.ok());
        std::lock_guard<std::mutex> g(mu);
        revs.insert(r.value);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(revs.size(), static_cast<size_t>(kThreads * kPer));  // unique revisions
  EXPECT_EQ(*revs.rbegin(), s->currentRevision());
  // Far fewer commits than writes: concurrent writes shared transactions.
  EXPECT_LT(s->batchesCommitted(), s->writesCommitted());
}

// A child process writes as fast as it can and reports each acknowledged revision on a
// pipe; we kill -9 it mid-stream and check every acknowledged write survived.
TEST(SqliteStorage, AcknowledgedWritesSurviveKill9) {
  testutil::TempDir dir;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    SqliteOptions o;
    o.path = dir.path() + "/state.db";
    auto st = SqliteStorage::open(o);
    if (!st.ok()) _exit(3);
    std::vector<std::thread> ws;
    std::mutex pipeMu;
    for (int t = 0; t < 8; ++t)
      ws.emplace_back([&, t] {
        for (int i = 0;; ++i) {
          std::string key = "/k/" + std::to_string(t) + "-" + std::to_string(i);
          auto r = st.value->create(key, "value-" + key);
          if (!r.ok()) _exit(4);
          std::string line = key + " " + std::to_string(r.value) + "\n";
          std::lock_guard<std::mutex> g(pipeMu);
          if (write(fds[1], line.data(), line.size()) < 0) _exit(5);
        }
      });
    for (auto& w : ws) w.join();
    _exit(0);
  }
  close(fds[1]);
  FILE* in = fdopen(fds[0], "r");
  std::vector<std::pair<std::string, int64_t>> acked;
  char key[256];
  long long rev;
  while (acked.size() < 1500 && std::fscanf(in, "%255s %lld", key, &rev) == 2) acked.emplace_back(key, rev);
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  // Drain what was acknowledged before the kill landed.
  while (std::fscanf(in, "%255s %lld", key, &rev) == 2) acked.emplace_back(key, rev);
  fclose(in);
  ASSERT_GE(acked.size(), 1500u);

  auto s = openAt(dir.path());
  for (auto& [k, r] : acked) {
    auto got = s->get(k);
    ASSERT_TRUE(got.ok()) << k << " (acknowledged at revision " << r << ") was lost";
    EXPECT_EQ(got.value.mod_revision, r);
    EXPECT_EQ(got.value.value, "value-" + k);
  }
  EXPECT_GE(s->currentRevision(), acked.back().second);
}

TEST(Compactor, CompactsToTheRevisionOfTheRoundBeforeAndServersTakeTurns) {
  testutil::TempDir dir;
  auto s = openAt(dir.path());
  // Two API servers on one store, each with its own compactor.
  Compactor a(*s), b(*s);
  ASSERT_TRUE(s->create("/k", "1").ok());
  auto first = a.round();  // notes the revision, compacts nothing
  ASSERT_TRUE(first.ok());
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
