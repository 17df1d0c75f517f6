// Indexed Jobs' bookkeeping, as upstream's indexed_job_utils: completion indexes read
// from pods, and sets of indexes kept as ordered intervals ("1,3-5") the way
// status.completedIndexes and status.failedIndexes spell them.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "client/informer.h"
#include "common/json.h"

namespace shepherd::controllers::job {

inline constexpr const char* kCompletionIndexAnnotation = "batch.kubernetes.io/job-completion-index";
inline constexpr const char* kIndexFailureCountAnnotation = "batch.kubernetes.io/job-index-failure-count";
inline constexpr const char* kIndexIgnoredFailureCountAnnotation =
    "batch.kubernetes.io/job-index-ignored-failure-count";
inline constexpr int kUnknownIndex = -1;

struct Interval {
  int first = 0, last = 0;
  bool operator==(const Interval&) const = default;
};

// Disjoint, non-adjacent intervals in increasing order.
class OrderedIntervals {
 public:
  OrderedIntervals() = default;
  // Parses "1,3-5"; indexes at or past `completions` are dropped, corrupt parts skipped.
  static OrderedIntervals parse(std::string_view s, int completions);
  // These plus `indexes` (any order).
  OrderedIntervals with(const std::set<int>& indexes) const;
  OrderedIntervals merge(const OrderedIntervals& other) const;
  bool has(int index) const;
  int total() const;
  bool empty() const { return v_.empty(); }
  std::string str() const;
  const std::vector<Interval>& intervals() const { return v_; }
  bool operator==(const OrderedIntervals&) const = default;

 private:
  std::vector<Interval> v_;
};

// The pod's completion index annotation, or kUnknownIndex.
int completionIndex(const json::Value& pod);
std::set<int> indexesOf(const std::vector<client::Object>& pods);
// An annotation holding a count (failure counts): 0 when missing or not a valid int32.
int annotationCount(const json::Value& pod, const char* key);

// The first `count` indexes below `completions` not in `taken`.
std::vector<int> firstPendingIndexes(const OrderedIntervals& taken, int count, int completions);

}  // namespace shepherd::controllers::job
