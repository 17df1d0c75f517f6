// kubelet-lite's HTTP endpoint (the kubelet port): the API server's pods/log proxies to
// GET /containerLogs/{namespace}/{pod}/{container}, answered from the CRI log files;
// pods/exec, pods/attach and pods/portforward to /exec, /attach and /portForward (see
// streaming.h); /healthz answers "ok".
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/api_error.h"
#include "common/json.h"
#include "kubelet-lite/cri_log.h"
#include "kubelet-lite/streaming.h"
#include "net/http/server.h"

namespace shepherd::kubelet {

class Kubelet;

// Which log file a request reads, decided from the pod's status as upstream's kubelet
// does (validateContainerLogStatus): a waiting container without a previous run has no
// logs yet (400), `previous` needs a terminated previous run.
struct LogTarget {
  size_t skip = 0;  // log files to skip, newest first: 0 = the latest run, 1 = the one before
};
Result<LogTarget> checkContainerLogStatus(const json::Value& pod, const std::string& container,
                                          bool previous);

// Parses the query of a log request (the API server has validated it already).
LogOptions logOptionsFromQuery(const http::Request& req);

// How the kubelet port is served: HTTPS when `tls` is set, and then container logs only to
// clients whose verified certificate names one of `allowed_users` (the API server's
// kubelet-client identity); plain HTTP otherwise (a node of a plain-HTTP test cluster).
struct LogServerOptions {
  std::string address;
  int port = 10250;
  std::optional<http::TlsOptions> tls;
  std::vector<std::string> allowed_users;
  StreamingOptions streaming;
};

// Thread-safety: start/stop from one thread; requests are served concurrently.
class LogServer {
 public:
  LogServer(Kubelet& kubelet, LogServerOptions opts);
  ~LogServer();
  Result<int> start();
  void stop();

 private:
  void handle(http::Request& req, std::shared_ptr<http::Responder> resp);
  void serveLogs(http::Request& req, std::shared_ptr<http::Responder> resp, const std::string& ns,
                 const std::string& pod, const std::string& container);
  bool containerRunning(const std::string& ns, const std::string& pod, const std::string& container);

  Kubelet& k_;
  LogServerOptions opts_;
  std::unique_ptr<http::Server> server_;
  std::atomic<bool> stopping_{false};
};

}  // namespace shepherd::kubelet
