// libFuzzer target: the parsers CronJobs reach — cron schedules (then a few next times)
// and TZif time zone files (then lookups and wall-clock conversions).
#include <chrono>
#include <cstdint>
#include <string_view>

#include "common/cron_schedule.h"
#include "common/time_zone.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shepherd;
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    auto tz = TimeZone::parse(text, "fuzz");
    if (!tz.ok()) return 0;
    for (int64_t t : {INT64_MIN / 2, int64_t(-1), int64_t(0), int64_t(1780000000), INT64_MAX / 2}) {
      (void)tz->lookup(t);
      (void)tz->fromLocal(t);
    }
    return 0;
  }
  auto s = CronSchedule::parse(text);
  if (!s.ok()) return 0;
  auto t = clock::TimePoint(std::chrono::seconds(1780000000));
  for (int i = 0; i < 4; ++i) {
    auto n = s->next(t);
    if (!n) break;
    t = *n;
  }
  return 0;
}
