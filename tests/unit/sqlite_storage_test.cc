// SqliteStorage's own behaviour: group commit, durability across a reopen and a kill -9.
// The Storage contract both backends share is storage_conformance_test.cc.
#include "storage/sqlite_storage.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <set>
#include <thread>

#include "storage_test_util.h"
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

// Compaction and the revision counter are durable: after a reopen the store continues
// from where it was (the rest of compaction is storage_conformance_test.cc's).
TEST(SqliteStorage, CompactionAndRevisionsSurviveAReopen) {
  testutil::TempDir dir;
  auto s = openAt(dir.path());
  auto h = testutil::writeCompactedHistory(*s, "/c/");
  ASSERT_TRUE(h.ok);
  int64_t cut = h.cut;
  s.reset();
  auto s2 = openAt(dir.path());
  EXPECT_EQ(s2->currentRevision(), cut);
  EXPECT_EQ(s2->compactedRevision(), cut);
  EXPECT_EQ(s2->get("/c/a").value.mod_revision, h.a_updated);
  ListRequest old;
  old.prefix = "/c/";
  old.revision = h.a_created;
  EXPECT_EQ(s2->list(old).code, Code::Compacted);
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
