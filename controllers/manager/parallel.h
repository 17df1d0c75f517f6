// How the workload controllers issue many writes: upstream's slowStartBatch (batches of
// 1, 2, 4, ... whose calls run in parallel; a batch with a failure ends it, so a quota
// or a bad template costs a few failed requests rather than n) and a plain parallel for.
#pragma once

#include <functional>

#include "common/api_error.h"

namespace shepherd::controllers {

// Calls fn(0..n-1) on up to this many threads at once.
inline constexpr int kMaxParallelWrites = 32;

struct BatchOutcome {
  int succeeded = 0;  // calls that returned OK
  int attempted = 0;  // calls made (the rest were skipped after a failed batch)
  Status first_error = okStatus();
};

// `fn(i)` for i in [0, n) in slow-start batches. A call that fails with `ignore` true
// for its error counts as neither success nor failure (e.g. a terminating namespace).
BatchOutcome slowStartBatch(int n, const std::function<Status(int)>& fn,
                            const std::function<bool(const ApiError&)>& ignore = nullptr);

// `fn(i)` for i in [0, n), in parallel; returns the first error.
Status parallelFor(int n, const std::function<Status(int)>& fn);

}  // namespace shepherd::controllers
