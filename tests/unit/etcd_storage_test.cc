// EtcdStorage's own behaviour against a real single-member etcd (Debian's etcd-server,
// 3.4.x) started per test on free loopback ports (tests/support/etcd_process). The Storage
// contract both backends share is storage_conformance_test.cc; here are what only etcd
// has: other clients on the same etcd, the shared watch stream's buffer, endpoints, key
// prefixes. There is no skip: without etcd on PATH every test fails with a message saying so.
#include "storage/etcd_storage.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/free_port.h"
#include "storage_test_util.h"
#include "test_util.h"
#include "tests/support/etcd_process.h"

using namespace shepherd;
using namespace shepherd::storage;
using namespace std::chrono_literals;
using Recorder = testutil::WatchRecorder;

namespace {

void ignoreEvents(const std::vector<Event>&, int64_t) {}

class EtcdStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error = etcd_.start();
    ASSERT_TRUE(error.empty()) << error;
  }
  // Also runs when SetUp failed; the process is stopped by PID.
  void TearDown() override { etcd_.stop(); }

  EtcdOptions options() const {
    EtcdOptions o;
    o.endpoints = {etcd_.endpoint()};
    o.request_timeout_ms = 5000;
    return o;
  }
  std::unique_ptr<EtcdStorage> openStorage(const EtcdOptions& o) {
    auto s = EtcdStorage::open(o);
    EXPECT_TRUE(s.ok()) << codeName(s.code) << ": " << s.message;
    return std::move(s.value);
  }
  std::unique_ptr<EtcdStorage> openStorage() { return openStorage(options()); }

  testsupport::EtcdProcess etcd_;  // its data in a temporary directory, removed when it stops
};

}  // namespace

TEST_F(EtcdStorageTest, ClientsThatDidNotCompactLearnItFromEtcd) {
  auto s = openStorage();
  ASSERT_TRUE(s);
  auto h = testutil::writeCompactedHistory(*s, "/c/");
  ASSERT_TRUE(h.ok);
  int64_t cut = h.cut;

  // A client that did not compact learns it from etcd, for lists and for watches.
  auto other = openStorage();
  ASSERT_TRUE(other);
  EXPECT_EQ(other->compactedRevision(), 0);
  ListRequest old;
  old.prefix = "/c/";
  old.revision = h.a_created;
  EXPECT_EQ(other->list(old).code, Code::Compacted);
  auto w2 = other->watch("/c/", cut - 1, ignoreEvents);
  EXPECT_EQ(w2.code, Code::Compacted) << w2.message;
  EXPECT_GT(other->compactedRevision(), h.a_created);
  auto fromCut = other->watch("/c/", cut, ignoreEvents);
  EXPECT_TRUE(fromCut.ok()) << fromCut.message;
  fromCut.value.reset();

  auto redo = other->compact(cut);  // already known from the refused watch: a no-op
  ASSERT_TRUE(redo.ok()) << redo.message;
  EXPECT_GE(other->compactedRevision(), cut);
  auto third = openStorage();  // knows nothing: etcd answers "compacted", which is success here
  ASSERT_TRUE(third);
  auto known = third->compact(cut);
  ASSERT_TRUE(known.ok()) << known.message;
  EXPECT_EQ(third->compactedRevision(), cut);
}

TEST_F(EtcdStorageTest, LateWatchesReplayFromTheBufferOrRewindTheStream) {
  EtcdOptions o = options();
  o.watch_buffer_bytes = 4096;  // a few events: older starts rewind the shared stream
  auto s = openStorage(o);
  ASSERT_TRUE(s);
  Recorder first;
  int64_t r0 = s->currentRevision();
  auto w1 = s->watch("/late/", r0, first.callback());
  ASSERT_TRUE(w1.ok()) << w1.message;
  std::vector<int64_t> revs;
  for (int i = 0; i < 40; ++i) {
    auto r = s->create("/late/k" + std::to_string(i), std::string(200, 'x'));
    ASSERT_TRUE(r.ok()) << r.message;
    revs.push_back(r.value);
  }
  // Recent start: replayed from the buffer. Old start: the stream rewinds; `first` must
  // not see anything twice.
  for (int64_t after : {revs[37], revs[2], r0}) {
    Recorder late;
    auto w = s->watch("/late/", after, late.callback());
    ASSERT_TRUE(w.ok()) << w.message;
    auto more = s->create("/late/after-" + std::to_string(after), "v");
    ASSERT_TRUE(more.ok()) << more.message;
    revs.push_back(more.value);
    std::vector<Event> seen = late.events();
    auto expected =
        static_cast<size_t>(std::count_if(revs.begin(), revs.end(), [&](int64_t r) { return r > after; }));
    ASSERT_EQ(seen.size(), expected) << "watch from " << after;
    EXPECT_EQ(seen.back().kv.key, "/late/after-" + std::to_string(after));
    late.expectOrdered(true);
  }
  EXPECT_EQ(first.events().size(), 43u) << "the first watch saw some event twice or missed one";
  first.expectOrdered(true);
}

TEST_F(EtcdStorageTest, ForeignWritesMoveAnIdleWatchForward) {
  // A writer that is not this EtcdStorage (another API server): its revision reaches the
  // watch through the shared stream, without an event for it.
  auto s = openStorage();
  ASSERT_TRUE(s);
  auto other = openStorage();
  ASSERT_TRUE(other);
  Recorder rec;
  auto w = s->watch("/idle/", s->currentRevision(), rec.callback());
  ASSERT_TRUE(w.ok()) << w.message;
  auto r = other->create("/busy/x", "v");
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_TRUE(rec.waitForRevision(r.value, 5s)) << "the watch never moved";
  EXPECT_TRUE(rec.events().empty());
  EXPECT_GE(s->currentRevision(), r.value);
  rec.expectOrdered(true);
}

