#include "client/shared_informers.h"

#include <chrono>

namespace shepherd::client {

InformerOptions allObjects(const std::string& group, const std::string& version, const std::string& plural) {
  InformerOptions o;
  o.group = group;
  o.version = version;
  o.plural = plural;
  return o;
}

Informer& SharedInformers::get(const InformerOptions& opts) {
  std::string key = opts.group + "/" + opts.version + "/" + opts.plural + "|" + opts.ns + "|" +
                    opts.label_selector + "|" + opts.field_selector;
  MutexLock g(mu_);
  auto& slot = informers_[key];
  if (!slot) slot = std::make_unique<Informer>(client_, opts);
  return *slot;
}

void SharedInformers::start() {
  MutexLock g(mu_);
  for (auto& [key, inf] : informers_) inf->start();
}

bool SharedInformers::waitForSync(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  MutexLock g(mu_);
  for (auto& [key, inf] : informers_) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (!inf->waitForSync(static_cast<int>(std::max<int64_t>(0, left.count())))) return false;
  }
  return true;
}

void SharedInformers::stop() {
  MutexLock g(mu_);
  for (auto& [key, inf] : informers_) inf->stop();
}

size_t SharedInformers::size() {
  MutexLock g(mu_);
  return informers_.size();
}

}  // namespace shepherd::client
