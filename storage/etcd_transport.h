// EtcdStorage's transport: unary calls to etcd's JSON gateway (POST /v3/...) over a pool
// of libcurl handles with fail-over between endpoints, and the mapping of the gateway's
// errors to Storage codes. Internal to storage/etcd_*.cc.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/mutex.h"
#include "storage/etcd_storage.h"

namespace shepherd::storage::etcd_internal {

// The texts etcd answers for a revision older than the compaction or newer than its own.
inline constexpr std::string_view kCompactedText = "required revision has been compacted";
inline constexpr std::string_view kFutureText = "required revision is a future revision";

inline bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// One gateway call: Ok with the parsed answer, or an error already mapped to a Storage code.
struct Reply {
  Code code = Code::Ok;
  std::string message;
  json::Document doc;
  bool ok() const { return code == Code::Ok; }
};

// Unary JSON requests over a small pool of libcurl easy handles (their connections stay
// alive between requests), with fail-over between endpoints.
class Transport {
 public:
  explicit Transport(const EtcdOptions& opts);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // POSTs body to path. A request that never reached a server moves on to the next
  // endpoint; an idempotent one also does on any transport error or a 503.
  Reply post(const char* path, const std::string& body, bool idempotent);
  // Options shared by unary requests and watch streams (signals, headers, TLS).
  void configure(CURL* curl) const;
  const std::vector<std::string>& endpoints() const { return endpoints_; }
  size_t preferred() const { return preferred_.load(); }

 private:
  CURL* acquire();
  void release(CURL* curl);

  std::vector<std::string> endpoints_;
  std::string ca_file_;
  std::string cert_file_;
  std::string key_file_;
  int timeout_ms_;
  curl_slist* headers_ = nullptr;
  std::atomic<size_t> preferred_{0};
  Mutex mu_;
  std::vector<CURL*> idle_ GUARDED_BY(mu_);
};

Reply failed(Code code, std::string message);

// The text of a gateway error: {"error": "...", "code": 11, "message": "..."} for unary
// calls (grpc-gateway v1; older builds lack "message"), {"error": {"message": ...}} on a stream.
std::string errorText(const json::Value& body);

// Maps a non-200 answer. The message text is what is stable across grpc-gateway versions
// (the HTTP status for a gRPC code changed between them), so it is matched first.
Reply mapHttpError(long status, const std::string& body);

}  // namespace shepherd::storage::etcd_internal
