#include "common/clock.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace shepherd::clock {

namespace {
std::string format(TimePoint t, bool micro) {
  auto secs = std::chrono::time_point_cast<std::chrono::seconds>(t);
  std::time_t tt = std::chrono::system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  if (micro) {
    long us = static_cast<long>(std::chrono::duration_cast<std::chrono::microseconds>(t - secs).count());
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us);
  } else {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  return buf;
}
}  // namespace

std::string rfc3339(TimePoint t) {
  return format(t, false);
}
std::string rfc3339Micro(TimePoint t) {
  return format(t, true);
}

std::optional<TimePoint> parseRfc3339(std::string_view s) {
  int Y, M, D, h, m, sec;
  char rest[64] = {0};
  std::string str(s.substr(0, 60));
  int n = std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%63s", &Y, &M, &D, &h, &m, &sec, rest);
  if (n < 6) return std::nullopt;
  std::tm tm{};
  tm.tm_year = Y - 1900;
  tm.tm_mon = M - 1;
  tm.tm_mday = D;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = sec;
  std::time_t tt = timegm(&tm);
  TimePoint tp = std::chrono::system_clock::from_time_t(tt);
  const char* p = rest;
  if (*p == '.') {
    ++p;
    long frac = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9') {
      if (digits < 6) {
        frac = frac * 10 + (*p - '0');
        ++digits;
      }
      ++p;
    }
    while (digits < 6) {
      frac *= 10;
      ++digits;
    }
    tp += std::chrono::microseconds(frac);
  }
  if (*p == 'Z' || *p == 'z') return tp;
  int oh = 0, om = 0;
  char sign = *p;
  if ((sign == '+' || sign == '-') && std::sscanf(p + 1, "%2d:%2d", &oh, &om) == 2) {
    auto off = std::chrono::hours(oh) + std::chrono::minutes(om);
    return sign == '+' ? tp - off : tp + off;
  }
  return std::nullopt;
}

bool isRfc3339(std::string_view s) {
  auto digits = [&](size_t at, size_t n) {
    if (at + n > s.size()) return false;
    for (size_t i = at; i < at + n; ++i)
      if (s[i] < '0' || s[i] > '9') return false;
    return true;
  };
  if (!digits(0, 4) || s.size() < 20 || s[4] != '-' || !digits(5, 2) || s[7] != '-' || !digits(8, 2) ||
      (s[10] != 'T' && s[10] != 't') || !digits(11, 2) || s[13] != ':' || !digits(14, 2) || s[16] != ':' ||
      !digits(17, 2))
    return false;
  size_t i = 19;
  if (s[i] == '.') {
    size_t start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return false;
  }
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) return i + 1 == s.size();
  return i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && digits(i + 1, 2) && s[i + 3] == ':' &&
         digits(i + 4, 2);
}

std::string humanDuration(std::chrono::seconds d) {
  // Mirrors k8s.io/apimachinery/pkg/util/duration.HumanDuration.
  long long s = d.count();
  if (s < 0) s = 0;
  auto str = [](long long v, const char* u) { return std::to_string(v) + u; };
  if (s < 120) return str(s, "s");
  long long minutes = s / 60;
  if (minutes < 10) {
    long long rs = s % 60;
    return rs == 0 ? str(minutes, "m") : str(minutes, "m") + str(rs, "s");
  }
  if (minutes < 180) return str(minutes, "m");
  long long hours = s / 3600;
  if (hours < 8) {
    long long rm = (s / 60) % 60;
    return rm == 0 ? str(hours, "h") : str(hours, "h") + str(rm, "m");
  }
  if (hours < 48) return str(hours, "h");
  if (hours < 24 * 8) {
    long long rh = hours % 24;
    return rh == 0 ? str(hours / 24, "d") : str(hours / 24, "d") + str(rh, "h");
  }
  if (hours < 24 * 365 * 2) return str(hours / 24, "d");
  if (hours < 24 * 365 * 8) {
    long long dy = (hours / 24) % 365;
    return dy == 0 ? str(hours / 24 / 365, "y") : str(hours / 24 / 365, "y") + str(dy, "d");
  }
  return str(hours / 24 / 365, "y");
}

std::optional<std::chrono::milliseconds> parseDuration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool bare = s.find_first_not_of("0123456789") == std::string_view::npos;
  if (bare) {
    if (s.size() > 12) return std::nullopt;
    return std::chrono::seconds(std::stoll(std::string(s)));
  }
  double total_ms = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == start || i - start > 12) return std::nullopt;
    double value = std::strtod(std::string(s.substr(start, i - start)).c_str(), nullptr);
    size_t unit_start = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    std::string_view unit = s.substr(unit_start, i - unit_start);
    double scale = 0;
    if (unit == "ms")
      scale = 1;
    else if (unit == "s")
      scale = 1000;
    else if (unit == "m")
      scale = 60 * 1000;
    else if (unit == "h")
      scale = 3600 * 1000;
    else
      return std::nullopt;
    total_ms += value * scale;
  }
  return std::chrono::milliseconds(static_cast<int64_t>(total_ms));
}

const Clock& realClock() {
  static const RealClock c;
  return c;
}

}  // namespace shepherd::clock
