#include "client/workqueue.h"

#include <algorithm>

namespace shepherd::client {

WorkQueue::WorkQueue(std::chrono::milliseconds base_delay, std::chrono::milliseconds max_delay)
    : base_(base_delay), max_(max_delay) {
  delay_thread_ = std::thread([this] { delayLoop(); });
}

WorkQueue::~WorkQueue() {
  shutDown();
  if (delay_thread_.joinable()) delay_thread_.join();
}

void WorkQueue::addLocked(const std::string& key) {
  if (shutting_down_) return;
  if (dirty_.count(key)) return;  // already queued: process once
  dirty_.insert(key);
  if (processing_.count(key)) return;  // queued again when the current worker is done
  queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::add(const std::string& key) {
  MutexLock g(mu_);
  addLocked(key);
}

void WorkQueue::addAfter(const std::string& key, std::chrono::milliseconds delay) {
  if (delay.count() <= 0) return add(key);
  MutexLock g(mu_);
  if (shutting_down_) return;
  waiting_.emplace(Clock::now() + delay, key);
  delay_cv_.notify_one();
}

std::chrono::milliseconds WorkQueue::nextDelay(const std::string& key) {
  MutexLock g(mu_);
  int n = failures_[key];
  auto d = base_;
  for (int i = 0; i < n && d < max_; ++i) d *= 2;
  return std::min(d, max_);
}

void WorkQueue::addRateLimited(const std::string& key) {
  auto d = nextDelay(key);
  {
    MutexLock g(mu_);
    failures_[key]++;
  }
  addAfter(key, d);
}

void WorkQueue::forget(const std::string& key) {
  MutexLock g(mu_);
  failures_.erase(key);
}

int WorkQueue::numRequeues(const std::string& key) {
  MutexLock g(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

bool WorkQueue::get(std::string& key) {
  UniqueMutexLock lk(mu_);
  lk.wait(cv_, [&]() REQUIRES(mu_) { return !queue_.empty() || shutting_down_; });
  if (queue_.empty()) return false;
  key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  return true;
}

void WorkQueue::done(const std::string& key) {
  MutexLock g(mu_);
  processing_.erase(key);
  if (dirty_.count(key)) {  // added while it was being processed
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::shutDown() {
  {
    MutexLock g(mu_);
    shutting_down_ = true;
    waiting_.clear();
  }
  cv_.notify_all();
  delay_cv_.notify_all();
}

bool WorkQueue::shuttingDown() {
  MutexLock g(mu_);
  return shutting_down_;
}

size_t WorkQueue::len() {
  MutexLock g(mu_);
  return queue_.size();
}

void WorkQueue::delayLoop() {
  UniqueMutexLock lk(mu_);
  while (!shutting_down_) {
    if (waiting_.empty()) {
      lk.wait(delay_cv_);
      continue;
    }
    auto when = waiting_.begin()->first;
    if (Clock::now() < when) {
      lk.waitUntil(delay_cv_, when);
      continue;
    }
    std::string key = waiting_.begin()->second;
    waiting_.erase(waiting_.begin());
    addLocked(key);
  }
}

}  // namespace shepherd::client
