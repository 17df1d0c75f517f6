// waitForChange: what test fakes offer instead of sleeping. A predicate is checked, then
// checked again each time a counter the fake bumps under its mutex (and signals on its
// condition variable) moves, until it holds or the time is up.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace shepherd {

// `pred` is called without `mu` held (it may call back into the fake). `changes` is read
// only under `mu`. True once `pred` holds; false after `timeout`.
template <class Counter>
bool waitForChange(std::mutex& mu, std::condition_variable& cv, const Counter& changes,
                   const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lk(mu);
  while (true) {
    Counter seen = changes;
    lk.unlock();
    if (pred()) return true;
    lk.lock();
    if (!cv.wait_until(lk, deadline, [&] { return changes != seen; })) return false;
  }
}

}  // namespace shepherd
