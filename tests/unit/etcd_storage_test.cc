// EtcdStorage against a real single-member etcd (Debian's etcd-server, 3.4.x) started per
// test on free loopback ports. There is no skip: without etcd on PATH every test fails
// with a message saying so.
#include "storage/etcd_storage.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "common/free_port.h"
#include "test_util.h"

using namespace shepherd;
using namespace shepherd::storage;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

namespace {

int64_t msSince(SteadyClock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - t0).count();
}

// Polls pred every 10 ms until it holds; false after timeout.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = 10s) {
  auto deadline = SteadyClock::now() + timeout;
  while (!pred()) {
    if (SteadyClock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// The etcd binary on PATH, or "".
std::string findEtcd() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/etcd";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// GET /health over a raw socket: true once etcd answers {"health":"true"}.
bool healthy(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  timeval tv{};
  tv.tv_sec = 1;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = false;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string req = "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      std::string answer;
      char buf[512];
      ssize_t n;
      while ((n = recv(fd, buf, sizeof buf, 0)) > 0) answer.append(buf, static_cast<size_t>(n));
      ok = answer.find(" 200 ") != std::string::npos &&
           answer.find("\"health\":\"true\"") != std::string::npos;
    }
  }
  close(fd);
  return ok;
}

std::string tail(const std::string& path, size_t bytes = 3000) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  return all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

// A single-member etcd on free loopback ports, stopped (by its PID) when destroyed.
class EtcdProcess {
 public:
  EtcdProcess() = default;
  EtcdProcess(const EtcdProcess&) = delete;
  EtcdProcess& operator=(const EtcdProcess&) = delete;
  ~EtcdProcess() { stop(); }

  // Starts etcd with its data under dir; returns "" or why it could not.
  std::string start(const std::string& dir) {
    std::string bin = findEtcd();
    if (bin.empty())
      return "etcd is not on PATH. These tests need a real etcd and do not skip: install Debian's "
             "etcd-server (scripts/setup-deps.sh does).";
    std::string log;
    for (int attempt = 0; attempt < 3; ++attempt) {  // a "free" port can be taken before etcd binds it
      client_port_ = freeLoopbackPort();
      int peer_port = freeLoopbackPort();
      if (client_port_ == 0 || peer_port == 0 || client_port_ == peer_port) continue;
      std::string c = "http://127.0.0.1:" + std::to_string(client_port_);
      std::string p = "http://127.0.0.1:" + std::to_string(peer_port);
      log = dir + "/etcd-" + std::to_string(attempt) + ".log";
      std::vector<std::string> args = {
          bin, "--name=t", "--data-dir=" + dir + "/etcd-" + std::to_string(attempt),
          "--listen-client-urls=" + c, "--advertise-client-urls=" + c, "--listen-peer-urls=" + p,
          "--initial-advertise-peer-urls=" + p, "--initial-cluster=t=" + p, "--enable-grpc-gateway=true",
          // progress notifications often enough for a test to see them
          "--experimental-watch-progress-notify-interval=500ms", "--log-level=warn"};
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      pid_ = fork();
      if (pid_ < 0) return "fork failed";
      if (pid_ == 0) {
        int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
          dup2(fd, 1);
          dup2(fd, 2);
        }
        execv(argv[0], argv.data());
        _exit(127);
      }
      auto deadline = SteadyClock::now() + 30s;
      while (SteadyClock::now() < deadline) {
        if (healthy(client_port_)) return "";
        int status;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {  // exited (e.g. port taken): try again
          pid_ = -1;
          break;
        }
        std::this_thread::sleep_for(50ms);
      }
      stop();
    }
    return "etcd did not become healthy; the end of its log (" + log + "):\n" + tail(log);
  }

  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status;
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(50ms);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(client_port_); }

 private:
  pid_t pid_ = -1;
  int client_port_ = 0;
};

// Records every watch callback; optionally slow, to show who waits for whom.
struct Recorder {
  std::mutex mu;
  std::vector<std::pair<std::vector<Event>, int64_t>> batches;
  std::atomic<int> delay_ms{0};
  std::atomic<int> running{0};

