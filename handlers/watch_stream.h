// A watch response: receives a WatchCache's events and writes them to the client as
// newline-delimited JSON watch events (or one-row Tables), without blocking the cache.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "apis/resource.h"
#include "common/mutex.h"
#include "handlers/table.h"
#include "net/http/message.h"
#include "storage/watch_cache.h"

namespace shepherd::handlers {

struct WatchStreamOptions {
  bool table = false;
  TableOptions table_options;
  bool bookmarks = false;
  std::chrono::steady_clock::time_point deadline;
};

// Thread-safety: deliver/bookmark are called under the cache's lock (first_table_ is
// theirs); stop() and expired() from any thread. handle_mu_ guards handle_ and slot_.
class WatchStream final : public storage::WatchSink, public std::enable_shared_from_this<WatchStream> {
 public:
  WatchStream(std::shared_ptr<const apis::Resource> resource, std::shared_ptr<http::StreamWriter> writer,
              WatchStreamOptions opts);
  bool deliver(storage::WatchEventType type, const storage::ObjectPtr& object) override;
  bool bookmark(int64_t revision) override;

  // Takes ownership of the cache registration; released when the stream ends.
  void attach(std::unique_ptr<storage::CacheWatch> handle);
  // Holds the requester's watch slot (WatchRegistry::reserve) until the stream ends.
  void holdSlot(std::shared_ptr<void> slot);
  // Writes an ERROR event carrying `status_json` and ends the stream.
  void fail(const std::string& status_json);
  // Ends the stream (timeout or shutdown).
  void finish();
  bool expired(std::chrono::steady_clock::time_point now) const { return now >= opts_.deadline; }
  bool done() const { return writer_->closed(); }

 private:
  void release();
  std::shared_ptr<const apis::Resource> resource_;
  std::shared_ptr<http::StreamWriter> writer_;
  WatchStreamOptions opts_;
  bool first_table_ = true;
  Mutex handle_mu_;
  std::unique_ptr<storage::CacheWatch> handle_ GUARDED_BY(handle_mu_);
  std::shared_ptr<void> slot_ GUARDED_BY(handle_mu_);
};

}  // namespace shepherd::handlers
