// ApiHandler: the API server's request handling: the filters (request info, audit,
// authentication, impersonation, authorization; handlers/filters), then the router, which
// maps paths to discovery, OpenAPI, health and version endpoints, and resource paths to the
// RestHandler.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "auth/authenticator.h"
#include "auth/authorizer.h"
#include "handlers/audit_log.h"
#include "handlers/discovery.h"
#include "handlers/filters/filter.h"
#include "handlers/openapi.h"
#include "handlers/rest_handler.h"
#include "handlers/watch_registry.h"
#include "net/http/message.h"
#include "registry/registry.h"

namespace shepherd::handlers {

struct ApiHandlerOptions {
  std::string server_address = "127.0.0.1:6443";  // advertised in /api
  VersionInfo version;
  // Every request is authenticated first (401 when offered credentials fail); null
  // accepts every request as is (unit tests).
  const auth::Authenticator* authenticator = nullptr;
  // Then authorized (403 when no authorizer allows), after impersonation; null allows
  // everything.
  const auth::Authorizer* authorizer = nullptr;
  // Issues serviceaccounts/token (null: not served).
  const auth::ServiceAccountTokens* service_account_tokens = nullptr;
  // Every write passes through this chain (null: no admission).
  const admission::Chain* admission = nullptr;
  // The RBAC policy SelfSubjectRulesReview lists rules from (null: RBAC is not in use).
  std::shared_ptr<const auth::PolicySource> rbac_policy;
  // Every request is recorded here when set (--audit-log-path).
  AuditLog* audit = nullptr;
  // Kubelets are asked for logs over HTTPS with this context (null: plain HTTP).
  std::shared_ptr<boost::asio::ssl::context> kubelet_tls;
  int streaming_idle_timeout_seconds = 4 * 3600;  // exec/attach/port-forward; 0: none
};

// Thread-safety: handle() is called concurrently from the server's workers.
class ApiHandler {
 public:
  ApiHandler(registry::Registry& registry, ApiHandlerOptions opts);
  void handle(http::Request& req, std::shared_ptr<http::Responder> resp);

  WatchRegistry& watches() { return watches_; }
  // /readyz fails once shutdown begins, so load balancers drain us first.
  void setShuttingDown() { shutting_down_ = true; }
  // /readyz fails until bootstrap has finished.
  void setReady() { ready_ = true; }
  // The address advertised by /api, once the port is bound. Call before setReady().
  void setServerAddress(const std::string& address);

 private:
  std::unique_ptr<FilterChain> buildFilters();
  // After the filters: paths to what answers them.
  void route(http::Request& req, std::shared_ptr<http::Responder> resp);
  void handleResourcePath(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                          const std::string& group, const std::string& version,
                          std::vector<std::string> rest);
  void health(http::Request& req, const std::shared_ptr<http::Responder>& resp, const std::string& which);
  void metrics(const std::shared_ptr<http::Responder>& resp);

  registry::Registry& registry_;
  ApiHandlerOptions opts_;
  OpenApiDocuments openapi_;
  WatchRegistry watches_;
  RestHandler rest_;
  std::unique_ptr<FilterChain> filters_;
  std::string api_versions_;
  std::string group_list_;
  std::atomic<bool> shutting_down_{false};
  std::atomic<bool> ready_{false};
  std::atomic<uint64_t> requests_{0};
};

}  // namespace shepherd::handlers
