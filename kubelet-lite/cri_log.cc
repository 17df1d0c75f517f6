#include "kubelet-lite/cri_log.h"

#include "common/clock.h"

namespace shepherd::kubelet {

namespace {

// A timestamp as upstream's kubelet writes it (types.RFC3339NanoFixed): nine fractional
// digits, "Z" for a zero offset, otherwise the offset as written.
std::string fixedNano(const std::string& t) {
  if (!clock::isRfc3339(t)) return t;
  std::string out = t.substr(0, 19);
  out[10] = 'T';
  size_t i = 19;
  std::string frac;
  if (t[i] == '.') {
    ++i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') frac += t[i++];
  }
  frac.resize(9, '0');
  std::string zone = t.substr(i);
  bool utc = zone == "z" || zone == "+00:00" || zone == "-00:00";
  return out + "." + frac + (utc ? std::string("Z") : zone);
}

// Appends the logical lines of `content`'s complete records and returns how many bytes
// they used. With `flush_partial`, partial records with no continuation yet end the output
// as a line without a newline (as upstream's ReadLogs writes a partial record's text as is).
size_t parseRecords(std::string_view content, std::vector<LogLine>& out, bool flush_partial) {
  std::string partial;
  std::string_view partial_time, partial_stream;
  size_t start = 0, consumed = 0;
  while (start < content.size()) {
    size_t nl = content.find('\n', start);
    if (nl == std::string::npos) break;  // an incomplete record is still being written
    std::string_view rec(content.data() + start, nl - start);
    start = nl + 1;
    // Split on the first three spaces (timestamps have no spaces).
    size_t s1 = rec.find(' ');
    if (s1 == std::string_view::npos) continue;
    size_t s2 = rec.find(' ', s1 + 1);
    if (s2 == std::string_view::npos) continue;
    size_t s3 = rec.find(' ', s2 + 1);
    // Records upstream's parseCRILog rejects are skipped: a bad time, another stream, no tag.
    std::string_view stream = rec.substr(s1 + 1, s2 - s1 - 1);
    if (s3 == std::string_view::npos || (stream != "stdout" && stream != "stderr") ||
        !clock::parseRfc3339(rec.substr(0, s1)))
      continue;
    // Tags are ':'-separated (forward compatible); the first says partial or full.
    std::string_view tags = rec.substr(s2 + 1, s3 - s2 - 1);
    std::string_view tag = tags.substr(0, tags.find(':'));
    std::string_view text = rec.substr(s3 + 1);
    partial.append(text);
    if (tag == "P") {
      partial_time = rec.substr(0, s1);
      partial_stream = stream;
      continue;
    }
    consumed = start;
    LogLine l;
    l.time = std::string(rec.substr(0, s1));
    l.stream = std::string(rec.substr(s1 + 1, s2 - s1 - 1));
    l.text = partial + "\n";
    partial.clear();
    out.push_back(std::move(l));
  }
  if (flush_partial && !partial.empty()) {
    LogLine l;
    l.time = std::string(partial_time);
    l.stream = std::string(partial_stream);
    l.text = std::move(partial);
    out.push_back(std::move(l));
  }
  return consumed;
}

}  // namespace

std::vector<LogLine> parseCriLog(const std::string& content) {
  std::vector<LogLine> out;
  parseRecords(content, out, true);
  return out;
}

size_t parseCriLogComplete(std::string_view content, std::vector<LogLine>& out) {
  return parseRecords(content, out, false);
}

std::string renderLog(const std::vector<LogLine>& lines, const LogOptions& opts) {
  // As upstream's ReadLogs: the tail first, then every line older than `since` skipped.
  size_t first = 0;
  if (opts.tail_lines && *opts.tail_lines >= 0 && lines.size() > static_cast<size_t>(*opts.tail_lines))
    first = lines.size() - static_cast<size_t>(*opts.tail_lines);
  std::string out;
  for (size_t i = first; i < lines.size(); ++i) {
    if (opts.since) {
      auto t = clock::parseRfc3339(lines[i].time);
      if (!t || *t < *opts.since) continue;
    }
    if (opts.timestamps) out += fixedNano(lines[i].time) + " ";
    out += lines[i].text;
    if (opts.limit_bytes && static_cast<int64_t>(out.size()) >= *opts.limit_bytes) {
      out.resize(static_cast<size_t>(*opts.limit_bytes));
      break;
    }
  }
  return out;
}

}  // namespace shepherd::kubelet