TEST_F(EtcdStorageTest, FailsOverToTheNextEndpoint) {
  std::string dead = "http://127.0.0.1:" + std::to_string(freeLoopbackPort());
  EtcdOptions only_dead = options();
  only_dead.endpoints = {dead};
  auto refused = EtcdStorage::open(only_dead);
  EXPECT_EQ(refused.code, Code::Unavailable) << refused.message;

  EtcdOptions o = options();
  o.endpoints = {dead, etcd_.endpoint()};
  auto s = openStorage(o);
  ASSERT_TRUE(s);
  Recorder rec;
  auto w = s->watch("/f/", s->currentRevision(), rec.callback());
  ASSERT_TRUE(w.ok()) << w.message;
  auto r = s->create("/f/a", "1");
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(rec.sawKey("/f/a"));
  EXPECT_EQ(s->get("/f/a").value.value, "1");
}

TEST_F(EtcdStorageTest, KeyPrefixNamespacesEveryKey) {
  EtcdOptions o = options();
  o.key_prefix = "/tenant-a";
  auto s = openStorage(o);
  ASSERT_TRUE(s);
  auto raw = openStorage();
  ASSERT_TRUE(raw);
  Recorder rec;
  auto w = s->watch("/registry/", s->currentRevision(), rec.callback());
  ASSERT_TRUE(w.ok()) << w.message;

  ASSERT_TRUE(s->create("/registry/pods/ns/a", "1").ok());
  ASSERT_TRUE(raw->create("/registry/pods/ns/b", "outside the namespace").ok());
  EXPECT_EQ(raw->get("/tenant-a/registry/pods/ns/a").value.value, "1");
  EXPECT_EQ(s->get("/registry/pods/ns/b").code, Code::NotFound);

  ListRequest req;
  req.prefix = "/registry/";
  auto mine = s->list(req);
  ASSERT_TRUE(mine.ok()) << mine.message;
  ASSERT_EQ(mine.value.kvs.size(), 1u);
  EXPECT_EQ(mine.value.kvs[0].key, "/registry/pods/ns/a");
  // The whole namespace, with an empty prefix.
  ListRequest everything;
  auto all = s->list(everything);
  ASSERT_TRUE(all.ok()) << all.message;
  EXPECT_EQ(all.value.kvs.size(), 1u);

  auto seen = rec.events();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].kv.key, "/registry/pods/ns/a");
}

TEST_F(EtcdStorageTest, RootIsReplacedByTheKeyPrefixOnTheWire) {
  // The API server's mapping: keys under /registry, stored under --etcd-prefix.
  EtcdOptions o = options();
  o.root = "/registry";
  o.key_prefix = "/cluster-a";
  auto s = openStorage(o);
  ASSERT_TRUE(s);
  auto raw = openStorage();
  ASSERT_TRUE(raw);
  Recorder rec;
  auto w = s->watch("/registry/pods/", s->currentRevision(), rec.callback());
  ASSERT_TRUE(w.ok()) << w.message;
  ASSERT_TRUE(s->create("/registry/pods/ns/a", "1").ok());
  ASSERT_TRUE(raw->create("/cluster-ab/pods/ns/b", "a neighbour's key").ok());
  ASSERT_TRUE(s->create("/registry/pods/ns/c", "3").ok());
  EXPECT_EQ(raw->get("/cluster-a/pods/ns/a").value.value, "1");
  ListRequest req;
  req.prefix = "/registry/";
  auto mine = s->list(req);
  ASSERT_TRUE(mine.ok()) << mine.message;
  ASSERT_EQ(mine.value.kvs.size(), 2u);
  EXPECT_EQ(mine.value.kvs[0].key, "/registry/pods/ns/a");
  req.start_after = "/registry/pods/ns/a";
  auto page = s->list(req);
  ASSERT_TRUE(page.ok()) << page.message;
  ASSERT_EQ(page.value.kvs.size(), 1u);
  EXPECT_EQ(page.value.kvs[0].key, "/registry/pods/ns/c");
  auto seen = rec.events();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].kv.key, "/registry/pods/ns/a");
  EXPECT_EQ(seen[1].kv.key, "/registry/pods/ns/c");
}

// The launcher (tests/support/etcd_process): an etcd that exits at once is reported with
// the end of its log, retried on new ports, and leaves no process and no directory behind.
TEST(EtcdProcessLauncher, AFailedStartIsReportedAndCleanedUp) {
  testutil::TempDir bin, tmp;
  {
    std::ofstream fake(bin.path() + "/etcd");
    fake << "#!/bin/sh\necho \"etcd cannot start: $*\" >&2\nexit 1\n";
  }
  ASSERT_EQ(chmod((bin.path() + "/etcd").c_str(), 0755), 0);
  std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  const char* old_tmp = std::getenv("TMPDIR");
  std::string saved_tmp = old_tmp ? old_tmp : "";
  setenv("PATH", bin.path().c_str(), 1);
  setenv("TMPDIR", tmp.path().c_str(), 1);
  testsupport::EtcdProcess etcd;
  std::string error = etcd.start();
  setenv("PATH", old_path.c_str(), 1);
  if (old_tmp)
    setenv("TMPDIR", saved_tmp.c_str(), 1);
  else
    unsetenv("TMPDIR");
  EXPECT_NE(error.find("did not become healthy"), std::string::npos) << error;
  EXPECT_NE(error.find("etcd cannot start: --name=t"), std::string::npos) << error;
  EXPECT_FALSE(etcd.running());
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path())) << "the temporary data directory was left behind";
}
