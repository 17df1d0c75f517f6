#include "handlers/watch_registry.h"

namespace shepherd::handlers {

void WatchRegistry::add(const std::shared_ptr<WatchStream>& w) {
  std::lock_guard<std::mutex> g(mu_);
  streams_.push_back(w);
}

void WatchRegistry::expire() {
  std::vector<std::shared_ptr<WatchStream>> due;
  auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<std::weak_ptr<WatchStream>> keep;
    keep.reserve(streams_.size());
    for (auto& w : streams_) {
      auto s = w.lock();
      if (!s || s->done()) continue;
      if (s->expired(now)) due.push_back(s);
      else keep.push_back(w);
    }
    streams_.swap(keep);
  }
  for (auto& s : due) s->finish();  // outside the lock: finishing unregisters from caches
}

void WatchRegistry::finishAll() {
  std::vector<std::shared_ptr<WatchStream>> all;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& w : streams_)
      if (auto s = w.lock()) all.push_back(s);
    streams_.clear();
  }
  for (auto& s : all) s->finish();
}

size_t WatchRegistry::size() {
  std::lock_guard<std::mutex> g(mu_);
  return streams_.size();
}

}  // namespace shepherd::handlers
