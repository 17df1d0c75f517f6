#include "controllers/job/indexed_job.h"

#include <algorithm>
#include <charconv>
#include <climits>

namespace shepherd::controllers::job {

namespace {

std::optional<long long> atoi(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

OrderedIntervals OrderedIntervals::parse(std::string_view s, int completions) {
  OrderedIntervals out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    std::string_view part =
        s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t dash = part.find('-');
    auto first = atoi(part.substr(0, dash));
    std::optional<long long> last = first;
    if (dash != std::string_view::npos) last = atoi(part.substr(dash + 1));
    if (first && last) {
      if (*first >= completions) break;
      Interval iv{static_cast<int>(*first), static_cast<int>(std::min<long long>(*last, completions - 1))};
      if (!out.v_.empty() && out.v_.back().last == iv.first - 1)
        out.v_.back().last = iv.last;
      else
        out.v_.push_back(iv);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

OrderedIntervals OrderedIntervals::merge(const OrderedIntervals& other) const {
  OrderedIntervals out;
  auto add = [&](const Interval& iv) {
    if (out.v_.empty() || iv.first > out.v_.back().last + 1)
      out.v_.push_back(iv);
    else if (out.v_.back().last < iv.last)
      out.v_.back().last = iv.last;
  };
  size_t i = 0, j = 0;
  while (i < v_.size() && j < other.v_.size()) {
    if (v_[i].first < other.v_[j].first)
      add(v_[i++]);
    else
      add(other.v_[j++]);
  }
  while (i < v_.size()) add(v_[i++]);
  while (j < other.v_.size()) add(other.v_[j++]);
  return out;
}

OrderedIntervals OrderedIntervals::with(const std::set<int>& indexes) const {
  OrderedIntervals add;
  for (int ix : indexes) add.v_.push_back({ix, ix});
  return merge(add);
}

bool OrderedIntervals::has(int index) const {
  auto it =
      std::lower_bound(v_.begin(), v_.end(), index, [](const Interval& iv, int x) { return iv.last < x; });
  return it != v_.end() && it->first <= index;
}

int OrderedIntervals::total() const {
  int n = 0;
  for (auto& iv : v_) n += iv.last - iv.first + 1;
  return n;
}

std::string OrderedIntervals::str() const {
  std::string out;
  for (auto& iv : v_) {
    if (!out.empty()) out += ',';
    out += std::to_string(iv.first);
    if (iv.last > iv.first) out += (iv.last == iv.first + 1 ? "," : "-") + std::to_string(iv.last);
  }
  return out;
}

int completionIndex(const json::Value& pod) {
  const json::Value* v = json::findPath(pod, {"metadata", "annotations", kCompletionIndexAnnotation});
  if (!v || !v->IsString()) return kUnknownIndex;
  auto n = atoi(json::view(*v));
  if (!n || *n < 0 || *n > INT_MAX) return kUnknownIndex;
  return static_cast<int>(*n);
}

std::set<int> indexesOf(const std::vector<client::Object>& pods) {
  std::set<int> out;
  for (auto& p : pods)
    if (int ix = completionIndex(*p); ix != kUnknownIndex) out.insert(ix);
  return out;
}

int annotationCount(const json::Value& pod, const char* key) {
  const json::Value* v = json::findPath(pod, {"metadata", "annotations", key});
  if (!v || !v->IsString()) return 0;
  auto n = atoi(json::view(*v));
  if (!n || *n < 0 || *n > INT_MAX) return 0;
  return static_cast<int>(*n);
}

std::vector<int> firstPendingIndexes(const OrderedIntervals& taken, int count, int completions) {
  std::vector<int> out;
  if (count <= 0) return out;
  int candidate = 0;
  for (auto& iv : taken.intervals()) {
    for (; candidate < completions && static_cast<int>(out.size()) < count && candidate < iv.first;
         ++candidate)
      out.push_back(candidate);
    if (candidate < iv.last + 1) candidate = iv.last + 1;
  }
  for (; candidate < completions && static_cast<int>(out.size()) < count; ++candidate)
    out.push_back(candidate);
  return out;
}

}  // namespace shepherd::controllers::job
