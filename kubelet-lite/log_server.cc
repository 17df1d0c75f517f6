#include "kubelet-lite/log_server.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "common/log.h"
#include "kubelet-lite/kubelet.h"

namespace shepherd::kubelet {

namespace {

const json::Value* findContainerStatus(const json::Value& pod, const std::string& container) {
  for (const char* list : {"containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"}) {
    const json::Value* statuses = json::findPath(pod, {"status", list});
    if (!statuses || !statuses->IsArray()) continue;
    for (auto& cs : statuses->GetArray())
      if (json::getString(cs, "name") == container) return &cs;
  }
  return nullptr;
}

std::optional<int64_t> queryInt(const http::Request& req, std::string_view key) {
  if (!req.hasQuery(key)) return std::nullopt;
  try {
    return std::stoll(std::string(req.queryValue(key)));
  } catch (...) {
    return std::nullopt;
  }
}

std::string readFrom(const std::string& path, std::streamoff offset) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  f.seekg(offset);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

Result<LogTarget> checkContainerLogStatus(const json::Value& pod, const std::string& container,
                                          bool previous) {
  std::string podName(json::getStringPath(pod, {"metadata", "name"}));
  const json::Value* cs = findContainerStatus(pod, container);
  if (!cs)
    return ApiError::badRequest("container \"" + container + "\" in pod \"" + podName +
                                "\" is not available");
  // The cases and messages of upstream's validateContainerLogStatus, in its order.
  const json::Value* last = json::findPath(*cs, {"lastState", "terminated"});
  const json::Value* running = json::findPath(*cs, {"state", "running"});
  const json::Value* terminated = json::findPath(*cs, {"state", "terminated"});
  const json::Value* waiting = json::findPath(*cs, {"state", "waiting"});
  auto ran = [](const json::Value* t) { return t && !json::getString(*t, "containerID").empty(); };
  std::string who = "container \"" + container + "\" in pod \"" + podName + "\"";
  if (previous) {
    if (!ran(last)) return ApiError::badRequest("previous terminated " + who + " not found");
    // Unless the current attempt has run (and so has the newest file), the newest file
    // is the previous run's.
    return LogTarget{running || ran(terminated) ? 1u : 0u};
  }
  if (running) return LogTarget{0};
  if (terminated) {
    // A terminated attempt that never started has no file: the newest is the last run's.
    if (ran(terminated) || ran(last)) return LogTarget{0};
    return ApiError::badRequest(who + " is terminated");
  }
  if (last) {
    if (!ran(last)) return ApiError::badRequest(who + " is terminated");
    return LogTarget{0};
  }
  if (waiting) {
    std::string reason(json::getString(*waiting, "reason"));
    if (reason == "ErrImagePull")
      return ApiError::badRequest(who + " is waiting to start: image can't be pulled");
    if (reason == "ImagePullBackOff")
      return ApiError::badRequest(who + " is waiting to start: trying and failing to pull image");
    return ApiError::badRequest(who + " is waiting to start: " + reason);
  }
  return ApiError::badRequest(who + " is waiting to start - no logs yet");
}

LogOptions logOptionsFromQuery(const http::Request& req) {
  LogOptions o;
  o.tail_lines = queryInt(req, "tailLines");
  o.limit_bytes = queryInt(req, "limitBytes");
  o.timestamps = req.queryBool("timestamps");
  if (auto s = queryInt(req, "sinceSeconds")) o.since = clock::now() - std::chrono::seconds(*s);
  // Upstream's NewLogOptions: sinceTime counts when it is later than sinceSeconds' time.
  if (req.hasQuery("sinceTime"))
    if (auto t = clock::parseRfc3339(req.queryValue("sinceTime")); t && (!o.since || *t > *o.since))
      o.since = *t;
  return o;
}

LogServer::LogServer(Kubelet& kubelet, LogServerOptions opts) : k_(kubelet), opts_(std::move(opts)) {
  http::ServerOptions o;
  o.address = opts_.address;
  o.port = opts_.port;
  o.tls = opts_.tls;
  o.io_threads = 1;
  o.worker_threads = 16;  // a follow holds a worker for its lifetime
  server_ = std::make_unique<http::Server>(
      o, [this](http::Request& req, std::shared_ptr<http::Responder> resp) { handle(req, std::move(resp)); });
}

LogServer::~LogServer() {
  stop();
}

Result<int> LogServer::start() {
  return server_->start();
}

void LogServer::stop() {
  if (stopping_.exchange(true)) return;
  server_->stop(2);
}

void LogServer::handle(http::Request& req, std::shared_ptr<http::Responder> resp) {
  if (req.path == "/healthz") return resp->send(http::plainText(200, "ok"));
  auto parts = http::pathSegments(req.path);
  bool logs = !parts.empty() && parts[0] == "containerLogs";
  bool streaming =
      !parts.empty() && (parts[0] == "exec" || parts[0] == "attach" || parts[0] == "portForward");
  if (!logs && !streaming) return resp->send(http::plainText(404, "404 page not found\n"));
  if (logs && req.method != "GET") return resp->send(http::plainText(405, "method not allowed\n"));
  if (opts_.tls) {
    // Only the API server may read logs or open streams (upstream's kubelet asks the API
    // server's authorizer; ours knows its one client). Texts as the kubelet's.
    const auto& cert = req.client_certificate;
    if (!cert || !cert->verified) return resp->send(http::plainText(401, "Unauthorized\n"));
    if (std::find(opts_.allowed_users.begin(), opts_.allowed_users.end(), cert->common_name) ==
        opts_.allowed_users.end())
      return resp->send(http::plainText(403, "Forbidden (user=" + cert->common_name +
                                                 ", verb=" + (req.method == "GET" ? "get" : "create") +
                                                 ", resource=nodes, subresource(s)=[proxy])\n"));
  }
  std::string kind = parts[0];
  parts.erase(parts.begin());
  if (streaming) return serveStreaming(k_, opts_.streaming, kind, parts, req, std::move(resp));
  if (parts.size() != 3) return resp->send(http::plainText(404, "404 page not found\n"));
  serveLogs(req, resp, parts[0], parts[1], parts[2]);
}

bool LogServer::containerRunning(const std::string& ns, const std::string& pod,
                                 const std::string& container) {
  client::Object obj = k_.currentPod(ns + "/" + pod);
  if (!obj || json::findPath(*obj, {"metadata", "deletionTimestamp"})) return false;
  const json::Value* cs = findContainerStatus(*obj, container);
  return cs && json::findPath(*cs, {"state", "running"});
}

void LogServer::serveLogs(http::Request& req, std::shared_ptr<http::Responder> resp, const std::string& ns,
                          const std::string& pod, const std::string& container) {
  client::Object obj = k_.currentPod(ns + "/" + pod);
  // Errors are plain text, as a kubelet's are; the API server wraps them in a Status.
  if (!obj)
    return resp->send(
        http::plainText(404, "pod \"" + pod + "\" in namespace \"" + ns + "\" is not on this node\n"));
  bool previous = req.queryBool("previous");
  auto target = checkContainerLogStatus(*obj, container, previous);
  if (!target) return resp->send(http::plainText(target.error().code, target.error().message + "\n"));
  auto path = k_.containerLogPath(ns, pod, container, target->skip);
  if (!path) return resp->send(http::plainText(200, ""));  // started, nothing written yet
  LogOptions opts = logOptionsFromQuery(req);
  std::string content = readFrom(*path, 0);
  if (!req.queryBool("follow") || previous) {
    return resp->send(http::plainText(200, renderLog(parseCriLog(content), opts)));
  }
  std::vector<LogLine> lines;
  size_t used = parseCriLogComplete(content, lines);
  // follow: what is there now, then new lines as they are written, until the container
  // stops running (and its file is drained), the client goes, or we shut down.
  http::Headers headers{{"Content-Type", "text/plain; charset=utf-8"}};
  auto writer = resp->startStream(200, headers);
  std::optional<int64_t> budget = opts.limit_bytes;
  auto send = [&](std::string out) {
    if (budget) {
      if (static_cast<int64_t>(out.size()) > *budget) out.resize(static_cast<size_t>(*budget));
      *budget -= static_cast<int64_t>(out.size());
    }
    if (out.empty()) return true;
    http::Chunk c;
    c.data = std::move(out);
    return writer->write(std::move(c));
  };
  LogOptions first = opts;
  first.limit_bytes.reset();
  if (!send(renderLog(lines, first))) return;
  LogOptions rest;
  rest.timestamps = opts.timestamps;
  std::streamoff offset = static_cast<std::streamoff>(used);
  int idle = 0;
  while (!stopping_.load() && !writer->closed() && (!budget || *budget > 0)) {
    std::string more = readFrom(*path, offset);
    std::vector<LogLine> fresh;
    size_t n = parseCriLogComplete(more, fresh);
    offset += static_cast<std::streamoff>(n);
    if (!fresh.empty()) {
      idle = 0;
      if (!send(renderLog(fresh, rest))) return;
      continue;
    }
    // Every second with nothing new: is the container still running this attempt?
    if (++idle % 10 == 0) {
      auto newest = k_.containerLogPath(ns, pod, container, 0);
      if (!containerRunning(ns, pod, container) || !newest || *newest != *path) {
        // The run is over: what it wrote without a final newline ends the stream.
        if (!send(renderLog(parseCriLog(readFrom(*path, offset)), rest))) return;
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  writer->finish();
}

}  // namespace shepherd::kubelet
