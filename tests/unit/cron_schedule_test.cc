// Cron schedules (robfig/cron v3's grammar, messages and next-time rules) and time zones
// from the system's tz database.
#include "common/cron_schedule.h"

#include <gtest/gtest.h>

#include "common/time_zone.h"

using namespace shepherd;

namespace {

clock::TimePoint at(const char* rfc3339) {
  return *clock::parseRfc3339(rfc3339);
}
std::string next(const char* spec, const char* from) {
  auto s = CronSchedule::parse(spec);
  EXPECT_TRUE(s.ok()) << spec << ": " << (s.ok() ? "" : s.error().message);
  if (!s.ok()) return "";
  auto n = s->next(at(from));
  return n ? clock::rfc3339(*n) : "none";
}
std::string error(const char* spec) {
  auto s = CronSchedule::parse(spec);
  return s.ok() ? "" : s.error().message;
}

}  // namespace

TEST(CronSchedule, NextTimes) {
  EXPECT_EQ(next("*/1 * * * *", "2026-12-04T10:00:30Z"), "2026-12-04T10:01:00Z");
  EXPECT_EQ(next("*/5 * * * *", "2026-12-04T10:00:00Z"), "2026-12-04T10:05:00Z");
  EXPECT_EQ(next("30 6-16/4 * * 1-5", "2026-12-04T17:00:00Z"),
            "2026-12-07T06:30:00Z");  // Friday evening -> Monday
  EXPECT_EQ(next("0 0 1 jan *", "2026-12-04T00:00:00Z"), "2027-01-01T00:00:00Z");
  EXPECT_EQ(next("@hourly", "2026-12-04T10:59:59Z"), "2026-12-04T11:00:00Z");
  EXPECT_EQ(next("@daily", "2026-12-04T10:00:00Z"), "2026-12-05T00:00:00Z");
  EXPECT_EQ(next("@weekly", "2026-12-04T10:00:00Z"), "2026-12-06T00:00:00Z");  // Sunday
  EXPECT_EQ(next("@monthly", "2026-12-04T10:00:00Z"), "2027-01-01T00:00:00Z");
  EXPECT_EQ(next("@yearly", "2026-12-04T10:00:00Z"), "2027-01-01T00:00:00Z");
  EXPECT_EQ(next("@every 90s", "2026-12-04T10:00:00Z"), "2026-12-04T10:01:30Z");
  // Day of month OR day of week when both are restricted; AND when one is '*'.
  EXPECT_EQ(next("0 0 13 * fri", "2026-12-04T10:00:00Z"), "2026-12-11T00:00:00Z");
  EXPECT_EQ(next("0 0 * * fri", "2026-12-04T10:00:00Z"), "2026-12-11T00:00:00Z");
  EXPECT_EQ(next("0 0 30 2 *", "2026-12-04T10:00:00Z"), "none");  // February 30th never comes
}

TEST(CronSchedule, TimeZones) {
  // 09:00 in Berlin is 08:00 UTC in winter, 07:00 UTC in summer.
  EXPECT_EQ(next("TZ=Europe/Berlin 0 9 * * *", "2026-12-04T10:00:00Z"), "2026-12-05T08:00:00Z");
  EXPECT_EQ(next("CRON_TZ=Europe/Berlin 0 9 * * *", "2026-07-04T10:00:00Z"), "2026-07-05T07:00:00Z");
  // 02:30 does not exist on 2026-03-29 in Berlin: the library skips that day.
  EXPECT_EQ(next("TZ=Europe/Berlin 30 2 * * *", "2026-03-28T12:00:00Z"), "2026-03-30T00:30:00Z");
  auto ny = TimeZone::load("America/New_York");
  ASSERT_TRUE(ny.ok());
  EXPECT_EQ(ny->lookup(1780000000).offset, -4 * 3600);  // June 2026: EDT
  EXPECT_EQ(ny->lookup(1798000000).offset, -5 * 3600);  // December 2026: EST
  EXPECT_EQ(TimeZone::load("Mars/Olympus").error().message, "unknown time zone Mars/Olympus");
  EXPECT_FALSE(TimeZone::load("../etc/passwd").ok());
  EXPECT_EQ(error("TZ=Mars/Olympus * * * * *"),
            "provided bad location Mars/Olympus: unknown time zone Mars/Olympus");
}

TEST(CronSchedule, ErrorsReadAsTheGoLibrarys) {
  EXPECT_EQ(error(""), "empty spec string");
  EXPECT_EQ(error("foo"), "expected exactly 5 fields, found 1: [foo]");
  EXPECT_EQ(error("* * * * * *"), "expected exactly 5 fields, found 6: [* * * * * *]");
  EXPECT_EQ(error("61 * * * *"), "end of range (61) above maximum (59): 61");
  EXPECT_EQ(error("* * 0 * *"), "beginning of range (0) below minimum (1): 0");
  EXPECT_EQ(error("5-2 * * * *"), "beginning of range (5) beyond end of range (2): 5-2");
  EXPECT_EQ(error("*/0 * * * *"), "step of range should be a positive number: */0");
  EXPECT_EQ(error("x * * * *"), "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax");
  EXPECT_EQ(error("1-2-3 * * * *"), "too many hyphens: 1-2-3");
  EXPECT_EQ(error("1/2/3 * * * *"), "too many slashes: 1/2/3");
  EXPECT_EQ(error("-1 * * * *"), "failed to parse int from : strconv.Atoi: parsing \"\": invalid syntax");
  EXPECT_EQ(error("@fortnightly"), "unrecognized descriptor: @fortnightly");
  EXPECT_EQ(error("* * * * 7"), "end of range (7) above maximum (6): 7");
  EXPECT_EQ(error("0 0 * JAN-mar SUN"), "");  // names, any case
}

TEST(TimeZone, RejectsDamagedFiles) {
  EXPECT_FALSE(TimeZone::parse("", "x").ok());
  EXPECT_FALSE(TimeZone::parse("TZif2", "x").ok());
  std::string header(44, '\0');
  header.replace(0, 4, "TZif");
  EXPECT_FALSE(TimeZone::parse(header, "x").ok());  // no local time types
}
