#include "scheduler/scheduling_queue.h"

#include <algorithm>

namespace shepherd::scheduler {

bool SchedulingQueue::Entry::operator<(const Entry& o) const {
  if (priority != o.priority) return priority < o.priority;
  if (creation != o.creation) return creation > o.creation;  // older first
  return key > o.key;
}

SchedulingQueue::SchedulingQueue(std::chrono::milliseconds initial_backoff,
                                 std::chrono::milliseconds max_backoff)
    : initial_(initial_backoff), max_(max_backoff) {}

void SchedulingQueue::pushActive(const std::string& key, PodState& st) {
  st.where = PodState::Where::Active;
  active_.push(Entry{st.priority, st.creation, key});
  cv_.notify_one();
}

void SchedulingQueue::add(const std::string& key, int32_t priority, const std::string& creation) {
  MutexLock g(mu_);
  auto& st = pods_[key];
  st.priority = priority;
  st.creation = creation;
  if (st.where == PodState::Where::Idle) pushActive(key, st);
}

void SchedulingQueue::backoff(const std::string& key) {
  MutexLock g(mu_);
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  auto& st = it->second;
  st.attempts++;
  auto d = initial_;
  for (int i = 1; i < st.attempts && d < max_; ++i) d *= 2;
  d = std::min(d, max_);
  st.where = PodState::Where::Waiting;
  st.ready_at = Clock::now() + d;
  waiting_.emplace(st.ready_at, key);
  cv_.notify_one();
}

void SchedulingQueue::moveAllToActive() {
  MutexLock g(mu_);
  for (auto& [when, key] : waiting_) {
    auto it = pods_.find(key);
    if (it != pods_.end() && it->second.where == PodState::Where::Waiting && it->second.ready_at == when)
      pushActive(key, it->second);
  }
  waiting_.clear();
}

void SchedulingQueue::remove(const std::string& key) {
  MutexLock g(mu_);
  pods_.erase(key);  // stale heap/waiting entries are skipped when popped
}

void SchedulingQueue::done(const std::string& key) {
  MutexLock g(mu_);
  auto it = pods_.find(key);
  if (it != pods_.end() && it->second.where == PodState::Where::InFlight)
    it->second.where = PodState::Where::Idle;
}

void SchedulingQueue::promoteDue() {
  auto now = Clock::now();
  while (!waiting_.empty() && waiting_.begin()->first <= now) {
    auto [when, key] = *waiting_.begin();
    waiting_.erase(waiting_.begin());
    auto it = pods_.find(key);
    if (it != pods_.end() && it->second.where == PodState::Where::Waiting && it->second.ready_at == when)
      pushActive(key, it->second);
  }
}

bool SchedulingQueue::pop(std::string& key, std::chrono::milliseconds wait) {
  UniqueMutexLock lk(mu_);
  auto deadline = Clock::now() + wait;
  while (!shutdown_) {
    promoteDue();
    while (!active_.empty()) {
      Entry e = active_.top();
      active_.pop();
      auto it = pods_.find(e.key);
      if (it == pods_.end() || it->second.where != PodState::Where::Active) continue;  // stale
      it->second.where = PodState::Where::InFlight;
      key = e.key;
      return true;
    }
    auto until = deadline;
    if (!waiting_.empty()) until = std::min(until, waiting_.begin()->first);
    if (Clock::now() >= deadline) return false;
    lk.waitUntil(cv_, until);
  }
  return false;
}

void SchedulingQueue::shutDown() {
  MutexLock g(mu_);
  shutdown_ = true;
  cv_.notify_all();
}

size_t SchedulingQueue::activeCount() {
  MutexLock g(mu_);
  size_t n = 0;
  for (auto& [k, st] : pods_)
    if (st.where == PodState::Where::Active) ++n;
  return n;
}

size_t SchedulingQueue::backoffCount() {
  MutexLock g(mu_);
  size_t n = 0;
  for (auto& [k, st] : pods_)
    if (st.where == PodState::Where::Waiting) ++n;
  return n;
}

int SchedulingQueue::attempts(const std::string& key) {
  MutexLock g(mu_);
  auto it = pods_.find(key);
  return it == pods_.end() ? 0 : it->second.attempts;
}

}  // namespace shepherd::scheduler
