#include "client/informer.h"

#include <chrono>

#include "common/log.h"

namespace shepherd::client {

std::string objectKey(const json::Value& obj) {
  std::string_view ns = json::getStringPath(obj, {"metadata", "namespace"});
  std::string_view name = json::getStringPath(obj, {"metadata", "name"});
  return ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name);
}

Informer::Informer(Client& client, InformerOptions opts) : client_(client), opts_(std::move(opts)) {}

Informer::~Informer() {
  stop();
}

void Informer::addHandlers(EventHandlers h) {
  handlers_.push_back(std::move(h));
}

void Informer::addIndex(const std::string& name, IndexFunc fn) {
  index_funcs_[name] = std::move(fn);
}

void Informer::start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void Informer::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

bool Informer::waitForSync(int timeout_ms) {
  UniqueMutexLock lk(sync_mu_);
  return lk.waitFor(sync_cv_, std::chrono::milliseconds(timeout_ms), [&] { return synced_.load(); });
}

Object Informer::get(const std::string& key) const {
  MutexLock g(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

std::vector<Object> Informer::list() const {
  MutexLock g(mu_);
  std::vector<Object> out;
  out.reserve(items_.size());
  for (const auto& [k, v] : items_) out.push_back(v);
  return out;
}

std::vector<Object> Informer::byIndex(const std::string& index, const std::string& value) const {
  MutexLock g(mu_);
  std::vector<Object> out;
  auto idx = indexes_.find(index);
  if (idx == indexes_.end()) return out;
  auto keys = idx->second.find(value);
  if (keys == idx->second.end()) return out;
  for (const auto& k : keys->second) {
    auto it = items_.find(k);
    if (it != items_.end()) out.push_back(it->second);
  }
  return out;
}

std::string Informer::lastResourceVersion() const {
  MutexLock g(mu_);
  return rv_;
}

std::string Informer::listPath(const std::string& cont, const std::string& rv) const {
  std::string p = resourcePath(opts_.group, opts_.version, opts_.plural, opts_.ns) +
                  "?limit=" + std::to_string(opts_.page_size);
  if (!opts_.label_selector.empty()) p += "&labelSelector=" + urlEncode(opts_.label_selector);
  if (!opts_.field_selector.empty()) p += "&fieldSelector=" + urlEncode(opts_.field_selector);
  if (!cont.empty()) p += "&continue=" + urlEncode(cont);
  if (!rv.empty()) p += "&resourceVersion=" + rv;
  return p;
}

void Informer::indexInsert(const std::string& key, const json::Value& obj) {
  for (const auto& [name, fn] : index_funcs_)
    for (const auto& v : fn(obj)) indexes_[name][v].insert(key);
}

void Informer::indexRemove(const std::string& key, const json::Value& obj) {
  for (const auto& [name, fn] : index_funcs_)
    for (const auto& v : fn(obj)) {
      auto& keys = indexes_[name][v];
      keys.erase(key);
      if (keys.empty()) indexes_[name].erase(v);
    }
}

void Informer::applyAdd(const Object& obj) {
  std::string key = objectKey(*obj);
  Object old;
  {
    MutexLock g(mu_);
    auto it = items_.find(key);
    if (it != items_.end()) {
      old = it->second;
      indexRemove(key, *old);
    }
    items_[key] = obj;
    indexInsert(key, *obj);
  }
  for (auto& h : handlers_) {
    if (old && h.on_update)
      h.on_update(old, obj);
    else if (!old && h.on_add)
      h.on_add(obj);
  }
}

void Informer::applyUpdate(const Object& obj) {
  applyAdd(obj);
}

void Informer::applyDelete(const Object& obj) {
  std::string key = objectKey(*obj);
  Object old;
  {
    MutexLock g(mu_);
    auto it = items_.find(key);
    if (it != items_.end()) {
      old = it->second;
      indexRemove(key, *old);
      items_.erase(it);
    }
  }
  for (auto& h : handlers_)
    if (h.on_delete) h.on_delete(old ? old : obj);
}

// Lists everything (page by page, one consistent revision) and reconciles the cache:
// handlers see adds, updates and deletes for what changed while we were not watching.
bool Informer::relist() {
  relists_++;
  std::vector<Object> fresh;
  std::string cont, rv;
  while (!stop_.load()) {
    auto page = client_.get(listPath(cont, ""), RequestOptions{60000, 0});
    if (!page) {
      LOG_WARN("informer " << opts_.plural << ": list failed: " << page.error().message);
      return false;
    }
    rv = json::getStringPath(*page, {"metadata", "resourceVersion"});
    if (const json::Value* items = json::find(*page, "items"); items && items->IsArray()) {
      for (auto& it : items->GetArray()) {
        auto d = std::make_shared<json::Document>();
        d->CopyFrom(it, d->GetAllocator());
        fresh.push_back(std::move(d));
      }
    }
    cont = json::getStringPath(*page, {"metadata", "continue"});
    if (cont.empty()) break;
  }
  if (stop_.load()) return false;
  std::set<std::string> seen;
  for (const auto& obj : fresh) {
    std::string key = objectKey(*obj);
    seen.insert(key);
    Object cur = get(key);
    if (cur && json::getStringPath(*cur, {"metadata", "resourceVersion"}) ==
                   json::getStringPath(*obj, {"metadata", "resourceVersion"}))
      continue;
    applyAdd(obj);
  }
  for (const auto& obj : list())
    if (!seen.count(objectKey(*obj))) applyDelete(obj);
  {
    MutexLock g(mu_);
    rv_ = rv;
  }
  if (!synced_.exchange(true)) {
    MutexLock g(sync_mu_);
    sync_cv_.notify_all();
  }
  return true;
}

void Informer::run() {
  auto backoff = std::chrono::milliseconds(200);
  while (!stop_.load()) {
    if (!relist()) {
      for (auto t = std::chrono::milliseconds(0); t < backoff && !stop_.load();
           t += std::chrono::milliseconds(50))
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
      continue;
    }
    backoff = std::chrono::milliseconds(200);
    watchLoop();  // returns when a relist is needed or on stop
  }
}

void Informer::watchLoop() {
  auto backoff = std::chrono::milliseconds(100);
  while (!stop_.load()) {
    std::string rv = lastResourceVersion();
    std::string path = resourcePath(opts_.group, opts_.version, opts_.plural, opts_.ns) +
                       "?watch=true&allowWatchBookmarks=true&resourceVersion=" + rv;
    if (!opts_.label_selector.empty()) path += "&labelSelector=" + urlEncode(opts_.label_selector);
    if (!opts_.field_selector.empty()) path += "&fieldSelector=" + urlEncode(opts_.field_selector);
    bool expired = false;
    auto st = client_.stream(
        path,
        [&](std::string_view line) {
          json::Document ev;
          ev.Parse(line.data(), line.size());
          if (ev.HasParseError()) return true;
          std::string_view type = json::getString(ev, "type");
          const json::Value* object = json::find(ev, "object");
          if (!object) return true;
          if (type == "ERROR") {
            if (json::getInt(*object, "code").value_or(0) == 410) expired = true;
            return false;
          }
          std::string newRv(json::getStringPath(*object, {"metadata", "resourceVersion"}));
          if (type != "BOOKMARK") {
            auto d = std::make_shared<json::Document>();
            d->CopyFrom(*object, d->GetAllocator());
            if (type == "ADDED")
              applyAdd(d);
            else if (type == "MODIFIED")
              applyUpdate(d);
            else if (type == "DELETED")
              applyDelete(d);
          }
          if (!newRv.empty()) {
            MutexLock g(mu_);
            rv_ = newRv;
          }
          backoff = std::chrono::milliseconds(100);
          return !stop_.load();
        },
        &stop_, 90);
    if (stop_.load()) return;
    if (expired || (!st && st.error().code == 410)) return;  // too old: relist
    watch_restarts_++;
    if (!st) {
      LOG_DEBUG("informer " << opts_.plural << ": watch ended: " << st.error().message);
      for (auto t = std::chrono::milliseconds(0); t < backoff && !stop_.load();
           t += std::chrono::milliseconds(50))
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    }
  }
}

}  // namespace shepherd::client
