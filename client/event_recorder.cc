#include "client/event_recorder.h"

#include "common/clock.h"
#include "common/ids.h"
#include "common/log.h"

namespace shepherd::client {

namespace {
// Series remembered at most (a component running for long forgets the oldest at once).
constexpr size_t kMaxSeries = 4096;
}  // namespace

EventRecorder::EventRecorder(Client& client, EventRecorderOptions options)
    : client_(client), opts_(std::move(options)) {
  thread_ = std::thread([this] { run(); });
}

EventRecorder::EventRecorder(Client& client, std::string component, std::string host, std::string instance)
    : EventRecorder(client,
                    EventRecorderOptions{std::move(component), std::move(host), std::move(instance)}) {}

EventRecorder::~EventRecorder() {
  stop();
}

void EventRecorder::event(const json::Value& obj, const std::string& api_version, const std::string& kind,
                          const std::string& type, const std::string& reason, const std::string& message,
                          const std::string& action) {
  json::Document ev;
  ev.SetObject();
  auto& a = ev.GetAllocator();
  std::string ns(json::getStringPath(obj, {"metadata", "namespace"}));
  std::string name(json::getStringPath(obj, {"metadata", "name"}));
  std::string uid(json::getStringPath(obj, {"metadata", "uid"}));
  std::string evNs = ns.empty() ? "default" : ns;  // events about cluster-scoped objects live in default
  json::setString(ev, "apiVersion", opts_.events_v1 ? "events.k8s.io/v1" : "v1", a);
  json::setString(ev, "kind", "Event", a);
  json::Value& md = json::ensureObject(ev, "metadata", a);
  json::setString(md, "name", name + "." + ids::randomSuffix(10), a);
  json::setString(md, "namespace", evNs, a);
  json::Value& ref = json::ensureObject(ev, opts_.events_v1 ? "regarding" : "involvedObject", a);
  json::setString(ref, "apiVersion", api_version, a);
  json::setString(ref, "kind", kind, a);
  if (!ns.empty()) json::setString(ref, "namespace", ns, a);
  json::setString(ref, "name", name, a);
  json::setString(ref, "uid", uid, a);
  if (std::string_view rv = json::getStringPath(obj, {"metadata", "resourceVersion"}); !rv.empty())
    json::setString(ref, "resourceVersion", rv, a);
  json::setString(ev, "reason", reason, a);
  json::setString(ev, "type", type, a);
  json::setString(ev, "reportingInstance", opts_.instance, a);
  if (opts_.events_v1) {
    json::setString(ev, "note", message, a);
    json::setString(ev, "eventTime", clock::rfc3339Micro(clock::now()), a);
    json::setString(ev, "reportingController", opts_.component, a);
    json::setString(ev, "action", action, a);
  } else {
    std::string now = clock::rfc3339(clock::now());
    json::setString(ev, "message", message, a);
    json::Value& src = json::ensureObject(ev, "source", a);
    json::setString(src, "component", opts_.component, a);
    if (!opts_.host.empty()) json::setString(src, "host", opts_.host, a);
    json::setString(ev, "firstTimestamp", now, a);
    json::setString(ev, "lastTimestamp", now, a);
    json::set(ev, "count", json::Value(1), a);
    json::setString(ev, "reportingComponent", opts_.component, a);
  }
  Pending p{evNs, opts_.series ? uid + "\n" + reason + "\n" + message : "", json::serialize(ev)};
  MutexLock g(mu_);
  if (stopping_) return;
  if (queue_.size() >= opts_.max_queued) {
    dropped_++;
    return;
  }
  queue_.push_back(std::move(p));
  cv_.notify_one();
}

void EventRecorder::stop() {
  {
    MutexLock g(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void EventRecorder::run() {
  while (true) {
    Pending next;
    {
      UniqueMutexLock lk(mu_);
      lk.wait(cv_, [&]() REQUIRES(mu_) { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, all posted
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    post(std::move(next));
  }
}

void EventRecorder::post(Pending p) {
  std::string base = resourcePath(opts_.events_v1 ? "events.k8s.io" : "", "v1", "events", p.ns);
  if (!p.series_key.empty()) {
    auto it = series_.find(p.series_key);
    if (it != series_.end()) {
      int count = ++it->second.second;
      std::string patch = opts_.events_v1
                              ? R"({"series":{"count":)" + std::to_string(count) +
                                    R"(,"lastObservedTime":")" + clock::rfc3339Micro(clock::now()) + R"("}})"
                              : R"({"count":)" + std::to_string(count) + R"(,"lastTimestamp":")" +
                                    clock::rfc3339(clock::now()) + "\"}";
      if (client_.patch(base + "/" + it->second.first, patch, "application/merge-patch+json",
                        RequestOptions{10000, 1}))
        return;
      series_.erase(it);  // gone (expired): post a fresh one
    }
  }
  auto r = client_.post(base, p.json, RequestOptions{10000, 1});
  if (!r) {
    LOG_DEBUG(opts_.component << ": event not posted: " << r.error().message);
    return;
  }
  if (!p.series_key.empty()) {
    if (series_.size() >= kMaxSeries) series_.clear();
    series_[p.series_key] = {std::string(json::getStringPath(*r, {"metadata", "name"})), 1};
  }
}

}  // namespace shepherd::client
