// Client: what Shepherd's components ask of the API server, as an interface (client-go's
// Interface). RestClient (libcurl) talks to a real server; FakeClient (fake_client.h)
// keeps objects in memory for unit tests of controllers and informers.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "common/api_error.h"
#include "common/json.h"
#include "common/url.h"

namespace shepherd::client {

struct HttpResult {
  int status = 0;
  std::string body;
  std::string content_type;
};

struct RequestOptions {
  int timeout_ms = 0;    // 0: the client's default
  int max_attempts = 0;  // 0: 5 for idempotent requests, 1 otherwise
};

// Thread-safety: every implementation may be called from any thread concurrently.
class Client {
 public:
  virtual ~Client() = default;

  // `path` includes the query string. A 2xx answer yields the parsed body; anything else
  // its Status as an ApiError (a transport failure has code 0, reason TransportError).
  virtual Result<json::Document> get(const std::string& path, RequestOptions o = {}) = 0;
  virtual Result<json::Document> post(const std::string& path, const std::string& body,
                                      RequestOptions o = {}) = 0;
  virtual Result<json::Document> put(const std::string& path, const std::string& body,
                                     RequestOptions o = {}) = 0;
  virtual Result<json::Document> patch(const std::string& path, const std::string& body,
                                       const std::string& content_type, RequestOptions o = {}) = 0;
  virtual Result<json::Document> del(const std::string& path, const std::string& body = "",
                                     RequestOptions o = {}) = 0;

  // The raw exchange; non-2xx answers are returned, not turned into errors.
  virtual Result<HttpResult> request(const std::string& method, const std::string& path,
                                     const std::string& body, const std::string& content_type,
                                     RequestOptions o = {}) = 0;

  // Streams a watch: calls on_line for every newline-terminated line until the server
  // ends the stream, on_line returns false, `stop` becomes true, or nothing arrives for
  // `idle_timeout_s`. Returns an error for a non-200 answer or a transport failure.
  virtual Status stream(const std::string& path, const std::function<bool(std::string_view line)>& on_line,
                        const std::atomic<bool>* stop, int idle_timeout_s = 90) = 0;
};

// A transport failure (no HTTP answer) has code 0 and reason "TransportError".
bool isTransportError(const ApiError& e);

// "/api/v1" for core, "/apis/<group>/<version>" otherwise.
std::string groupVersionPath(const std::string& group, const std::string& version);
// The collection path of a resource, optionally in a namespace.
std::string resourcePath(const std::string& group, const std::string& version, const std::string& plural,
                         const std::string& ns = "");
using shepherd::urlEncode;  // common/url.h

}  // namespace shepherd::client
