#include "handlers/watch_stream.h"

namespace shepherd::handlers {

namespace {
constexpr std::string_view kTail = "}\n";
std::string_view headFor(storage::WatchEventType t) {
  switch (t) {
    case storage::WatchEventType::Added:
      return R"({"type":"ADDED","object":)";
    case storage::WatchEventType::Modified:
      return R"({"type":"MODIFIED","object":)";
    case storage::WatchEventType::Deleted:
      return R"({"type":"DELETED","object":)";
    case storage::WatchEventType::Bookmark:
      return R"({"type":"BOOKMARK","object":)";
    case storage::WatchEventType::Error:
      return R"({"type":"ERROR","object":)";
  }
  return R"({"type":"ERROR","object":)";
}
}  // namespace

WatchStream::WatchStream(std::shared_ptr<const apis::Resource> resource,
                         std::shared_ptr<http::StreamWriter> writer, WatchStreamOptions opts)
    : resource_(std::move(resource)), writer_(std::move(writer)), opts_(std::move(opts)) {}

bool WatchStream::deliver(storage::WatchEventType type, const storage::ObjectPtr& object) {
  http::Chunk c;
  c.head = headFor(type);
  c.tail = kTail;
  if (opts_.table) {
    TableOptions to = opts_.table_options;
    to.columns = first_table_;
    first_table_ = false;
    c.data = buildTable(*resource_, {object}, to,
                        R"({"resourceVersion":")" + std::to_string(object->mod_revision) + "\"}");
  } else {
    // Zero-copy: the cached serialization is shared by every watcher.
    c.owner = object;
    c.body = object->json;
  }
  return writer_->write(std::move(c));
}

bool WatchStream::bookmark(int64_t revision) {
  if (!opts_.bookmarks) return !writer_->closed();
  http::Chunk c;
  c.head = headFor(storage::WatchEventType::Bookmark);
  c.tail = kTail;
  c.data = R"({"kind":")" + resource_->kind + R"(","apiVersion":")" + resource_->apiVersion() +
           R"(","metadata":{"resourceVersion":")" + std::to_string(revision) + R"("}})";
  return writer_->write(std::move(c));
}

void WatchStream::attach(std::unique_ptr<storage::CacheWatch> handle) {
  MutexLock g(handle_mu_);
  handle_ = std::move(handle);
}

void WatchStream::holdSlot(std::shared_ptr<void> slot) {
  MutexLock g(handle_mu_);
  slot_ = std::move(slot);
}

void WatchStream::release() {
  std::unique_ptr<storage::CacheWatch> h;
  std::shared_ptr<void> slot;
  {
    MutexLock g(handle_mu_);
    h = std::move(handle_);
    slot = std::move(slot_);
  }
  // Destroying the handle unregisters from the cache (outside our lock).
}

void WatchStream::fail(const std::string& status_json) {
  http::Chunk c;
  c.head = headFor(storage::WatchEventType::Error);
  c.tail = kTail;
  c.data = status_json;
  writer_->write(std::move(c));
  finish();
}

void WatchStream::finish() {
  writer_->finish();
  release();
}

}  // namespace shepherd::handlers
