#include "storage/watch_cache.h"

#include <algorithm>
#include <thread>

#include "common/log.h"

namespace shepherd::storage {

namespace {
const std::string* lookup(const StringPairs& v, std::string_view k) {
  for (const auto& [key, value] : v)
    if (key == k) return &value;
  return nullptr;
}
bool hasPrefix(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}
}  // namespace

const std::string* CachedObject::label(std::string_view k) const {
  return lookup(labels, k);
}
const std::string* CachedObject::field(std::string_view k) const {
  return lookup(fields, k);
}

const char* watchEventTypeName(WatchEventType t) {
  switch (t) {
    case WatchEventType::Added:
      return "ADDED";
    case WatchEventType::Modified:
      return "MODIFIED";
    case WatchEventType::Deleted:
      return "DELETED";
    case WatchEventType::Bookmark:
      return "BOOKMARK";
    case WatchEventType::Error:
      return "ERROR";
  }
  return "ERROR";
}

void CacheWatch::stop() {
  if (cache_) {
    cache_->removeWatcher(id_);
    cache_ = nullptr;
  }
}

WatchCache::WatchCache(Storage& storage, std::string prefix, Decoder decoder, size_t window,
                       std::vector<std::string> indexed_fields)
    : storage_(storage),
      prefix_(std::move(prefix)),
      decoder_(std::move(decoder)),
      window_capacity_(std::max<size_t>(window, 16)) {
  for (auto& f : indexed_fields) field_index_[f];
}

void WatchCache::indexAdd(const CachedObject& obj) {
  for (auto& [field, buckets] : field_index_)
    if (const std::string* v = obj.field(field)) buckets[*v].insert(obj.key);
}

void WatchCache::indexRemove(const CachedObject& obj) {
  for (auto& [field, buckets] : field_index_) {
    const std::string* v = obj.field(field);
    if (!v) continue;
    auto b = buckets.find(*v);
    if (b == buckets.end()) continue;
    b->second.erase(obj.key);
    if (b->second.empty()) buckets.erase(b);
  }
}

WatchCache::~WatchCache() {
  storage_watch_.reset();
}

Outcome<int64_t> WatchCache::start() {
  // Not under mu_: the storage calls onBatch (which locks mu_) while holding its own
  // commit lock, so taking them in the other order here could deadlock.
  ListRequest req;
  req.prefix = prefix_;
  auto listed = storage_.list(req);
  if (!listed.ok()) return Outcome<int64_t>::failure(listed.code, listed.message);
  // Decoding is pure: a large store is decoded on all cores. Each raw value is released
  // as soon as it is decoded, so the raw and decoded copies are not all held together.
  auto& kvs = listed.value.kvs;
  std::vector<ObjectPtr> decoded(kvs.size());
  auto decodeRange = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      decoded[i] = decoder_(kvs[i].key, kvs[i].value, kvs[i].mod_revision, kvs[i].create_revision);
      std::string().swap(kvs[i].value);
    }
  };
  size_t threads = kvs.size() < 1000 ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  size_t per = (kvs.size() + threads - 1) / threads;
  std::vector<std::jthread> helpers;  // joined on every path out
  for (size_t t = 1; t < threads && t * per < kvs.size(); ++t)
    helpers.emplace_back(decodeRange, t * per, std::min(kvs.size(), (t + 1) * per));
  decodeRange(0, std::min(kvs.size(), per));
  helpers.clear();
  {
    WriterMutexLock lk(mu_);
    for (size_t i = 0; i < kvs.size(); ++i) {
      if (!decoded[i]) {
        LOG_ERROR("watch cache " << prefix_ << ": cannot decode stored object " << kvs[i].key);
        continue;
      }
      indexAdd(*decoded[i]);
      objects_.emplace_hint(objects_.end(), kvs[i].key, std::move(decoded[i]));
    }
    revision_ = listed.value.revision;
    oldest_ = revision_;
    published_revision_.store(revision_, std::memory_order_release);
  }
  auto w = storage_.watch(prefix_, listed.value.revision,
                          [this](const std::vector<storage::Event>& evs, int64_t rev) { onBatch(evs, rev); });
  if (!w.ok()) return Outcome<int64_t>::failure(w.code, w.message);
  storage_watch_ = std::move(w.value);
  Outcome<int64_t> out;
  out.value = listed.value.revision;
  return out;
}

ObjectPtr WatchCache::restamp(const ObjectPtr& obj, int64_t revision) const {
  ObjectPtr r = decoder_(obj->key, obj->json, revision, obj->create_revision);
  return r ? r : obj;
}