  WatchCallback callback() {
    return [this](const std::vector<Event>& evs, int64_t rev) {
      ++running;
      if (int d = delay_ms.load()) std::this_thread::sleep_for(std::chrono::milliseconds(d));
      {
        std::lock_guard<std::mutex> g(mu);
        batches.emplace_back(evs, rev);
      }
      --running;
    };
  }
  std::vector<Event> events() {
    std::lock_guard<std::mutex> g(mu);
    std::vector<Event> out;
    for (auto& b : batches) out.insert(out.end(), b.first.begin(), b.first.end());
    return out;
  }
  size_t calls() {
    std::lock_guard<std::mutex> g(mu);
    return batches.size();
  }
  int64_t lastRevision() {
    std::lock_guard<std::mutex> g(mu);
    return batches.empty() ? 0 : batches.back().second;
  }
  bool sawKey(const std::string& key) {
    for (const Event& e : events())
      if (e.kv.key == key) return true;
    return false;
  }
  // Callback revisions strictly increase; a batch's events all carry its revision.
  void expectOrdered() {
    std::lock_guard<std::mutex> g(mu);
    int64_t prev = 0;
    for (auto& [evs, rev] : batches) {
      EXPECT_GT(rev, prev);
      for (const Event& e : evs) EXPECT_EQ(e.kv.mod_revision, rev) << e.kv.key;
      prev = rev;
    }
  }
};

void ignoreEvents(const std::vector<Event>&, int64_t) {}

class EtcdStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error = etcd_.start(dir_.path());
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

  testutil::TempDir dir_;
  EtcdProcess etcd_;  // declared after dir_: stopped before the directory is removed
};

}  // namespace

