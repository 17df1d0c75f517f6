// RestClient: the one HTTP client of Shepherd's components (libcurl). JSON in and out,
// Status errors as ApiError values, per-request timeouts, retries with back-off for
// idempotent requests, streaming watches, and fail-over across several servers.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"
#include "client/kubeconfig.h"
#include "common/api_error.h"
#include "common/json.h"
#include "common/mutex.h"
#include "common/url.h"

namespace shepherd::client {

// Thread-safety: every method may be called from any thread concurrently; connections
// are pooled and reused (the idle pool, idle_, is guarded by mu_).
class RestClient final : public Client {
 public:
  explicit RestClient(ClientConfig cfg);
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  const ClientConfig& config() const { return cfg_; }

  Result<json::Document> get(const std::string& path, RequestOptions o = {}) override;
  Result<json::Document> post(const std::string& path, const std::string& body,
                              RequestOptions o = {}) override;
  Result<json::Document> put(const std::string& path, const std::string& body,
                             RequestOptions o = {}) override;
  Result<json::Document> patch(const std::string& path, const std::string& body,
                               const std::string& content_type, RequestOptions o = {}) override;
  Result<json::Document> del(const std::string& path, const std::string& body = "",
                             RequestOptions o = {}) override;
  Result<HttpResult> request(const std::string& method, const std::string& path, const std::string& body,
                             const std::string& content_type, RequestOptions o = {}) override;
  Status stream(const std::string& path, const std::function<bool(std::string_view line)>& on_line,
                const std::atomic<bool>* stop, int idle_timeout_s = 90) override;

 private:
  struct Handle;
  Handle* acquire();
  void release(Handle* h);
  Result<HttpResult> once(const std::string& server, const std::string& method, const std::string& path,
                          const std::string& body, const std::string& content_type, int timeout_ms);
  void configure(void* curl);

  ClientConfig cfg_;
  Mutex mu_;
  std::vector<Handle*> idle_ GUARDED_BY(mu_);
  std::atomic<size_t> preferred_{0};  // index of the server that answered last
};

}  // namespace shepherd::client
