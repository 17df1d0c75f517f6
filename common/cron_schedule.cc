#include "common/cron_schedule.h"

#include <cctype>
#include <charconv>
#include <map>
#include <vector>

namespace shepherd {

namespace {

constexpr uint64_t kStar = uint64_t(1) << 63;

struct Bounds {
  unsigned min, max;
  const std::map<std::string, unsigned>* names;
};

const std::map<std::string, unsigned> kMonths = {{"jan", 1}, {"feb", 2},  {"mar", 3},  {"apr", 4},
                                                 {"may", 5}, {"jun", 6},  {"jul", 7},  {"aug", 8},
                                                 {"sep", 9}, {"oct", 10}, {"nov", 11}, {"dec", 12}};
const std::map<std::string, unsigned> kDays = {{"sun", 0}, {"mon", 1}, {"tue", 2}, {"wed", 3},
                                               {"thu", 4}, {"fri", 5}, {"sat", 6}};
const Bounds kMinute{0, 59, nullptr}, kHour{0, 23, nullptr}, kDom{1, 31, nullptr}, kMonth{1, 12, &kMonths},
    kDow{0, 6, &kDays};

uint64_t bits(unsigned min, unsigned max, unsigned step) {
  if (step == 1) return (max >= 63 ? ~uint64_t(0) : ~(~uint64_t(0) << (max + 1))) & (~uint64_t(0) << min);
  uint64_t b = 0;
  for (unsigned i = min; i <= max; i += step) b |= uint64_t(1) << i;
  return b;
}

uint64_t all(const Bounds& r) {
  return bits(r.min, r.max, 1) | kStar;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// strconv.Atoi's rules and messages.
Result<unsigned> parseInt(std::string_view expr) {
  std::string_view digits = expr;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  long long v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  bool syntax = digits.empty() || p != digits.data() + digits.size() ||
                (ec != std::errc() && ec != std::errc::result_out_of_range);
  std::string quoted = "\"" + std::string(expr) + "\"";
  if (syntax)
    return ApiError::badRequest("failed to parse int from " + std::string(expr) + ": strconv.Atoi: parsing " +
                                quoted + ": invalid syntax");
  if (ec == std::errc::result_out_of_range)
    return ApiError::badRequest("failed to parse int from " + std::string(expr) + ": strconv.Atoi: parsing " +
                                quoted + ": value out of range");
  if (negative) v = -v;
  if (v < 0)
    return ApiError::badRequest("negative number (" + std::to_string(v) +
                                ") not allowed: " + std::string(expr));
  if (v > 1000000) v = 1000000;  // every bound check below fails it the same way
  return static_cast<unsigned>(v);
}

Result<unsigned> parseIntOrName(std::string_view expr, const Bounds& r) {
  if (r.names) {
    std::string lower(expr);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (auto it = r.names->find(lower); it != r.names->end()) return it->second;
  }
  return parseInt(expr);
}

Result<uint64_t> range(std::string_view expr, const Bounds& r) {
  auto rangeAndStep = split(expr, '/');
  auto lowAndHigh = split(rangeAndStep[0], '-');
  bool single = lowAndHigh.size() == 1;
  unsigned start = 0, end = 0, step = 1;
  uint64_t extra = 0;
  if (lowAndHigh[0] == "*" || lowAndHigh[0] == "?") {
    start = r.min;
    end = r.max;
    extra = kStar;
  } else {
    auto s = parseIntOrName(lowAndHigh[0], r);
    if (!s) return s.error();
    start = end = *s;
    if (lowAndHigh.size() == 2) {
      auto e = parseIntOrName(lowAndHigh[1], r);
      if (!e) return e.error();
      end = *e;
    } else if (lowAndHigh.size() > 2) {
      return ApiError::badRequest("too many hyphens: " + std::string(expr));
    }
  }
  if (rangeAndStep.size() == 2) {
    auto st = parseInt(rangeAndStep[1]);
    if (!st) return st.error();
    step = *st;
    if (single) end = r.max;  // "N/step" is "N-max/step"
    if (step > 1) extra = 0;
  } else if (rangeAndStep.size() > 2) {
    return ApiError::badRequest("too many slashes: " + std::string(expr));
  }
  auto fail = [&](const std::string& what) { return ApiError::badRequest(what + ": " + std::string(expr)); };
  if (start < r.min)
    return fail("beginning of range (" + std::to_string(start) + ") below minimum (" + std::to_string(r.min) +
                ")");
  if (end > r.max)
    return fail("end of range (" + std::to_string(end) + ") above maximum (" + std::to_string(r.max) + ")");
  if (start > end)
    return fail("beginning of range (" + std::to_string(start) + ") beyond end of range (" +
                std::to_string(end) + ")");
  if (step == 0) return fail("step of range should be a positive number");
  return bits(start, end, step) | extra;
}

Result<uint64_t> field(std::string_view f, const Bounds& r) {
  uint64_t out = 0;
  for (auto part : split(f, ',')) {
    if (part.empty()) continue;  // strings.FieldsFunc drops empty parts
    auto b = range(part, r);
    if (!b) return b.error();
    out |= *b;
  }
  return out;
}

std::vector<std::string_view> fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Civil (proleptic Gregorian) dates from days since 1970-01-01 and back.
int64_t daysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = static_cast<unsigned>(y - era * 400);
  unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct Civil {
  int64_t year;
  unsigned month, day, hour, minute, second, weekday;
};

Civil civil(int64_t local) {
  int64_t days = local >= 0 ? local / 86400 : -((-local + 86399) / 86400);
  int64_t secs = local - days * 86400;
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = static_cast<unsigned>(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  Civil c;
  c.day = doy - (153 * mp + 2) / 5 + 1;
  c.month = mp < 10 ? mp + 3 : mp - 9;
  c.year = static_cast<int64_t>(yoe) + era * 400 + (c.month <= 2);
  c.hour = static_cast<unsigned>(secs / 3600);
  c.minute = static_cast<unsigned>(secs / 60 % 60);
  c.second = static_cast<unsigned>(secs % 60);
  c.weekday = static_cast<unsigned>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday
  return c;
}

// Local seconds of a date whose month and day may overflow (as Go's time.Date normalizes).
int64_t localOf(int64_t year, int64_t month, int64_t day, int64_t hour, int64_t minute, int64_t second) {
  int64_t m0 = month - 1;
  year += m0 >= 0 ? m0 / 12 : -((-m0 + 11) / 12);
  m0 = ((m0 % 12) + 12) % 12;
  int64_t days = daysFromCivil(year, static_cast<unsigned>(m0 + 1), 1) + day - 1;
  return days * 86400 + hour * 3600 + minute * 60 + second;
}

}  // namespace

Result<CronSchedule> CronSchedule::parse(std::string_view spec, const std::string& zoneinfo) {
  if (spec.empty()) return ApiError::badRequest("empty spec string");
  CronSchedule s;
  if (spec.rfind("TZ=", 0) == 0 || spec.rfind("CRON_TZ=", 0) == 0) {
    size_t space = spec.find(' ');
    size_t eq = spec.find('=');
    std::string_view name =
        spec.substr(eq + 1, space == std::string_view::npos ? std::string_view::npos : space - eq - 1);
    auto tz = space == std::string_view::npos
                  ? Result<TimeZone>(ApiError::badRequest("no schedule after the zone"))
                  : TimeZone::load(name, zoneinfo);
    if (!tz)
      return ApiError::badRequest("provided bad location " + std::string(name) + ": " + tz.error().message);
    s.zone_ = std::move(*tz);
    spec = trim(spec.substr(space));
  }
  if (!spec.empty() && spec[0] == '@') {
    std::string d(spec);
    if (d == "@yearly" || d == "@annually") {
      s.minute_ = 1;
      s.hour_ = 1;
      s.dom_ = uint64_t(1) << 1;
      s.month_ = uint64_t(1) << 1;
      s.dow_ = all(kDow);
    } else if (d == "@monthly") {
      s.minute_ = 1, s.hour_ = 1, s.dom_ = uint64_t(1) << 1, s.month_ = all(kMonth), s.dow_ = all(kDow);
    } else if (d == "@weekly") {
      s.minute_ = 1, s.hour_ = 1, s.dom_ = all(kDom), s.month_ = all(kMonth), s.dow_ = 1;
    } else if (d == "@daily" || d == "@midnight") {
      s.minute_ = 1, s.hour_ = 1, s.dom_ = all(kDom), s.month_ = all(kMonth), s.dow_ = all(kDow);
    } else if (d == "@hourly") {
      s.minute_ = 1, s.hour_ = all(kHour), s.dom_ = all(kDom), s.month_ = all(kMonth), s.dow_ = all(kDow);
    } else if (d.rfind("@every ", 0) == 0) {
      std::string dur = d.substr(7);
      bool bareNumber =
          !dur.empty() && dur.find_first_not_of("0123456789.") == std::string::npos && dur != "0";
      auto ms = bareNumber ? std::nullopt : clock::parseDuration(dur);
      if (!ms)
        return ApiError::badRequest(
            "failed to parse duration " + d +
            ": time: " + (bareNumber ? "missing unit in duration" : "invalid duration") + " \"" + dur + "\"");
      auto secs = std::chrono::duration_cast<std::chrono::seconds>(*ms);
      s.every_ = std::max(secs, std::chrono::seconds(1));
    } else {
      return ApiError::badRequest("unrecognized descriptor: " + d);
    }
    return s;
  }
  auto f = fields(spec);
  if (f.size() != 5) {
    std::string list = "[";
    for (size_t i = 0; i < f.size(); ++i) list += (i ? " " : "") + std::string(f[i]);
    return ApiError::badRequest("expected exactly 5 fields, found " + std::to_string(f.size()) + ": " + list +
                                "]");
  }
  const Bounds* bounds[] = {&kMinute, &kHour, &kDom, &kMonth, &kDow};
  uint64_t* out[] = {&s.minute_, &s.hour_, &s.dom_, &s.month_, &s.dow_};
  for (size_t i = 0; i < 5; ++i) {
    auto b = field(f[i], *bounds[i]);
    if (!b) return b.error();
    *out[i] = *b;
  }
  return s;
}

std::optional<clock::TimePoint> CronSchedule::next(clock::TimePoint at) const {
  int64_t t = std::chrono::duration_cast<std::chrono::seconds>(at.time_since_epoch()).count();
  if (at.time_since_epoch() < std::chrono::seconds(t)) --t;  // floor for times before 1970
  if (every_) return clock::TimePoint(std::chrono::seconds(t) + *every_);
  const TimeZone& z = zone_;
  auto c = [&] { return civil(z.toLocal(t)); };
  auto dayMatches = [&](const Civil& d) {
    bool dom = (dom_ >> d.day) & 1, dow = (dow_ >> d.weekday) & 1;
    if ((dom_ & kStar) || (dow_ & kStar)) return dom && dow;
    return dom || dow;
  };
  t += 1;  // the earliest possible time: the next second
  bool added = false;
  int64_t yearLimit = c().year + 5;
wrap:
  Civil now = c();
  if (now.year > yearLimit) return std::nullopt;
  while (!((month_ >> now.month) & 1)) {
    if (!added) {
      added = true;
      t = z.fromLocal(localOf(now.year, now.month, 1, 0, 0, 0));
      now = c();
    }
    t = z.fromLocal(localOf(now.year, now.month + 1, now.day, now.hour, now.minute, now.second));
    now = c();
    if (now.month == 1) goto wrap;
  }
  while (!dayMatches(now)) {
    if (!added) {
      added = true;
      t = z.fromLocal(localOf(now.year, now.month, now.day, 0, 0, 0));
      now = c();
    }
    t = z.fromLocal(localOf(now.year, now.month, now.day + 1, now.hour, now.minute, now.second));
    now = c();
    // A DST change may have moved midnight.
    if (now.hour != 0) {
      t += now.hour > 12 ? int64_t(24 - now.hour) * 3600 : -int64_t(now.hour) * 3600;
      now = c();
    }
    if (now.day == 1) goto wrap;
  }
  while (!((hour_ >> now.hour) & 1)) {
    if (!added) {
      added = true;
      t = z.fromLocal(localOf(now.year, now.month, now.day, now.hour, 0, 0));
      now = c();
    }
    t += 3600;
    now = c();
    if (now.hour == 0) goto wrap;
  }
  while (!((minute_ >> now.minute) & 1)) {
    if (!added) {
      added = true;
      t -= ((t % 60) + 60) % 60;
      now = c();
    }
    t += 60;
    now = c();
    if (now.minute == 0) goto wrap;
  }
  while (now.second != 0) {
    added = true;
    t += 1;
    now = c();
    if (now.second == 0) goto wrap;
  }
  return clock::TimePoint(std::chrono::seconds(t));
}

}  // namespace shepherd
