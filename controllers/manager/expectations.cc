#include "controllers/manager/expectations.h"

namespace shepherd::controllers {

bool Expectations::satisfied(const std::string& key) {
  MutexLock g(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return true;
  const Entry& e = it->second;
  return (e.adds <= 0 && e.deletes.empty()) || clock_.steady() - e.at > ttl_;
}

void Expectations::expectCreations(const std::string& key, int n) {
  MutexLock g(mu_);
  Entry& e = entries_[key];
  e.adds = n;
  e.at = clock_.steady();
}

void Expectations::expectDeletions(const std::string& key, const std::set<std::string>& pod_keys) {
  MutexLock g(mu_);
  Entry& e = entries_[key];
  e.deletes = pod_keys;
  e.at = clock_.steady();
}

void Expectations::creationObserved(const std::string& key) {
  MutexLock g(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.adds > 0) --it->second.adds;
}

void Expectations::deletionObserved(const std::string& key, const std::string& pod_key) {
  MutexLock g(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) it->second.deletes.erase(pod_key);
}

void Expectations::remove(const std::string& key) {
  MutexLock g(mu_);
  entries_.erase(key);
}

}  // namespace shepherd::controllers
