// Macros over clang's thread-safety attributes (-Wthread-safety). Under compilers that do
// not know them (g++) every macro expands to nothing, so annotated code builds everywhere
// and scripts/check_thread_safety.sh runs clang's analysis over it as a test.
//
//   CAPABILITY(name)        a type that is a lock (common/mutex.h's Mutex)
//   SCOPED_CAPABILITY       an RAII type that holds a lock for its lifetime
//   GUARDED_BY(mu)          a member read/written only with `mu` held
//   PT_GUARDED_BY(mu)       the pointee of a pointer member is guarded by `mu`
//   REQUIRES(mu...)         the caller must hold `mu`
//   EXCLUDES(mu...)         the caller must not hold `mu` (the function takes it)
//   ACQUIRE / RELEASE       the function takes / gives up the lock
//   TRY_ACQUIRE(ok, mu...)  takes the lock when it returns `ok`
//   RETURN_CAPABILITY(mu)   the function returns (a reference to) `mu`
//   NO_THREAD_SAFETY_ANALYSIS  opt a function out (say why next to it)
//
// Each macro is defined only if not yet defined: gRPC pulls in Abseil's internal
// thread_annotations.h, which defines some of the same names to the same attributes.
#pragma once

#if defined(__clang__)
#define SHEPHERD_TSA(x) __attribute__((x))
#else
#define SHEPHERD_TSA(x)
#endif

#ifndef CAPABILITY
#define CAPABILITY(x) SHEPHERD_TSA(capability(x))
#endif
#ifndef SCOPED_CAPABILITY
#define SCOPED_CAPABILITY SHEPHERD_TSA(scoped_lockable)
#endif
#ifndef GUARDED_BY
#define GUARDED_BY(x) SHEPHERD_TSA(guarded_by(x))
#endif
#ifndef PT_GUARDED_BY
#define PT_GUARDED_BY(x) SHEPHERD_TSA(pt_guarded_by(x))
#endif
#ifndef REQUIRES
#define REQUIRES(...) SHEPHERD_TSA(requires_capability(__VA_ARGS__))
#endif
#ifndef REQUIRES_SHARED
#define REQUIRES_SHARED(...) SHEPHERD_TSA(requires_shared_capability(__VA_ARGS__))
#endif
#ifndef EXCLUDES
#define EXCLUDES(...) SHEPHERD_TSA(locks_excluded(__VA_ARGS__))
#endif
#ifndef ACQUIRE
#define ACQUIRE(...) SHEPHERD_TSA(acquire_capability(__VA_ARGS__))
#endif
#ifndef ACQUIRE_SHARED
#define ACQUIRE_SHARED(...) SHEPHERD_TSA(acquire_shared_capability(__VA_ARGS__))
#endif
#ifndef RELEASE
#define RELEASE(...) SHEPHERD_TSA(release_capability(__VA_ARGS__))
#endif
#ifndef RELEASE_SHARED
#define RELEASE_SHARED(...) SHEPHERD_TSA(release_shared_capability(__VA_ARGS__))
#endif
#ifndef RELEASE_GENERIC
#define RELEASE_GENERIC(...) SHEPHERD_TSA(release_generic_capability(__VA_ARGS__))
#endif
#ifndef TRY_ACQUIRE
#define TRY_ACQUIRE(...) SHEPHERD_TSA(try_acquire_capability(__VA_ARGS__))
#endif
#ifndef ASSERT_CAPABILITY
#define ASSERT_CAPABILITY(x) SHEPHERD_TSA(assert_capability(x))
#endif
#ifndef RETURN_CAPABILITY
#define RETURN_CAPABILITY(x) SHEPHERD_TSA(lock_returned(x))
#endif
#ifndef NO_THREAD_SAFETY_ANALYSIS
#define NO_THREAD_SAFETY_ANALYSIS SHEPHERD_TSA(no_thread_safety_analysis)
#endif
