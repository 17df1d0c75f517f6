// Cron schedules as CronJobs write them, with the grammar and error messages of the Go
// library upstream uses (robfig/cron v3, ParseStandard): five fields (minute, hour, day
// of month, month, day of week; `*`, `?`, lists, ranges, steps, month and weekday names),
// the descriptors @yearly/@annually, @monthly, @weekly, @daily/@midnight, @hourly and
// `@every <duration>`, and an optional `TZ=<zone> ` or `CRON_TZ=<zone> ` prefix. A day
// matches when day of month AND day of week match if either is `*`, OR otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/api_error.h"
#include "common/clock.h"
#include "common/time_zone.h"

namespace shepherd {

// Thread-safety: immutable after parse.
class CronSchedule {
 public:
  // The error's message is the library's (e.g. "expected exactly 5 fields, found 1: [x]").
  static Result<CronSchedule> parse(std::string_view spec,
                                    const std::string& zoneinfo = "/usr/share/zoneinfo");
  // The first activation after `t` (whole seconds), or nullopt when none comes within
  // five years (an impossible date such as February 30th).
  std::optional<clock::TimePoint> next(clock::TimePoint t) const;
  const TimeZone& zone() const { return zone_; }

 private:
  uint64_t minute_ = 0, hour_ = 0, dom_ = 0, month_ = 0, dow_ = 0;
  std::optional<std::chrono::seconds> every_;  // "@every": a constant delay instead
  TimeZone zone_;
};

}  // namespace shepherd
