#include "handlers/watch_registry.h"

namespace shepherd::handlers {

void WatchRegistry::add(const std::shared_ptr<WatchStream>& w) {
  MutexLock g(mu_);
  streams_.push_back(w);
}

void WatchRegistry::expire() {
  std::vector<std::shared_ptr<WatchStream>> due;
  auto now = std::chrono::steady_clock::now();
  {
    MutexLock g(mu_);
    std::vector<std::weak_ptr<WatchStream>> keep;
    keep.reserve(streams_.size());
    for (auto& w : streams_) {
      auto s = w.lock();
      if (!s || s->done()) continue;
      if (s->expired(now))
        due.push_back(s);
      else
        keep.push_back(w);
    }
    streams_.swap(keep);
  }
  for (auto& s : due) s->finish();  // outside the lock: finishing unregisters from caches
}

void WatchRegistry::finishAll() {
  std::vector<std::shared_ptr<WatchStream>> all;
  {
    MutexLock g(mu_);
    for (auto& w : streams_)
      if (auto s = w.lock()) all.push_back(s);
    streams_.clear();
  }
  for (auto& s : all) s->finish();
}

size_t WatchRegistry::size() {
  MutexLock g(mu_);
  return streams_.size();
}

std::shared_ptr<void> WatchRegistry::reserve(const std::string& user) {
  {
    MutexLock g(*users_mu_);
    int& n = (*per_user_)[user];
    if (max_per_user_ > 0 && n >= max_per_user_) return nullptr;
    ++n;
  }
  // The handle may outlive the registry (a stream ending during shutdown): it keeps the
  // counters alive itself.
  struct Slot {
    Slot(std::shared_ptr<Mutex> m, std::shared_ptr<std::unordered_map<std::string, int>> c, std::string u)
        : mu(std::move(m)), counts(std::move(c)), user(std::move(u)) {}
    std::shared_ptr<Mutex> mu;
    std::shared_ptr<std::unordered_map<std::string, int>> counts;
    std::string user;
    ~Slot() {
      MutexLock g(*mu);
      auto it = counts->find(user);
      if (it != counts->end() && --it->second <= 0) counts->erase(it);
    }
  };
  return std::make_shared<Slot>(users_mu_, per_user_, user);  // built in place: no temporary to destroy
}

}  // namespace shepherd::handlers
