#include <utility>

#include "net/http/server_internal.h"

namespace shepherd::http {

bool StreamState::write(Chunk chunk) {
  MutexLock g(mu_);
  if (closed_.load() || finish_requested_) return false;
  size_t n = chunk.size();
  if (pending_bytes_ + n > limit_) {
    // Too far behind: drop this reader rather than buffer without bound.
    closed_ = true;
    pending_.clear();
    pending_bytes_ = 0;
    if (auto s = session_.lock()) net::post(s->executor(), [s] { s->shutdownNow(); });
    return false;
  }
  pending_bytes_ += n;
  pending_.push_back(std::move(chunk));
  schedule();
  return true;
}

void StreamState::finish() {
  MutexLock g(mu_);
  if (finish_requested_) return;
  finish_requested_ = true;
  schedule();
}

void StreamState::schedule() {
  if (flush_scheduled_) return;
  auto s = session_.lock();
  if (!s) return;
  flush_scheduled_ = true;
  net::post(s->executor(), [s] { s->flush(); });
}

bool StreamState::take(std::vector<Chunk>& out, bool& finish) {
  MutexLock g(mu_);
  flush_scheduled_ = false;
  if (closed_.load() && !finish_requested_) return false;
  out.swap(pending_);
  pending_bytes_ = 0;
  finish = finish_requested_;
  return true;
}

void StreamState::onClose(std::function<void()> fn) {
  bool call_now = false;
  {
    MutexLock g(mu_);
    if (close_notified_)
      call_now = true;
    else
      on_close_ = std::move(fn);
  }
  if (call_now && fn) fn();
}

void StreamState::markClosed() {
  std::function<void()> fn;
  {
    MutexLock g(mu_);
    closed_ = true;
    pending_.clear();
    pending_bytes_ = 0;
    if (close_notified_) return;
    close_notified_ = true;
    fn = std::move(on_close_);
  }
  if (fn) fn();
}

}  // namespace shepherd::http
