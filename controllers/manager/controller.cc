#include "controllers/manager/controller.h"

#include "common/log.h"

namespace shepherd::controllers {

Controller::~Controller() {
  stop();
}

client::EventHandlers Controller::enqueueKeys() {
  client::EventHandlers h;
  h.on_add = [this](const client::Object& o) { queue_.add(client::objectKey(*o)); };
  h.on_update = [this](const client::Object&, const client::Object& o) { queue_.add(client::objectKey(*o)); };
  h.on_delete = [this](const client::Object& o) { queue_.add(client::objectKey(*o)); };
  return h;
}

void Controller::run(int workers) {
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { worker(); });
}

void Controller::stop() {
  queue_.shutDown();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
}

void Controller::worker() {
  std::string key;
  while (queue_.get(key)) {
    Result<SyncResult> r = ApiError::internal("sync threw");
    try {
      r = sync(key);
    } catch (const std::exception& e) {
      r = ApiError::internal(e.what());
    }
    if (!r) {
      LOG_WARN(name_ << ": syncing " << key << " failed: " << r.error().message);
      queue_.addRateLimited(key);
    } else {
      queue_.forget(key);
      if (r->requeue_after.count() > 0) queue_.addAfter(key, r->requeue_after);
    }
    queue_.done(key);
  }
}

}  // namespace shepherd::controllers
