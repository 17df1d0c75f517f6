#include "client/event_recorder.h"

#include "common/clock.h"
#include "common/ids.h"
#include "common/log.h"

namespace shepherd::client {

namespace {
constexpr size_t kMaxQueued = 1000;
}

EventRecorder::EventRecorder(RestClient& client, std::string component, std::string host,
                             std::string instance)
    : client_(client),
      component_(std::move(component)),
      host_(std::move(host)),
      instance_(std::move(instance)) {
  thread_ = std::thread([this] { run(); });
}

EventRecorder::~EventRecorder() {
  stop();
}

void EventRecorder::event(const json::Value& obj, const std::string& api_version, const std::string& kind,
                          const std::string& type, const std::string& reason, const std::string& message) {
  json::Document ev;
  ev.SetObject();
  auto& a = ev.GetAllocator();
  std::string ns(json::getStringPath(obj, {"metadata", "namespace"}));
  std::string name(json::getStringPath(obj, {"metadata", "name"}));
  std::string now = clock::rfc3339(clock::now());
  std::string evNs = ns.empty() ? "default" : ns;  // events about cluster-scoped objects live in default
  json::setString(ev, "apiVersion", "v1", a);
  json::setString(ev, "kind", "Event", a);
  json::Value& md = json::ensureObject(ev, "metadata", a);
  json::setString(md, "name", name + "." + ids::randomSuffix(10), a);
  json::setString(md, "namespace", evNs, a);
  json::Value& io = json::ensureObject(ev, "involvedObject", a);
  json::setString(io, "apiVersion", api_version, a);
  json::setString(io, "kind", kind, a);
  if (!ns.empty()) json::setString(io, "namespace", ns, a);
  json::setString(io, "name", name, a);
  json::setString(io, "uid", json::getStringPath(obj, {"metadata", "uid"}), a);
  json::setString(io, "resourceVersion", json::getStringPath(obj, {"metadata", "resourceVersion"}), a);
  json::setString(ev, "reason", reason, a);
  json::setString(ev, "message", message, a);
  json::Value& src = json::ensureObject(ev, "source", a);
  json::setString(src, "component", component_, a);
  if (!host_.empty()) json::setString(src, "host", host_, a);
  json::setString(ev, "firstTimestamp", now, a);
  json::setString(ev, "lastTimestamp", now, a);
  json::set(ev, "count", json::Value(1), a);
  json::setString(ev, "type", type, a);
  json::setString(ev, "reportingComponent", component_, a);
  json::setString(ev, "reportingInstance", instance_, a);
  std::lock_guard<std::mutex> g(mu_);
  if (stopping_ || queue_.size() >= kMaxQueued) return;
  queue_.emplace_back(evNs, json::serialize(ev));
  cv_.notify_one();
}

void EventRecorder::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void EventRecorder::run() {
  while (true) {
    std::pair<std::string, std::string> next;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, all posted
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    auto r =
        client_.post("/api/v1/namespaces/" + next.first + "/events", next.second, RequestOptions{5000, 1});
    if (!r) LOG_DEBUG(component_ << ": event not posted: " << r.error().message);
  }
}

}  // namespace shepherd::client
