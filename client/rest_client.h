// RestClient: the one HTTP client of Shepherd's components (libcurl). JSON in and out,
// Status errors as ApiError values, per-request timeouts, retries with back-off for
// idempotent requests, streaming watches, and fail-over across several servers.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "client/kubeconfig.h"
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

// A transport failure (no HTTP answer) has code 0 and reason "TransportError".
bool isTransportError(const ApiError& e);

// Thread-safety: every method may be called from any thread concurrently; connections
// are pooled and reused.
class RestClient {
 public:
  explicit RestClient(ClientConfig cfg);
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  const ClientConfig& config() const { return cfg_; }

  // `path` includes the query string. A 2xx answer yields the parsed body.
  Result<json::Document> get(const std::string& path, RequestOptions o = {});
  Result<json::Document> post(const std::string& path, const std::string& body, RequestOptions o = {});
  Result<json::Document> put(const std::string& path, const std::string& body, RequestOptions o = {});
  Result<json::Document> patch(const std::string& path, const std::string& body, const std::string& content_type,
                               RequestOptions o = {});
  Result<json::Document> del(const std::string& path, const std::string& body = "", RequestOptions o = {});

  // The raw exchange; non-2xx answers are returned, not turned into errors.
  Result<HttpResult> request(const std::string& method, const std::string& path, const std::string& body,
                             const std::string& content_type, RequestOptions o = {});

  // Streams a watch: calls on_line for every newline-terminated line until the server
  // ends the stream, on_line returns false, `stop` becomes true, or nothing arrives for
  // `idle_timeout_s`. Returns an error for a non-200 answer or a transport failure.
  Status stream(const std::string& path, const std::function<bool(std::string_view line)>& on_line,
                const std::atomic<bool>* stop, int idle_timeout_s = 90);

 private:
  struct Handle;
  Handle* acquire();
  void release(Handle* h);
  Result<HttpResult> once(const std::string& server, const std::string& method, const std::string& path,
                          const std::string& body, const std::string& content_type, int timeout_ms);
  void configure(void* curl);

  ClientConfig cfg_;
  std::mutex mu_;
  std::vector<Handle*> idle_;
  std::atomic<size_t> preferred_{0};  // index of the server that answered last
};

// "/api/v1" for core, "/apis/<group>/<version>" otherwise.
std::string groupVersionPath(const std::string& group, const std::string& version);
// The collection path of a resource, optionally in a namespace.
std::string resourcePath(const std::string& group, const std::string& version, const std::string& plural,
                         const std::string& ns = "");
using shepherd::urlEncode;  // common/url.h

}  // namespace shepherd::client