void WatchCache::onBatch(const std::vector<storage::Event>& events, int64_t revision) {
  // Sinks dropped here are destroyed after the lock is released: a sink's destructor
  // may unregister itself, which takes this lock.
  std::vector<std::shared_ptr<WatchSink>> dropped;
  WriterMutexLock lk(mu_);
  for (const storage::Event& se : events) {
    Event e;
    e.revision = se.kv.mod_revision;
    e.is_delete = se.type == storage::Event::Type::Delete;
    auto it = objects_.find(se.kv.key);
    e.prev = it == objects_.end() ? nullptr : it->second;
    if (e.is_delete) {
      if (e.prev) {
        e.object = restamp(e.prev, e.revision);
      } else if (se.prev) {
        e.object = decoder_(se.kv.key, se.prev->value, e.revision, se.prev->create_revision);
      }
      if (it != objects_.end()) {
        indexRemove(*it->second);
        objects_.erase(it);
      }
      if (!e.object) continue;  // nothing we could ever have shown
    } else {
      e.object = decoder_(se.kv.key, se.kv.value, se.kv.mod_revision, se.kv.create_revision);
      if (!e.object) {
        LOG_ERROR("watch cache " << prefix_ << ": cannot decode " << se.kv.key << " at revision "
                                 << se.kv.mod_revision);
        continue;
      }
      // A create after a delete of the same key is a fresh object, not a modification.
      if (se.isCreate()) e.prev = nullptr;
      if (it != objects_.end()) {
        indexRemove(*it->second);
        it->second = e.object;
      } else {
        objects_.emplace(se.kv.key, e.object);
      }
      indexAdd(*e.object);
    }
    revision_ = e.revision;
    changes_.fetch_add(1, std::memory_order_release);
    for (size_t i = 0; i < watchers_.size();) {
      if (deliverTo(watchers_[i], e)) {
        ++i;
      } else {
        dropped.push_back(std::move(watchers_[i].sink));
        watchers_.erase(watchers_.begin() + static_cast<long>(i));
      }
    }
    window_.push_back(std::move(e));
    if (window_.size() > window_capacity_) {
      oldest_ = window_.front().revision;
      window_.pop_front();
    }
  }
  if (revision > revision_) revision_ = revision;
  {
    MutexLock g(rev_mu_);
    published_revision_.store(revision_, std::memory_order_release);
  }
  rev_cv_.notify_all();
}

bool WatchCache::waitForRevision(int64_t revision, std::chrono::milliseconds timeout) const {
  // Every GET and LIST asks; almost always the cache is there already: no lock then.
  if (published_revision_.load(std::memory_order_acquire) >= revision) return true;
  UniqueMutexLock lk(rev_mu_);
  return lk.waitFor(rev_cv_, timeout,
                    [&] { return published_revision_.load(std::memory_order_acquire) >= revision; });
}

bool WatchCache::deliverTo(const Watcher& w, const Event& e) const {
  if (!hasPrefix(e.object->key, w.prefix)) return true;
  bool cur = !e.is_delete && (!w.predicate || w.predicate(*e.object));
  bool old = e.prev && (!w.predicate || w.predicate(*e.prev));
  if (e.is_delete) {
    old = !w.predicate || w.predicate(*e.object);
    return !old || w.sink->deliver(WatchEventType::Deleted, e.object);
  }
  if (cur && old) return w.sink->deliver(WatchEventType::Modified, e.object);
  if (cur) return w.sink->deliver(WatchEventType::Added, e.object);
  if (old) {
    // Stopped matching: a DELETED of the last matching state, at this event's revision.
    if (!e.prev_restamped) e.prev_restamped = restamp(e.prev, e.revision);
    return w.sink->deliver(WatchEventType::Deleted, e.prev_restamped);
  }
  return true;
}

ObjectPtr WatchCache::get(const std::string& key) const {
  ReaderMutexLock lk(mu_);
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second;
}

int64_t WatchCache::revision() const {
  ReaderMutexLock lk(mu_);
  return revision_;
}

int64_t WatchCache::oldestRevision() const {
  ReaderMutexLock lk(mu_);
  return oldest_;
}

size_t WatchCache::size() const {
  ReaderMutexLock lk(mu_);
  return objects_.size();
}