TEST_F(EtcdStorageTest, CreateUpdateRemoveFollowCasRules) {
  auto s = openStorage();
  ASSERT_TRUE(s);
  auto a = s->create("/a", "1");
  ASSERT_TRUE(a.ok()) << a.message;
  auto b = s->create("/b", "1");
  ASSERT_TRUE(b.ok()) << b.message;
  EXPECT_EQ(a.value + 1, b.value);  // one etcd revision per write
  EXPECT_EQ(s->currentRevision(), b.value);

  auto dup = s->create("/a", "2");
  EXPECT_EQ(dup.code, Code::Exists);
  EXPECT_EQ(dup.current_revision, a.value);

  auto stale = s->update("/a", "2", a.value + 1000);
  EXPECT_EQ(stale.code, Code::Conflict);
  EXPECT_EQ(stale.current_revision, a.value);
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

TEST_F(EtcdStorageTest, KeysAndValuesAreBinarySafe) {
  auto s = openStorage();
  ASSERT_TRUE(s);
  std::string key = std::string("/bin/k\xc3\xa9y with spaces+/=") + std::string("\x01\x7f", 2);
  std::string value = std::string("a\0b", 3) + "\xff\xfe{\"json\":\n\"x\"}";
  value += std::string(300 * 1024, 'z');  // well beyond one libcurl chunk
  auto c = s->create(key, value);
  ASSERT_TRUE(c.ok()) << c.message;
  auto got = s->get(key);
  ASSERT_TRUE(got.ok()) << got.message;
  EXPECT_EQ(got.value.key, key);
  EXPECT_TRUE(got.value.value == value);
  // An empty value round-trips too (the gateway leaves the field out).
  ASSERT_TRUE(s->create("/bin/empty", "").ok());
  auto empty = s->get("/bin/empty");
  ASSERT_TRUE(empty.ok()) << empty.message;
  EXPECT_EQ(empty.value.value, "");
}

TEST_F(EtcdStorageTest, ListPagesAtOneRevisionWithExactRemaining) {
  auto s = openStorage();
  ASSERT_TRUE(s);
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

  // A revision etcd has not reached yet, as SqliteStorage reports it.
  ListRequest future;
  future.prefix = "/p/";
  future.revision = latest.value.revision + 1000;
  EXPECT_EQ(s->list(future).code, Code::Conflict);
}

TEST_F(EtcdStorageTest, CompactionExpiresOldRevisionsForListsAndWatches) {
  auto s = openStorage();
  ASSERT_TRUE(s);
  auto a = s->create("/c/a", "1");
  ASSERT_TRUE(a.ok()) << a.message;
  auto a2 = s->update("/c/a", "2", a.value);
  ASSERT_TRUE(a2.ok());
  auto b = s->create("/c/b", "1");
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(s->remove("/c/b", b.value).ok());
  int64_t cut = s->currentRevision();

  auto compacted = s->compact(cut);
  ASSERT_TRUE(compacted.ok()) << compacted.message;
  EXPECT_EQ(compacted.value, cut);
  EXPECT_EQ(s->compactedRevision(), cut);
  EXPECT_EQ(s->get("/c/a").value.value, "2");
  EXPECT_EQ(s->get("/c/a").value.mod_revision, a2.value);
  EXPECT_EQ(s->get("/c/b").code, Code::NotFound);

  ListRequest old;
  old.prefix = "/c/";
  old.revision = a.value;
  auto l = s->list(old);
  EXPECT_EQ(l.code, Code::Compacted) << l.message;
  old.revision = cut;  // the compaction revision itself is kept
  auto atCut = s->list(old);
  ASSERT_TRUE(atCut.ok()) << atCut.message;
  EXPECT_EQ(atCut.value.kvs.size(), 1u);

  auto w = s->watch("/c/", a.value, ignoreEvents);
  EXPECT_EQ(w.code, Code::Compacted);

  // A client that did not compact learns it from etcd, for lists and for watches.
  auto other = openStorage();
  ASSERT_TRUE(other);
  EXPECT_EQ(other->compactedRevision(), 0);
  old.revision = a.value;
  EXPECT_EQ(other->list(old).code, Code::Compacted);
  auto w2 = other->watch("/c/", cut - 1, ignoreEvents);
  EXPECT_EQ(w2.code, Code::Compacted) << w2.message;
  EXPECT_GT(other->compactedRevision(), a.value);
  auto fromCut = other->watch("/c/", cut, ignoreEvents);
  EXPECT_TRUE(fromCut.ok()) << fromCut.message;
  fromCut.value.reset();

  // Compacting at or below what is already compacted is a no-op that succeeds.
  auto again = s->compact(a.value);
  ASSERT_TRUE(again.ok()) << again.message;
  EXPECT_EQ(again.value, cut);
  auto redo = other->compact(cut);  // already known from the refused watch: a no-op too
  ASSERT_TRUE(redo.ok()) << redo.message;
  EXPECT_GE(other->compactedRevision(), cut);
  auto third = openStorage();  // knows nothing: etcd answers "compacted", which is success here
  ASSERT_TRUE(third);
  auto known = third->compact(cut);
  ASSERT_TRUE(known.ok()) << known.message;
  EXPECT_EQ(third->compactedRevision(), cut);

  // Beyond the current revision compacts to the current one.
  ASSERT_TRUE(s->create("/c/late", "x").ok());
  int64_t now = s->currentRevision();
  auto far = s->compact(now + 1000);
  ASSERT_TRUE(far.ok()) << far.message;
  EXPECT_EQ(far.value, now);
}

TEST_F(EtcdStorageTest, WatchReplaysHistoryThenFollowsLiveWrites) {
  auto s = openStorage();
  ASSERT_TRUE(s);
  auto r1 = s->create("/w/a", "1");
  ASSERT_TRUE(r1.ok()) << r1.message;
  auto r2 = s->update("/w/a", "2", r1.value);
  ASSERT_TRUE(r2.ok());
  ASSERT_TRUE(s->create("/x/ignored", "x").ok());
  auto r3 = s->remove("/w/a", r2.value);
  ASSERT_TRUE(r3.ok());

  Recorder rec;
  auto w = s->watch("/w/", r1.value - 1, rec.callback());
  ASSERT_TRUE(w.ok()) << w.message;
  ASSERT_TRUE(eventually([&] { return rec.events().size() >= 3; })) << "history was not replayed";
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
  auto r5 = s->update("/w/b", "live2", r4.value);
  ASSERT_TRUE(r5.ok());
  ASSERT_TRUE(s->create("/x/also-ignored", "x").ok());
  ASSERT_TRUE(eventually([&] { return rec.events().size() >= 5; }));
  auto seen = rec.events();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[3].kv.key, "/w/b");
  EXPECT_TRUE(seen[3].isCreate());
  EXPECT_EQ(seen[4].kv.value, "live2");
  for (const Event& e : seen) EXPECT_EQ(e.kv.key.rfind("/w/", 0), 0u) << e.kv.key;
  rec.expectOrdered();
  EXPECT_GE(s->currentRevision(), r5.value);

  // A watch from 0 replays everything still kept.
  Recorder all;
  auto w0 = s->watch("/w/", 0, all.callback());
  ASSERT_TRUE(w0.ok()) << w0.message;
  ASSERT_TRUE(eventually([&] { return all.events().size() >= 5; }));
  all.expectOrdered();
}

