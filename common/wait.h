// waitForChange: what test fakes offer instead of sleeping. A predicate is checked, then
// checked again each time a counter the fake bumps under its mutex (and signals on its
// condition variable) moves, until it holds or the time is up.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>

#include "common/mutex.h"

namespace shepherd {

// `pred` is called without `mu` held (it may call back into the fake). `changes` is read
// only under `mu`. True once `pred` holds; false after `timeout`.
template <class Counter>
bool waitForChange(Mutex& mu, std::condition_variable& cv, const Counter& changes,
                   const std::function<bool()>& pred, std::chrono::milliseconds timeout) EXCLUDES(mu) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  UniqueMutexLock lk(mu);
  while (true) {
    Counter seen = changes;
    lk.unlock();
    if (pred()) return true;
    lk.lock();
    if (!lk.waitUntil(cv, deadline, [&]() REQUIRES(mu) { return changes != seen; })) return false;
  }
}

}  // namespace shepherd
