#include "net/http/health_endpoint.h"

namespace shepherd::http {

Result<std::unique_ptr<Server>> startHealthEndpoint(const std::string& address, int port,
                                                    std::function<std::string()> metrics) {
  ServerOptions ho;
  ho.address = address;
  ho.port = port;
  ho.worker_threads = 1;
  ho.io_threads = 1;
  auto server = std::make_unique<Server>(ho, [metrics](Request& req, std::shared_ptr<Responder> resp) {
    Response r;
    r.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
    if (req.path == "/metrics" && metrics) {
      r.body = metrics();
    } else if (req.path == "/healthz" || req.path == "/livez" || req.path == "/readyz") {
      r.body = "ok";
    } else {
      r.status = 404;
      r.body = "not found";
    }
    resp->send(std::move(r));
  });
  auto started = server->start();
  if (!started) return started.error();
  return server;
}

}  // namespace shepherd::http
