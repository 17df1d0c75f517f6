#include "controllers/manager/parallel.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace shepherd::controllers {

namespace {

// Runs fn over [begin, end) on up to kMaxParallelWrites threads; counts OK results and
// keeps the first error that `ignore` does not excuse.
int runAll(int begin, int end, const std::function<Status(int)>& fn,
           const std::function<bool(const ApiError&)>& ignore, Status& first_error) {
  std::atomic<int> next{begin}, ok{0};
  Mutex mu;  // first (a local: GUARDED_BY cannot name it)
  std::optional<ApiError> first;
  auto work = [&] {
    for (int i = next++; i < end; i = next++) {
      Status st = fn(i);
      if (st) {
        ++ok;
        continue;
      }
      if (ignore && ignore(st.error())) continue;
      MutexLock g(mu);
      if (!first) first = st.error();
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < std::min(end - begin, kMaxParallelWrites); ++t) helpers.emplace_back(work);
  work();
  for (auto& t : helpers) t.join();
  if (first && first_error) first_error = *first;
  return ok.load();
}

}  // namespace

BatchOutcome slowStartBatch(int n, const std::function<Status(int)>& fn,
                            const std::function<bool(const ApiError&)>& ignore) {
  BatchOutcome out;
  for (int batch = 1; out.attempted < n; batch *= 2) {
    int size = std::min(batch, n - out.attempted);
    Status err = okStatus();
    out.succeeded += runAll(out.attempted, out.attempted + size, fn, ignore, err);
    out.attempted += size;
    if (!err) {
      out.first_error = err;
      break;
    }
  }
  return out;
}

Status parallelFor(int n, const std::function<Status(int)>& fn) {
  Status err = okStatus();
  runAll(0, n, fn, nullptr, err);
  return err;
}

}  // namespace shepherd::controllers
