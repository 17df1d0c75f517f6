// Annotated locks: thin wrappers over std::mutex / std::shared_mutex that carry clang's
// thread-safety attributes (common/thread_annotations.h), so members declared
// GUARDED_BY(mu_) and helpers declared REQUIRES(mu_) are checked by -Wthread-safety
// (scripts/check_thread_safety.sh, the `thread_safety_check` test). libstdc++'s own
// mutexes carry no attributes, so the analysis cannot see them.
//
//   Mutex mu_;               std::mutex with annotated lock/unlock/try_lock
//   MutexLock g(mu_);        lock_guard: holds mu_ for its scope
//   UniqueMutexLock lk(mu_); unique_lock: may unlock/relock and wait on a
//                            std::condition_variable (wait/waitFor/waitUntil)
//   SharedMutex smu_;        std::shared_mutex; WriterMutexLock / ReaderMutexLock
//
// Condition-variable predicates run with the lock held but are separate functions to the
// analysis: annotate a lambda that reads guarded members, [&]() REQUIRES(mu_) { ... }.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include "common/thread_annotations.h"

namespace shepherd {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds the lock where it cannot see it (no runtime check).
  void assertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class UniqueMutexLock;
  std::mutex mu_;
};

// Holds `mu` from construction to the end of the scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// Like std::unique_lock<std::mutex>: holds `mu` from construction, may unlock() and lock()
// again, and waits on a std::condition_variable (which releases and retakes the lock).
class SCOPED_CAPABILITY UniqueMutexLock {
 public:
  explicit UniqueMutexLock(Mutex& mu) ACQUIRE(mu) : lk_(mu.mu_) {}
  ~UniqueMutexLock() RELEASE() {}
  UniqueMutexLock(const UniqueMutexLock&) = delete;
  UniqueMutexLock& operator=(const UniqueMutexLock&) = delete;

  void lock() ACQUIRE() { lk_.lock(); }
  void unlock() RELEASE() { lk_.unlock(); }

  void wait(std::condition_variable& cv) { cv.wait(lk_); }
  template <class Pred>
  void wait(std::condition_variable& cv, Pred pred) {
    cv.wait(lk_, std::move(pred));
  }
  template <class Rep, class Period>
  std::cv_status waitFor(std::condition_variable& cv, const std::chrono::duration<Rep, Period>& d) {
    return cv.wait_for(lk_, d);
  }
  template <class Rep, class Period, class Pred>
  bool waitFor(std::condition_variable& cv, const std::chrono::duration<Rep, Period>& d, Pred pred) {
    return cv.wait_for(lk_, d, std::move(pred));
  }
  template <class Clock, class Duration>
  std::cv_status waitUntil(std::condition_variable& cv, const std::chrono::time_point<Clock, Duration>& t) {
    return cv.wait_until(lk_, t);
  }
  template <class Clock, class Duration, class Pred>
  bool waitUntil(std::condition_variable& cv, const std::chrono::time_point<Clock, Duration>& t, Pred pred) {
    return cv.wait_until(lk_, t, std::move(pred));
  }

 private:
  std::unique_lock<std::mutex> lk_;
};

// A reader/writer lock. Writers hold it exclusively (WriterMutexLock), readers shared
// (ReaderMutexLock); members GUARDED_BY it may be read under either, written only under
// the exclusive lock.
class CAPABILITY("mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

class SCOPED_CAPABILITY WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~WriterMutexLock() RELEASE() { mu_.unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

class SCOPED_CAPABILITY ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderMutexLock() RELEASE() { mu_.unlock_shared(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

}  // namespace shepherd
