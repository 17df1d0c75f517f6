#include "common/time_zone.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace shepherd {

namespace {

constexpr size_t kHeader = 44;
constexpr uint32_t kMaxCount = 1u << 20;  // far beyond any real file

uint32_t be32(std::string_view s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
         (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}

int64_t be64(std::string_view s, size_t at) {
  return static_cast<int64_t>((uint64_t(be32(s, at)) << 32) | be32(s, at + 4));
}

struct Counts {
  uint32_t isut, isstd, leap, time, type, chars;
};

Result<Counts> header(std::string_view s, size_t at) {
  if (s.size() < at + kHeader || s.substr(at, 4) != "TZif") return ApiError::badRequest("not a TZif file");
  Counts c{be32(s, at + 20), be32(s, at + 24), be32(s, at + 28),
           be32(s, at + 32), be32(s, at + 36), be32(s, at + 40)};
  for (uint32_t n : {c.isut, c.isstd, c.leap, c.time, c.type, c.chars})
    if (n > kMaxCount) return ApiError::badRequest("TZif counts out of range");
  if (c.type == 0) return ApiError::badRequest("TZif file without local time types");
  return c;
}

size_t blockSize(const Counts& c, size_t time_size) {
  return size_t(c.time) * time_size + c.time + size_t(c.type) * 6 + c.chars +
         size_t(c.leap) * (time_size + 4) + c.isstd + c.isut;
}

bool validName(std::string_view name) {
  // A relative path of plain components: no "..", nothing absolute.
  if (name.empty() || name.front() == '/' || name.back() == '/' || name.size() > 255) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    std::string_view part =
        name.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (char c : part)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '_' || c == '+' || c == '.'))
        return false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

}  // namespace

Result<TimeZone> TimeZone::parse(std::string_view s, std::string name) {
  auto first = header(s, 0);
  if (!first) return first.error();
  Counts c = *first;
  size_t at = kHeader, timeSize = 4;
  if (s[4] >= '2') {
    // Version 2+: skip the 32-bit block, read the 64-bit one.
    size_t skip = blockSize(c, 4);
    if (s.size() < kHeader + skip) return ApiError::badRequest("truncated TZif file");
    auto second = header(s, kHeader + skip);
    if (!second) return second.error();
    c = *second;
    at = kHeader + skip + kHeader;
    timeSize = 8;
  }
  if (s.size() < at + blockSize(c, timeSize)) return ApiError::badRequest("truncated TZif file");
  TimeZone tz;
  tz.name_ = std::move(name);
  size_t times = at, idx = times + size_t(c.time) * timeSize, types = idx + c.time;
  auto typeOffset = [&](uint32_t t) { return static_cast<int32_t>(be32(s, types + size_t(t) * 6)); };
  tz.initial_ = typeOffset(0);
  for (uint32_t i = 0; i < c.time; ++i) {
    int64_t t =
        timeSize == 8 ? be64(s, times + size_t(i) * 8) : static_cast<int32_t>(be32(s, times + size_t(i) * 4));
    uint8_t type = uint8_t(s[idx + i]);
    if (type >= c.type) return ApiError::badRequest("TZif transition to an unknown type");
    if (!tz.transitions_.empty() && t <= tz.transitions_.back())
      return ApiError::badRequest("TZif transitions out of order");
    tz.transitions_.push_back(t);
    tz.offsets_.push_back(typeOffset(type));
  }
  return tz;
}

Result<TimeZone> TimeZone::load(std::string_view name, const std::string& root) {
  if (name.empty() || name == "UTC") return TimeZone();
  ApiError unknown = ApiError::badRequest("unknown time zone " + std::string(name));
  if (!validName(name)) return unknown;
  std::ifstream in(root + "/" + std::string(name), std::ios::binary);
  if (!in) return unknown;
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string data = buf.str();
  if (data.size() > (1u << 22)) return unknown;
  auto tz = parse(data, std::string(name));
  if (!tz) return unknown;
  return tz;
}

TimeZone::Span TimeZone::lookup(int64_t unix) const {
  Span s;
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), unix);
  if (it == transitions_.begin()) {
    s.offset = initial_;
    if (!transitions_.empty()) s.end = transitions_.front();
    return s;
  }
  size_t i = static_cast<size_t>(it - transitions_.begin()) - 1;
  s.offset = offsets_[i];
  s.start = transitions_[i];
  if (i + 1 < transitions_.size()) s.end = transitions_[i + 1];
  return s;
}

int64_t TimeZone::fromLocal(int64_t local) const {
  // As Go's Date: take the offset in force at `local` read as UTC; if the instant it gives
  // falls outside that offset's span, the offset at that instant decides.
  Span s = lookup(local);
  if (s.offset == 0) return local;
  int64_t utc = local - s.offset;
  if (utc < s.start || utc >= s.end) return local - lookup(utc).offset;
  return utc;
}

}  // namespace shepherd
