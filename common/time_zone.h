// IANA time zones from the system's tz database (/usr/share/zoneinfo, TZif files), enough
// for what Go's time.LoadLocation gives CronJobs: the UTC offset at an instant, and the
// instant of a wall-clock time (as time.Date picks it across a DST change). Instants
// after the file's last transition keep its last offset (Debian's files list transitions
// up to 2037).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/api_error.h"

namespace shepherd {

// Thread-safety: immutable after load; copies are independent.
class TimeZone {
 public:
  TimeZone() = default;  // UTC
  // `name` as Go's time.LoadLocation takes it: "" and "UTC" are UTC; otherwise a file
  // under `root`. The error reads as Go's: "unknown time zone NAME".
  static Result<TimeZone> load(std::string_view name, const std::string& root = "/usr/share/zoneinfo");
  // From a TZif file's bytes (exposed for the fuzz target and tests).
  static Result<TimeZone> parse(std::string_view tzif, std::string name);

  const std::string& name() const { return name_; }
  struct Span {
    int32_t offset = 0;                          // seconds east of UTC
    int64_t start = INT64_MIN, end = INT64_MAX;  // the instants [start, end) it holds for
  };
  Span lookup(int64_t unix) const;
  // The instant of local wall time `local` (seconds since 1970-01-01 00:00 local), as
  // Go's time.Date resolves gaps and overlaps.
  int64_t fromLocal(int64_t local) const;
  int64_t toLocal(int64_t unix) const { return unix + lookup(unix).offset; }

 private:
  std::string name_ = "UTC";
  std::vector<int64_t> transitions_;  // instants, increasing
  std::vector<int32_t> offsets_;      // offset from transitions_[i] on
  int32_t initial_ = 0;               // before the first transition
};

}  // namespace shepherd
