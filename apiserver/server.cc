#include "apiserver/server.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "apiserver/service_account_tokens.h"
#include "apiserver/storage_backend.h"
#include "auth/node_authorizer.h"
#include "auth/rbac_authorizer.h"
#include "auth/request_info.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/log.h"
#include "handlers/status.h"
#include "pki/cluster_pki.h"
#include "plugins/admission/chain.h"
#include "registry/node_graph.h"
#include "registry/rbac_policy_source.h"

namespace shepherd::apiserver {

namespace {

// As upstream: watches and streaming subresources are not counted as in flight (decided
// from the parsed request, so "?watch=1" on a write or a name like "exec" counts). Only
// requests that could be such are parsed: the common one costs a string compare.
bool longRunning(const http::Request& req) {
  size_t slash = req.path.rfind('/');
  std::string_view last = std::string_view(req.path).substr(slash == std::string::npos ? 0 : slash + 1);
  if (!req.hasQuery("watch") && last != "log" && last != "exec" && last != "attach" &&
      last != "portforward" && last != "proxy")
    return false;
  auth::RequestInfo i = auth::requestInfo(req);
  if (!i.resource_request) return false;
  const std::string& s = i.subresource;
  return i.verb == "watch" || s == "log" || s == "exec" || s == "attach" || s == "portforward" ||
         s == "proxy";
}

// A GET of one object, which the watch cache answers without blocking.
bool readOfOneObject(const http::Request& req) {
  if (req.method != "GET" || req.hasQuery("watch")) return false;
  auth::RequestInfo i = auth::requestInfo(req);
  return i.resource_request && i.verb == "get" && i.subresource.empty();
}

}  // namespace

Result<std::unique_ptr<Server>> Server::start(const Options& options) {
  std::unique_ptr<Server> s(new Server(options));
  if (auto st = s->init(); !st) return st.error();
  return s;
}

Server::~Server() {
  stop();
}

std::string Server::url() const {
  return (options_.plain_http ? "http://" : "https://") + options_.bind_address + ":" + std::to_string(port_);
}

Status Server::init() {
  const Options& o = options_;
  if (!makeDirs(o.data_dir, 0700))
    return ApiError::internal("cannot create data dir " + o.data_dir + ": " + std::strerror(errno));
  auto opened = openStorage(o);
  if (!opened) return opened.error();
  storage_ = std::move(*opened);
  auto t0 = std::chrono::steady_clock::now();
  registry::RegistryOptions ro;
  ro.service_cidr = o.service_cluster_ip_range;
  ro.node_port_range = o.service_node_port_range;
  ro.watch_window = static_cast<size_t>(o.watch_cache_size);
  auto reg = registry::Registry::start(*storage_, ro);
  if (!reg) return reg.error();
  registry_ = std::move(*reg);
  auto loadMs =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  LOG_INFO("storage loaded at revision " << storage_->currentRevision() << " in " << loadMs << " ms");

  http::ServerOptions hs;
  hs.error_response = [](int code, const std::string& reason, const std::string& message) {
    return handlers::errorResponse(ApiError::make(code, reason, message));
  };
  handlers::ApiHandlerOptions ho;
  if (auto st = setUpSecurity(hs, ho); !st) return st;
  ho.streaming_idle_timeout_seconds = o.streaming_connection_idle_timeout_seconds;
  if (!o.audit_log_path.empty()) {
    auto log = handlers::AuditLog::open(o.audit_log_path);
    if (!log) return log.error();
    audit_log_ = std::move(*log);
    ho.audit = audit_log_.get();
  }
  plugins::admission::ChainOptions ao;
  ao.registry = registry_.get();
  ao.authorizer = authorizer_.get();
  ao.rbac_policy = ho.rbac_policy;
  ao.default_not_ready_toleration_seconds = o.default_not_ready_toleration_seconds;
  ao.default_unreachable_toleration_seconds = o.default_unreachable_toleration_seconds;
  admission_ = plugins::admission::buildChain(ao);
  ho.admission = admission_.get();
  return serve(std::move(hs), std::move(ho));
}

// Serving certificates (the generated PKI unless given), the kubelet client identity,
// authentication (client certificates, token file, ServiceAccount tokens) and the
// authorizer chain.
Status Server::setUpSecurity(http::ServerOptions& hs, handlers::ApiHandlerOptions& ho) {
  const Options& o = options_;
  std::string certDir = o.certDir();
  // Without a given serving certificate the generated PKI is used (it also holds the
  // ServiceAccount signing key, so plain-HTTP servers make it too).
  if (o.tls_cert_file.empty()) {
    pki::ClusterPkiOptions po;
    po.dir = certDir;
    const std::string& bind = o.bind_address;
    if (bind != "127.0.0.1" && bind != "0.0.0.0" && bind != "::") po.extra_sans.push_back(bind);
    if (!o.advertise_address.empty()) po.extra_sans.push_back(o.advertise_address);
    if (auto r = pki::ensureClusterPki(po); !r) return r.error();
  }
  if (!o.plain_http) {
    http::TlsOptions tls{o.tls_cert_file, o.tls_private_key_file, o.client_ca_file};
    if (tls.cert_file.empty()) {
      tls.cert_file = certDir + "/apiserver.crt";
      tls.key_file = certDir + "/apiserver.key";
      if (tls.client_ca_file.empty()) tls.client_ca_file = certDir + "/ca.crt";
    }
    hs.tls = tls;
    // Kubelets are reached over HTTPS too, as the apiserver-kubelet-client identity.
    handlers::KubeletClientTls kt{o.kubelet_client_certificate, o.kubelet_client_key,
                                  o.kubelet_certificate_authority};
    if (kt.cert_file.empty()) {
      kt.cert_file = certDir + "/apiserver-kubelet-client.crt";
      kt.key_file = certDir + "/apiserver-kubelet-client.key";
    }
    std::string err;
    ho.kubelet_tls = handlers::kubeletClientTls(kt, err);
    if (!ho.kubelet_tls) return ApiError::badRequest(err);
  }
  auth::AuthenticatorOptions ao;
  ao.anonymous = o.anonymous_auth;
  ao.token_file = o.token_auth_file;
  auto authenticator = auth::Authenticator::create(ao);
  if (!authenticator) return ApiError::badRequest(authenticator.error().message);
  authenticator_ = std::move(*authenticator);
  auto tokens = serviceAccountTokens(o, *registry_);
  if (!tokens) return tokens.error();
  service_account_tokens_ = std::move(*tokens);
  const auth::ServiceAccountTokens* issuer = service_account_tokens_.get();
  authenticator_->addTokenAuthenticator([issuer](const std::string& token) -> std::optional<meta::UserInfo> {
    auto now = std::chrono::duration_cast<std::chrono::seconds>(clock::now().time_since_epoch()).count();
    auto r = issuer->authenticate(token, now);
    if (!r) return std::nullopt;
    if (!*r) {
      LOG_INFO("Unable to authenticate the request: " << r->error().message);
      return std::nullopt;
    }
    return std::move(r->value());
  });
  ho.service_account_tokens = issuer;
  ho.authenticator = authenticator_.get();
  std::vector<std::shared_ptr<const auth::Authorizer>> chain;
  for (const std::string& mode : o.authorization_modes) {
    if (mode == "Node") {
      chain.push_back(
          std::make_shared<auth::NodeAuthorizer>(std::make_shared<registry::PodNodeGraph>(*registry_)));
    } else if (mode == "RBAC") {
      auto policy = std::make_shared<registry::RbacPolicySource>(*registry_);
      ho.rbac_policy = policy;
      chain.push_back(std::make_shared<auth::RbacAuthorizer>(policy));
    } else {
      chain.push_back(std::make_shared<auth::AlwaysAllowAuthorizer>());  // modes are checked in the options
    }
  }
  authorizer_ = std::make_unique<auth::UnionAuthorizer>(std::move(chain));
  ho.authorizer = authorizer_.get();
  return okStatus();
}

// Binds, bootstraps the default objects, publishes this server in default/kubernetes and
// starts the periodic work.
Status Server::serve(http::ServerOptions hs, handlers::ApiHandlerOptions ho) {
  const Options& o = options_;
  hs.address = o.bind_address;
  hs.port = o.port;
  hs.worker_threads = o.worker_threads;
  hs.max_requests_inflight = o.max_requests_inflight;
  hs.max_mutating_requests_inflight = o.max_mutating_requests_inflight;
  hs.long_running = longRunning;
  // Reads of one object come from the watch cache without blocking: they run on the
  // network threads. With an audit log (a file write per request) they stay on the workers,
  // and with etcd too (a consistent read asks etcd for its revision first).
  if (o.audit_log_path.empty() && o.embeddedStore()) hs.run_inline = readOfOneObject;
  api_ = std::make_unique<handlers::ApiHandler>(*registry_, ho);
  api_->watches().setMaxPerUser(o.max_watches_per_user);
  handlers::ApiHandler* api = api_.get();
  http_ =
      std::make_unique<http::Server>(hs, [api](http::Request& req, std::shared_ptr<http::Responder> resp) {
        api->handle(req, std::move(resp));
      });
  auto port = http_->start();
  if (!port) return port.error();
  port_ = *port;
  std::string advertise = o.advertise_address.empty() ? o.bind_address : o.advertise_address;
  if (auto st = registry_->bootstrap(port_); !st)
    return ApiError::internal("bootstrap failed: " + st.error().message);
  // default/kubernetes lists every live API server; with the embedded store this is the only one.
  leases_ = std::make_unique<registry::ApiServerLeases>(
      *registry_, registry::ApiServerEndpoint{advertise, port_}, o.embeddedStore());
  if (auto live = leases_->reconcile(); !live) return live.error();
  api_->setServerAddress(advertise + ":" + std::to_string(port_));
  api_->setReady();
  maintenance_ = std::make_unique<Maintenance>(*registry_, *api_, *storage_, *leases_,
                                               o.etcd_compaction_interval_seconds, o.event_ttl);
  LOG_INFO("shepherd-apiserver serving on "
           << url() << " (data in " << (o.embeddedStore() ? o.data_dir : o.etcd_servers.front()) << ")");
  return okStatus();
}

void Server::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (api_) {
    api_->setShuttingDown();
    api_->watches().finishAll();
  }
  if (http_) http_->stop(options_.shutdown_grace_seconds);
  bool served = maintenance_ != nullptr;  // started completely
  maintenance_.reset();
  if (served) leases_->release();
  // Every acknowledged write is already durable; this finishes anything still queued.
  if (storage_) storage_->shutdown();
}

}  // namespace shepherd::apiserver
