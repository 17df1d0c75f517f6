// What the watch cache tests share (watch_cache_test.cc, and the backend-facing cache
// contract in storage_conformance_test.cc): a toy decoder and a recording sink.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "storage/watch_cache.h"

namespace shepherd::testutil {

// Values are "label-value|payload"; the decoder exposes label "app".
inline storage::ObjectPtr decode(const std::string& key, const std::string& value, int64_t rev,
                                 int64_t crev) {
  auto o = std::make_shared<storage::CachedObject>();
  o->key = key;
  o->name = key.substr(key.rfind('/') + 1);
  o->mod_revision = rev;
  o->create_revision = crev;
  o->labels.emplace_back("app", value.substr(0, value.find('|')));
  o->fields.emplace_back("node", value.substr(0, value.find('|')));
  // Like the real decoder, re-stamping replaces the revision rather than adding one.
  o->json = value.substr(0, value.find('@')) + "@" + std::to_string(rev);
  return o;
}

struct CacheRecorder : storage::WatchSink {
  std::mutex mu;
  std::vector<std::pair<storage::WatchEventType, storage::ObjectPtr>> events;
  std::vector<int64_t> bookmarks;
  bool deliver(storage::WatchEventType t, const storage::ObjectPtr& o) override {
    std::lock_guard<std::mutex> g(mu);
    events.emplace_back(t, o);
    return true;
  }
  bool bookmark(int64_t rev) override {
    std::lock_guard<std::mutex> g(mu);
    bookmarks.push_back(rev);
    return true;
  }
  std::vector<std::string> summary() {
    std::lock_guard<std::mutex> g(mu);
    std::vector<std::string> out;
    for (auto& [t, o] : events)
      out.push_back(std::string(storage::watchEventTypeName(t)) + " " + o->name + " " + o->json);
    return out;
  }
};

}  // namespace shepherd::testutil