TEST_F(EtcdStorageTest, WriteAnswersOnlyAfterCoveringWatchesDeliveredIt) {
  auto s = openStorage();
  ASSERT_TRUE(s);
  Recorder rec;
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

  // A write outside the watch's prefix also moves it (an empty batch) before it answers,
  // as SqliteStorage does: every watch reaches every revision.
  auto elsewhere = s->create("/elsewhere/x", "v");
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.message;
  EXPECT_GE(rec.lastRevision(), elsewhere.value);
  EXPECT_FALSE(rec.sawKey("/elsewhere/x"));
  rec.expectOrdered();
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
    late.expectOrdered();
  }
  EXPECT_EQ(first.events().size(), 43u) << "the first watch saw some event twice or missed one";
  first.expectOrdered();
}

TEST_F(EtcdStorageTest, DestroyingTheHandleStopsCallbacks) {
  auto s = openStorage();
  ASSERT_TRUE(s);
  Recorder rec;
  rec.delay_ms = 200;
  auto w = s->watch("/d/", s->currentRevision(), rec.callback());
  ASSERT_TRUE(w.ok()) << w.message;
  std::jthread writer([&] {  // joined on every path out, including a failed ASSERT
    for (int i = 0; i < 5; ++i) (void)s->create("/d/k" + std::to_string(i), "v");
  });
  ASSERT_TRUE(eventually([&] { return rec.running.load() > 0; }));  // a callback is in progress

  auto t0 = SteadyClock::now();
  w.value.reset();
  EXPECT_LT(msSince(t0), 2000) << "stopping a watch must be prompt";
  EXPECT_EQ(rec.running.load(), 0) << "a callback was still running after the handle was destroyed";
  size_t calls = rec.calls();
  writer.join();  // its writes no longer wait for the stopped watch
  ASSERT_TRUE(s->create("/d/after", "v").ok());
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(rec.calls(), calls);
  EXPECT_FALSE(rec.sawKey("/d/after"));

  // An idle watch (no bytes on its stream) also stops promptly.
  Recorder idle;
  auto w2 = s->watch("/idle-stop/", s->currentRevision(), idle.callback());
  ASSERT_TRUE(w2.ok()) << w2.message;
  t0 = SteadyClock::now();
  w2.value.reset();
  EXPECT_LT(msSince(t0), 2000);
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
  ASSERT_TRUE(eventually([&] { return rec.lastRevision() >= r.value; }, 5s)) << "the watch never moved";
  EXPECT_TRUE(rec.events().empty());
  EXPECT_GE(s->currentRevision(), r.value);
  rec.expectOrdered();
}

TEST_F(EtcdStorageTest, ShutdownRefusesWritesButNotReads) {
  auto s = openStorage();
  ASSERT_TRUE(s);
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
