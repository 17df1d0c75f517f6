// The HTTP/1.1 server (Boost.Beast on Asio; see docs/adr/0001-http-server.md).
//
// Network I/O runs on a few io threads; every request is handed to a worker pool so a
// handler may block (e.g. on a group commit) without stalling other connections. All
// writes to a connection happen on that connection's strand: handlers and watch
// producers on other threads only post to it. Streams have a bounded queue; a reader
// that falls too far behind is disconnected.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/api_error.h"
#include "net/http/message.h"

namespace shepherd::http {

using Handler = std::function<void(Request& request, std::shared_ptr<Responder> responder)>;

// HTTPS: the serving certificate chain and key (PEM files); with a client CA, client
// certificates are requested and checked against it (an unverifiable one is reported to
// the handler, which answers 401, as kube-apiserver does, rather than failing the
// handshake).
struct TlsOptions {
  std::string cert_file, key_file;
  std::string client_ca_file;  // "" = no client certificates
};

struct ServerOptions {
  std::string address = "127.0.0.1";
  int port = 0;  // 0 = pick a free port
  int io_threads = 2;
  int worker_threads = 32;  // handlers may block on storage
  size_t max_body_bytes = 3 * 1024 * 1024;
  size_t max_header_bytes = 64 * 1024;
  int header_timeout_seconds = 60;                     // a request must arrive within this time
  int idle_timeout_seconds = 300;                      // keep-alive connections idle longer are closed
  size_t max_stream_backlog_bytes = 64 * 1024 * 1024;  // per streaming response
  // Requests accepted but not yet answered, as kube-apiserver's max-in-flight filter: beyond
  // these a request is answered 429 with Retry-After at once instead of queueing without
  // bound. Read-only (GET, HEAD, OPTIONS) and mutating requests count separately; 0 = no
  // limit. Long-running requests (watches, streamed logs) are exempt.
  int max_requests_inflight = 0;
  int max_mutating_requests_inflight = 0;
  std::function<bool(const Request&)> long_running;  // unset: none is
  // Requests the handler answers at once without blocking (reads served from memory):
  // handled on the network thread, saving two thread hand-offs. Unset: none.
  std::function<bool(const Request&)> run_inline;
  std::optional<TlsOptions> tls;  // unset: plain HTTP
  // Renders the answers the server gives itself (413, 431, 400 for unparsable requests, 500
  // for a handler that threw or never answered). Unset: plain text. The API server renders
  // them as metav1.Status.
  std::function<Response(int code, const std::string& reason, const std::string& message)> error_response;
};

// Thread-safety: start() and stop() from one controlling thread; the handler is called
// concurrently from worker threads.
class Server {
 public:
  Server(ServerOptions opts, Handler handler);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts serving; returns the bound port.
  Result<int> start();
  // Stops accepting, lets in-flight requests finish (up to `grace_seconds`), ends
  // streams, and joins all threads.
  void stop(int grace_seconds = 10);

  int port() const { return port_; }
  uint64_t requestsServed() const;
  int activeConnections() const;

  struct Impl;  // the Beast/Asio machinery (server.cc)

 private:
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace shepherd::http
