// The client side of an HTTP upgrade: connect (plain or TLS), send the request, read the
// answer's head. A 101 hands back the connection as a ByteStream; any other answer comes
// back with its (bounded) body, to be reported to whoever asked. The API server dials
// kubelets this way, and kubelet-lite dials containerd's streaming server.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "common/api_error.h"
#include "net/http/byte_stream.h"
#include "net/http/message.h"

namespace shepherd::http {

struct UpgradeRequest {
  std::string host;  // name or address
  int port = 0;
  // Null: plain HTTP. Otherwise TLS with this context; with verify_peer set, the peer's
  // certificate must also name `host`.
  std::shared_ptr<boost::asio::ssl::context> tls;
  std::string method = "POST";
  std::string target;  // path and query
  Headers headers;     // besides Host, which is set from host:port
  int timeout_seconds = 10;
};

struct UpgradeResult {
  Response response;                   // status, headers; body unless 101
  std::shared_ptr<ByteStream> stream;  // set for 101
};

// Blocks the calling thread (a handler's worker) until the answer's head arrives or the
// timeout passes; the connection then runs on a small shared I/O pool. Errors: 503
// ServiceUnavailable with what failed.
Result<UpgradeResult> dialUpgrade(const UpgradeRequest& request);

// Splits "http://127.0.0.1:3456/exec/abc" into its parts; false if it is not such a URL.
bool splitUrl(const std::string& url, bool& https, std::string& host, int& port, std::string& target);

}  // namespace shepherd::http