CacheError WatchCache::list(const CacheListRequest& req, CacheListResponse& out) const {
  ReaderMutexLock lk(mu_);
  int64_t at = req.revision ? req.revision : revision_;
  if (at > revision_) return CacheError::TooLarge;
  if (at < oldest_) return CacheError::Expired;
  out.revision = at;

  // State at `at` of the keys changed after it: the first later event of a key tells
  // what the key held at `at` (nothing, for a create).
  std::map<std::string, ObjectPtr> rolled_back;
  if (at < revision_) {
    auto first = std::upper_bound(window_.begin(), window_.end(), at,
                                  [](int64_t r, const Event& e) { return r < e.revision; });
    for (auto it = first; it != window_.end(); ++it) {
      const std::string& key = it->object->key;
      if (!hasPrefix(key, req.prefix)) continue;
      rolled_back.emplace(key, it->prev);  // emplace keeps the earliest
    }
  }

  auto begin = [&](const auto& m) {
    return req.start_after.empty() || req.start_after < req.prefix ? m.lower_bound(req.prefix)
                                                                   : m.upper_bound(req.start_after);
  };
  auto old = begin(rolled_back);
  auto inRange = [&](const std::string& k) { return hasPrefix(k, req.prefix); };

  int64_t taken = 0;
  auto consider = [&](const ObjectPtr& obj) {
    if (!obj) return;
    if (req.predicate && !req.predicate(*obj)) return;
    if (req.limit > 0 && taken >= req.limit) {
      out.more = true;
      ++out.remaining;
      return;
    }
    out.items.push_back(obj);
    out.last_key = obj->key;
    ++taken;
  };
  // Merge the current candidates (minus rolled-back keys) with the rolled-back states;
  // both run in key order.
  auto merge = [&](auto cur, auto end, auto keyAt, auto objectAt) REQUIRES_SHARED(mu_) {
    while (true) {
      bool cur_ok = cur != end && inRange(keyAt(cur));
      bool old_ok = old != rolled_back.end() && inRange(old->first);
      if (!cur_ok && !old_ok) break;
      if (cur_ok && rolled_back.count(keyAt(cur))) {
        ++cur;
        continue;
      }
      if (!old_ok || (cur_ok && keyAt(cur) < old->first)) {
        consider(objectAt(cur));
        ++cur;
      } else {
        consider(old->second);
        ++old;
      }
    }
  };
  // Candidates from an index: the current objects whose indexed field has the value (a
  // rolled-back state of any other key still gets the predicate).
  if (auto idx = req.index_field.empty() ? field_index_.end() : field_index_.find(req.index_field);
      idx != field_index_.end()) {
    static const std::set<std::string> none;
    auto b = idx->second.find(req.index_value);
    const std::set<std::string>& keys = b == idx->second.end() ? none : b->second;
    merge(
        begin(keys), keys.end(), [](auto it) -> const std::string& { return *it; },
        [&](auto it) REQUIRES_SHARED(mu_) { return objects_.at(*it); });
    return CacheError::None;
  }
  merge(
      begin(objects_), objects_.end(), [](auto it) -> const std::string& { return it->first; },
      [](auto it) { return it->second; });
  return CacheError::None;
}

CacheError WatchCache::watch(const CacheWatchRequest& req, std::shared_ptr<WatchSink> sink,
                             std::unique_ptr<CacheWatch>& handle) {
  std::shared_ptr<WatchSink> keep = sink;  // outlives the lock (see onBatch)
  WriterMutexLock lk(mu_);
  Watcher w{next_watcher_id_++, req.prefix, req.predicate, std::move(sink)};
  bool alive = true;
  if (req.send_initial_state || req.after_revision == 0) {
    for (auto it = objects_.lower_bound(req.prefix);
         alive && it != objects_.end() && hasPrefix(it->first, req.prefix); ++it) {
      if (!w.predicate || w.predicate(*it->second))
        alive = w.sink->deliver(WatchEventType::Added, it->second);
    }
  } else {
    if (req.after_revision < oldest_) return CacheError::Expired;
    if (req.after_revision > revision_) return CacheError::TooLarge;
    auto first = std::upper_bound(window_.begin(), window_.end(), req.after_revision,
                                  [](int64_t r, const Event& e) { return r < e.revision; });
    for (auto it = first; alive && it != window_.end(); ++it) alive = deliverTo(w, *it);
  }
  handle = std::make_unique<CacheWatch>(this, w.id);
  if (alive) watchers_.push_back(std::move(w));
  return CacheError::None;
}

void WatchCache::sendBookmarks() {
  std::vector<std::shared_ptr<WatchSink>> dropped;  // destroyed after the lock (see onBatch)
  WriterMutexLock lk(mu_);
  for (size_t i = 0; i < watchers_.size();) {
    if (watchers_[i].sink->bookmark(revision_)) {
      ++i;
    } else {
      dropped.push_back(std::move(watchers_[i].sink));
      watchers_.erase(watchers_.begin() + static_cast<long>(i));
    }
  }
}

void WatchCache::removeWatcher(uint64_t id) {
  std::shared_ptr<WatchSink> released;  // destroyed after the lock is dropped
  WriterMutexLock lk(mu_);
  for (auto it = watchers_.begin(); it != watchers_.end(); ++it) {
    if (it->id == id) {
      released = std::move(it->sink);
      watchers_.erase(it);
      break;
    }
  }
}  // lk is released before `released` (declared first) is destroyed

}  // namespace shepherd::storage
