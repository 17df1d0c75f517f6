// What the Storage tests share: a watch recorder and a history with a compaction in it.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "storage/storage.h"

namespace shepherd::testutil {

// A history under prefix, compacted at its end: prefix+"a" created then updated (and
// kept), prefix+"b" created then deleted. Fails the test (ok = false) on any error.
struct CompactedHistory {
  bool ok = false;
  int64_t a_created = 0, a_updated = 0, cut = 0;
};
inline CompactedHistory writeCompactedHistory(storage::Storage& s, const std::string& prefix) {
  CompactedHistory h;
  auto a = s.create(prefix + "a", "1");
  EXPECT_TRUE(a.ok()) << a.message;
  auto a2 = s.update(prefix + "a", "2", a.value);
  EXPECT_TRUE(a2.ok()) << a2.message;
  auto b = s.create(prefix + "b", "1");
  EXPECT_TRUE(b.ok()) << b.message;
  auto gone = s.remove(prefix + "b", b.value);
  EXPECT_TRUE(gone.ok()) << gone.message;
  h.cut = s.currentRevision();
  auto compacted = s.compact(h.cut);
  EXPECT_TRUE(compacted.ok()) << compacted.message;
  EXPECT_EQ(compacted.value, h.cut);
  h.ok = a.ok() && a2.ok() && b.ok() && gone.ok() && compacted.ok();
  h.a_created = a.value;
  h.a_updated = a2.value;
  return h;
}

// A Storage watch callback for tests: records every batch, lets a test wait (on a
// condition variable, with a timeout) until the batches satisfy a predicate, and can be
// made slow to show who waits for whom.
class WatchRecorder {
 public:
  using Batch = std::pair<std::vector<storage::Event>, int64_t>;

  std::atomic<int> delay_ms{0};
  std::atomic<int> running{0};

  storage::WatchCallback callback() {
    return [this](const std::vector<storage::Event>& evs, int64_t rev) {
      {
        std::lock_guard<std::mutex> g(mu_);
        ++running;
      }
      cv_.notify_all();
      if (int d = delay_ms.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(d));  // a slow consumer
      {
        std::lock_guard<std::mutex> g(mu_);
        batches_.emplace_back(evs, rev);
      }
      --running;
      cv_.notify_all();
    };
  }

  // Waits until pred(events, last revision) holds; false after timeout.
  template <class Pred>
  bool waitFor(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, timeout, [&] { return pred(eventsLocked(), lastRevisionLocked()); });
  }
  bool waitForEvents(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    return waitFor([&](const std::vector<storage::Event>& evs, int64_t) { return evs.size() >= n; }, timeout);
  }
  bool waitForRevision(int64_t rev, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    return waitFor([&](const std::vector<storage::Event>&, int64_t last) { return last >= rev; }, timeout);
  }
  // Waits until a callback is running (the slow-consumer tests).
  bool waitForRunning(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, timeout, [&] { return running.load() > 0; });
  }

  std::vector<storage::Event> events() {
    std::lock_guard<std::mutex> g(mu_);
    return eventsLocked();
  }
  size_t calls() {
    std::lock_guard<std::mutex> g(mu_);
    return batches_.size();
  }
  int64_t lastRevision() {
    std::lock_guard<std::mutex> g(mu_);
    return lastRevisionLocked();
  }
  bool sawKey(const std::string& key) {
    for (const storage::Event& e : events())
      if (e.kv.key == key) return true;
    return false;
  }
  // Callback revisions strictly increase and events come in revision order, each after
  // the previous batch's revision and at most its own batch's. With one_revision_per_batch
  // (etcd's hub), every event of a batch carries the batch's revision.
  void expectOrdered(bool one_revision_per_batch) {
    std::lock_guard<std::mutex> g(mu_);
    int64_t prev = 0, prev_event = 0;
    for (auto& [evs, rev] : batches_) {
      EXPECT_GT(rev, prev);
      for (const storage::Event& e : evs) {
        EXPECT_GT(e.kv.mod_revision, prev) << e.kv.key;
        EXPECT_GT(e.kv.mod_revision, prev_event) << e.kv.key;
        EXPECT_LE(e.kv.mod_revision, rev) << e.kv.key;
        if (one_revision_per_batch) {
          EXPECT_EQ(e.kv.mod_revision, rev) << e.kv.key;
        }
        prev_event = e.kv.mod_revision;
      }
      prev = rev;
    }
  }

 private:
  std::vector<storage::Event> eventsLocked() const {
    std::vector<storage::Event> out;
    for (auto& b : batches_) out.insert(out.end(), b.first.begin(), b.first.end());
    return out;
  }
  int64_t lastRevisionLocked() const { return batches_.empty() ? 0 : batches_.back().second; }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Batch> batches_;
};

}  // namespace shepherd::testutil
