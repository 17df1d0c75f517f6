// Wall-clock formatting in the forms Kubernetes uses: metav1.Time (RFC 3339, seconds)
// and metav1.MicroTime (RFC 3339 with microseconds), and parsing of both.
#pragma once

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

}  // namespace shepherd::clock
