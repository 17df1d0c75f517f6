#include "registry/registry.h"

#include <malloc.h>

#include "common/clock.h"
#include "common/log.h"

namespace shepherd::registry {

Result<std::unique_ptr<Registry>> Registry::start(storage::Storage& storage, const RegistryOptions& opts) {
  std::unique_ptr<Registry> reg(new Registry(storage));
  auto alloc = ServiceAllocator::make(opts.service_cidr, opts.node_port_range);
  if (!alloc) return alloc.error();
  reg->allocator_ = std::move(alloc.value());
  for (const auto& res : apis::Catalog::instance().resources()) {
    if (!res->stored) continue;  // nothing stored
    auto prepared = std::make_unique<PreparedObjects>();
    auto cache = std::make_unique<storage::WatchCache>(
        storage, res->storage_prefix,
        [res, p = prepared.get()](const std::string& key, const std::string& value, int64_t rev,
                                  int64_t crev) {
          if (ObjectPtr made = p->take(key, value, rev, crev)) return made;
          return decodeObject(*res, key, value, rev, crev);
        },
        opts.watch_window, res->strategy->indexedFieldNames());
    auto started = cache->start();
    if (!started.ok())
      return ApiError::internal("cannot start the watch cache of " + res->plural + ": " + started.message);
    auto store = std::make_unique<Store>(res, storage, *cache, *prepared, *reg);
    reg->index_[{res->group, res->version, res->plural}] = store.get();
    reg->prepared_.push_back(std::move(prepared));
    reg->caches_.push_back(std::move(cache));
    reg->stores_.push_back(std::move(store));
  }
  if (Store* services = reg->store("", "v1", "services")) reg->wireServiceHooks(*services);
  // Loading the caches freed as much heap as the store holds (the raw values), scattered
  // between the decoded objects; give those pages back to the system.
  malloc_trim(0);
  return reg;
}

Registry::~Registry() {
  // Stores refer to caches; caches stop following the storage when destroyed.
  stores_.clear();
  caches_.clear();
}

Store* Registry::store(const std::string& group, const std::string& version,
                       const std::string& plural) const {
  auto it = index_.find({group, version, plural});
  return it == index_.end() ? nullptr : it->second;
}

size_t Registry::expireEvents(std::chrono::seconds ttl) {
  Store* events = store("", "v1", "events");
  if (!events) return 0;
  auto page = events->list(ListOptions{});
  if (!page) return 0;
  auto cutoff = clock::now() - ttl;
  size_t removed = 0;
  for (const auto& o : page->items) {
    json::Document d;
    d.Parse(o->json.data(), o->json.size());
    // The newest time the event was written or observed.
    std::optional<clock::TimePoint> newest;
    const std::string_view times[] = {json::getStringPath(d, {"metadata", "creationTimestamp"}),
                                      json::getString(d, "lastTimestamp"), json::getString(d, "eventTime"),
                                      json::getStringPath(d, {"series", "lastObservedTime"})};
    for (std::string_view ts : times) {
      auto t = clock::parseRfc3339(ts);
      if (t && (!newest || *t > *newest)) newest = t;
    }
    if (!newest || *newest >= cutoff) continue;
    DeleteOptions del;
    del.precondition_resource_version = std::to_string(o->mod_revision);  // not if it changed meanwhile
    if (events->remove(o->ns, o->name, del)) ++removed;
  }
  return removed;
}

void Registry::sendBookmarks() {
  for (auto& c : caches_) c->sendBookmarks();
}

}  // namespace shepherd::registry
