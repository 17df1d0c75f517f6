// Reading container logs in the CRI format containerd writes:
// "<RFC3339Nano time> <stdout|stderr> <P|F> <text>" per line, where P marks a partial
// line continued by the next entry and F the end of a line.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shepherd::kubelet {

struct LogOptions {
  std::optional<int64_t> tail_lines;
  std::optional<int64_t> limit_bytes;
  std::optional<std::chrono::system_clock::time_point> since;  // from sinceTime or sinceSeconds
  bool timestamps = false;
};

struct LogLine {
  std::string time;    // as written (RFC 3339 with nanoseconds)
  std::string stream;  // stdout or stderr
  std::string text;    // the whole logical line, with its newline (none for a last partial)
};

// Parses a CRI log file's content into logical lines (partials joined). Partial records
// that nothing continues (output without a final newline, e.g. `echo -n`) end it as a line
// without a newline.
std::vector<LogLine> parseCriLog(const std::string& content);
// The same, for a file still being written: appends the complete logical lines and
// returns how many bytes of `content` they used (the rest is read again later).
size_t parseCriLogComplete(std::string_view content, std::vector<LogLine>& out);
// Renders lines as `kubectl logs` expects: text, or "<time> <text>" with timestamps;
// applies since, tail and byte limit.
std::string renderLog(const std::vector<LogLine>& lines, const LogOptions& opts);

}  // namespace shepherd::kubelet
