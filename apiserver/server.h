// The API server as one object (kube-apiserver's options → config → run): the main, unit
// tests and benchmarks start it the same way, in process.
//
//   auto o = apiserver::defaultOptions();
//   o.data_dir = dir; o.port = 0; o.plain_http = true;
//   auto server = apiserver::Server::start(o);   // serving once it returns
//   ... (*server)->port() ...
//   (*server)->stop();                            // or let it go out of scope
#pragma once

#include <memory>
#include <string>

#include "admission/admission.h"
#include "apiserver/maintenance.h"
#include "apiserver/options.h"
#include "auth/authenticator.h"
#include "auth/authorizer.h"
#include "auth/service_account_token.h"
#include "handlers/api_handler.h"
#include "handlers/audit_log.h"
#include "net/http/server.h"
#include "registry/apiserver_leases.h"
#include "registry/registry.h"
#include "storage/storage.h"

namespace shepherd::apiserver {

// Thread-safety: start, stop and destruction from one thread; port() and registry() from
// any thread while it runs.
class Server {
 public:
  // Opens and loads the storage, makes the PKI when no serving certificate is given, builds
  // authentication, authorization, admission and the handlers, serves, and bootstraps the
  // default objects. Errors: BadRequest when the options are wrong (the main exits 2),
  // others when the environment fails (exit 1).
  static Result<std::unique_ptr<Server>> start(const Options& options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const { return port_; }
  // The URL clients use (https:// unless plain HTTP).
  std::string url() const;
  registry::Registry& registry() { return *registry_; }
  // Graceful shutdown: /readyz fails, watch streams end, in-flight requests finish (up to
  // shutdown_grace_seconds; their writes are committed), the lease is released and the
  // storage stops. Idempotent.
  void stop();

 private:
  explicit Server(const Options& options) : options_(options) {}
  Status init();
  Status serve(http::ServerOptions hs, handlers::ApiHandlerOptions ho);
  Status setUpSecurity(http::ServerOptions& hs, handlers::ApiHandlerOptions& ho);

  Options options_;
  std::unique_ptr<storage::Storage> storage_;
  std::unique_ptr<registry::Registry> registry_;
  std::unique_ptr<auth::Authenticator> authenticator_;
  std::unique_ptr<auth::ServiceAccountTokens> service_account_tokens_;
  std::unique_ptr<handlers::AuditLog> audit_log_;
  std::unique_ptr<auth::UnionAuthorizer> authorizer_;
  std::unique_ptr<admission::Chain> admission_;
  std::unique_ptr<handlers::ApiHandler> api_;
  std::unique_ptr<http::Server> http_;
  std::unique_ptr<registry::ApiServerLeases> leases_;
  std::unique_ptr<Maintenance> maintenance_;
  int port_ = 0;
  bool stopped_ = false;
};

}  // namespace shepherd::apiserver
