// Wall-clock formatting in the forms Kubernetes uses: metav1.Time (RFC 3339, seconds)
// and metav1.MicroTime (RFC 3339 with microseconds), and parsing of both; and the Clock
// that components whose behaviour depends on time take, so tests can move time.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace shepherd::clock {

using TimePoint = std::chrono::system_clock::time_point;

inline TimePoint now() {
  return std::chrono::system_clock::now();
}
std::string rfc3339(TimePoint t);       // 2026-11-29T21:19:39Z
std::string rfc3339Micro(TimePoint t);  // 2026-11-29T21:19:39.123456Z
std::optional<TimePoint> parseRfc3339(std::string_view s);
// Strict RFC 3339 shape check (4-digit year, 2-digit fields, optional fraction, zone).
bool isRfc3339(std::string_view s);
// Human age as kubectl prints it: 5s, 3m12s, 4h, 2d3h, 12d, 3y45d.
std::string humanDuration(std::chrono::seconds d);
// A duration as Go's time.ParseDuration reads flags: "4h0m0s", "90s", "1m30s", "500ms";
// a bare number counts as seconds. nullopt if malformed or negative.
std::optional<std::chrono::milliseconds> parseDuration(std::string_view s);

// The time, as a component sees it (client-go's clock.Clock). Thread-safety: safe from any
// thread.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;                                 // wall clock
  virtual std::chrono::steady_clock::time_point steady() const = 0;  // for intervals
};

// The real clocks.
class RealClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::system_clock::now(); }
  std::chrono::steady_clock::time_point steady() const override { return std::chrono::steady_clock::now(); }
};
const Clock& realClock();

// A clock that moves only when told (tests). Thread-safety: safe from any thread.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = std::chrono::system_clock::now())
      : wall_(std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch())) {}
  TimePoint now() const override {
    return TimePoint(std::chrono::duration_cast<TimePoint::duration>(wall_.load()));
  }
  std::chrono::steady_clock::time_point steady() const override {
    return std::chrono::steady_clock::time_point(steady_.load());
  }
  void advance(std::chrono::nanoseconds d) {
    wall_ = wall_.load() + d;
    steady_ = steady_.load() + d;
  }

 private:
  std::atomic<std::chrono::nanoseconds> wall_;
  std::atomic<std::chrono::nanoseconds> steady_{std::chrono::hours(1)};
};

}  // namespace shepherd::clock
