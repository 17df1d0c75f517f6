// shepherd-apiserver: serves the Kubernetes API over an embedded, durable SQLite store.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "auth/authenticator.h"
#include "auth/node_authorizer.h"
#include "auth/rbac_authorizer.h"
#include "auth/request_info.h"
#include "auth/service_account_token.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/signals.h"
#include "handlers/api_handler.h"
#include "handlers/status.h"
#include "net/http/server.h"
#include "pki/certificates.h"
#include "pki/cluster_pki.h"
#include "pki/jwt.h"
#include "plugins/admission/chain.h"
#include "registry/apiserver_leases.h"
#include "registry/node_graph.h"
#include "registry/rbac_policy_source.h"
#include "registry/registry.h"
#include "storage/compactor.h"
#include "storage/etcd_storage.h"
#include "storage/sqlite_storage.h"

using namespace shepherd;

namespace {

bool makeDirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i < path.size(); ++i) {
    cur += path[i];
    if ((path[i] == '/' && i > 0) || i + 1 == path.size()) {
      if (mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST) return false;
    }
  }
  return true;
}

// Periodic work: watch timeouts, bookmarks and compaction of old revisions.
class Maintenance {
 public:
  Maintenance(registry::Registry& reg, handlers::ApiHandler& api, storage::Storage& store,
              registry::ApiServerLeases& leases, int compact_interval_s, std::chrono::seconds event_ttl)
      : reg_(reg),
        api_(api),
        store_(store),
        leases_(leases),
        compact_interval_(compact_interval_s),
        event_ttl_(event_ttl) {
    thread_ = std::thread([this] { run(); });
  }
  ~Maintenance() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void run() {
    auto lastBookmark = std::chrono::steady_clock::now();
    auto lastCompact = std::chrono::steady_clock::now();
    auto lastEventSweep = std::chrono::steady_clock::now();
    auto lastLease = std::chrono::steady_clock::now();
    storage::Compactor compactor(store_);
    if (compact_interval_ > 0) (void)compactor.round();  // notes the revision to compact to next
    std::unique_lock<std::mutex> lk(mu_);
    while (!cv_.wait_for(lk, std::chrono::seconds(1), [&] { return stop_; })) {
      lk.unlock();
      api_.watches().expire();
      auto now = std::chrono::steady_clock::now();
      // Lease renewal at two thirds of its 15 s lifetime.
      if (now - lastLease >= std::chrono::seconds(10)) {
        if (auto live = leases_.reconcile(); !live) LOG_WARN("API server lease: " << live.error().message);
        lastLease = now;
      }
      if (now - lastBookmark >= std::chrono::seconds(10)) {
        reg_.sendBookmarks();
        lastBookmark = now;
      }
      if (event_ttl_.count() > 0 &&
          now - lastEventSweep >= std::min<std::chrono::seconds>(event_ttl_, std::chrono::seconds(60))) {
        size_t n = reg_.expireEvents(event_ttl_);
        if (n) LOG_INFO("expired " << n << " events older than " << event_ttl_.count() << "s");
        lastEventSweep = now;
      }
      // Like kube-apiserver: compact to the revision seen one interval ago (taking turns
      // with the other API servers on the same etcd).
      if (compact_interval_ > 0 && now - lastCompact >= std::chrono::seconds(compact_interval_)) {
        auto r = compactor.round();
        if (!r.ok()) LOG_WARN(r.message);
        lastCompact = now;
      }
      lk.lock();
    }
  }
  registry::Registry& reg_;
  handlers::ApiHandler& api_;
  storage::Storage& store_;
  registry::ApiServerLeases& leases_;
  int compact_interval_;
  std::chrono::seconds event_ttl_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// The ServiceAccount token issuer and authenticator from the --service-account-* flags;
// tokens are checked against the live ServiceAccounts, Pods and Secrets of the registry.
Result<std::unique_ptr<auth::ServiceAccountTokens>> serviceAccountTokens(const Flags& flags,
                                                                         const std::string& certDir,
                                                                         registry::Registry& reg) {
  auth::ServiceAccountTokenOptions o;
  o.issuers = flags.getList("service-account-issuer");
  if (o.issuers.empty()) return ApiError::badRequest("service-account-issuer is a required flag");
  o.audiences = flags.getList("api-audiences");
  auto max = clock::parseDuration(flags.get("service-account-max-token-expiration"));
  if (!max) return ApiError::badRequest("invalid --service-account-max-token-expiration");
  o.max_expiration_seconds = std::chrono::duration_cast<std::chrono::seconds>(*max).count();
  if (o.max_expiration_seconds != 0 &&
      (o.max_expiration_seconds < 3600 || o.max_expiration_seconds > (1LL << 32)))
    return ApiError::badRequest(
        "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds");
  o.extend_expiration = flags.getBool("service-account-extend-token-expiration");
  std::string signingFile = flags.get("service-account-signing-key-file");
  if (signingFile.empty()) signingFile = certDir + "/sa.key";
  auto signingPem = pki::readFile(signingFile);
  if (!signingPem) return ApiError::badRequest("cannot read the service account signing key " + signingFile);
  auto signer = pki::JwtSigner::fromPem(*signingPem);
  if (!signer)
    return ApiError::badRequest("failed to parse service-account-issuer-key-file: " + signer.error().message);
  pki::JwtVerifier verifier;
  std::vector<std::string> keyFiles = flags.getList("service-account-key-file");
  if (keyFiles.empty()) keyFiles.push_back(signingFile);
  for (const auto& f : keyFiles) {
    auto pem = pki::readFile(f);
    if (!pem) return ApiError::badRequest("cannot read --service-account-key-file " + f);
    if (auto st = verifier.addKeys(*pem); !st) return ApiError::badRequest(f + ": " + st.error().message);
  }
  auth::ObjectLookup lookup = [&reg](std::string_view resource, const std::string& ns,
                                     const std::string& name) -> std::optional<auth::LiveObject> {
    registry::Store* store = reg.store("", "v1", std::string(resource));
    if (!store) return std::nullopt;
    auto obj = store->get(ns, name);
    if (!obj) return std::nullopt;
    json::Document d;
    d.Parse(obj.value()->json.data(), obj.value()->json.size());
    auth::LiveObject live;
    live.uid = json::getStringPath(d, {"metadata", "uid"});
    if (auto t = clock::parseRfc3339(json::getStringPath(d, {"metadata", "deletionTimestamp"})))
      live.deletion_timestamp =
          std::chrono::duration_cast<std::chrono::seconds>(t->time_since_epoch()).count();
    return live;
  };
  return std::make_unique<auth::ServiceAccountTokens>(std::move(o), std::move(*signer), std::move(verifier),
                                                      std::move(lookup));
}

// The embedded SQLite store, or etcd with --etcd-servers. Null (after saying why) on failure.
std::unique_ptr<storage::Storage> openStorage(const Flags& flags, const std::string& dir) {
  std::vector<std::string> servers = flags.getList("etcd-servers");
  if (servers.empty()) {
    storage::SqliteOptions so;
    so.path = dir + "/state.db";
    auto opened = storage::SqliteStorage::open(so);
    if (!opened.ok()) {
      std::fprintf(stderr, "shepherd-apiserver: %s\n", opened.message.c_str());
      return nullptr;
    }
    return std::move(opened.value);
  }
  storage::EtcdOptions eo;
  eo.endpoints = servers;
  // Our keys start with /registry; etcd holds them under --etcd-prefix, as upstream does.
  eo.root = "/registry";
  eo.key_prefix = flags.get("etcd-prefix");
  while (eo.key_prefix.size() > 1 && eo.key_prefix.back() == '/') eo.key_prefix.pop_back();
  if (eo.key_prefix.empty() || eo.key_prefix[0] != '/' || eo.key_prefix == "/") {
    std::fprintf(stderr, "shepherd-apiserver: --etcd-prefix must be an absolute path like /registry\n");
    return nullptr;
  }
  eo.ca_file = flags.get("etcd-cafile");
  eo.cert_file = flags.get("etcd-certfile");
  eo.key_file = flags.get("etcd-keyfile");
  auto opened = storage::EtcdStorage::open(eo);
  if (!opened.ok()) {
    std::fprintf(stderr, "shepherd-apiserver: cannot reach etcd at %s: %s\n",
                 flags.get("etcd-servers").c_str(), opened.message.c_str());
    return nullptr;
  }
  LOG_INFO("storage: etcd at " << flags.get("etcd-servers") << ", keys under " << eo.key_prefix);
  return std::move(opened.value);
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  flags.define("data-dir", "./shepherd-data",
               "Directory of the embedded store (state.db) and of the generated PKI.");
  flags.define("etcd-servers", "",
               "etcd client URLs, comma-separated (http:// or https://); when set, objects are kept in "
               "etcd instead of the embedded store.");
  flags.define("etcd-prefix", "/registry", "Prefix of every key in etcd.");
  flags.define("etcd-cafile", "", "CA that etcd's serving certificates must chain to.");
  flags.define("etcd-certfile", "", "Client certificate for etcd (PEM).");
  flags.define("etcd-keyfile", "", "Key of --etcd-certfile (PEM).");
  flags.define("bind-address", "127.0.0.1", "Address to serve on (plain HTTP is served on loopback only).");
  flags.define("tls-cert-file", "",
               "Serving certificate (PEM, with its chain); when unset, one signed by a CA generated in "
               "--cert-dir is used.");
  flags.define("tls-private-key-file", "", "Key of --tls-cert-file (PEM).");
  flags.define("cert-dir", "", "Where the generated CA and certificates live (default DATA-DIR/pki).");
  flags.define("client-ca-file", "",
               "CA whose client certificates authenticate users (CN = user, O = groups); defaults to the "
               "generated CA when --tls-cert-file is unset.");
  flags.define("token-auth-file", "", "Static bearer tokens, lines of token,user,uid[,\"group1,group2\"].");
  flags.define("service-account-issuer", "https://kubernetes.default.svc.cluster.local",
               "Issuers of ServiceAccount tokens, comma-separated: the first signs, all are accepted.");
  flags.define("service-account-signing-key-file", "",
               "Private key (PEM) that signs ServiceAccount tokens (default CERT-DIR/sa.key).");
  flags.define(
      "service-account-key-file", "",
      "Public or private keys (PEM) that verify ServiceAccount tokens, comma-separated (default: the "
      "signing key).");
  flags.define("api-audiences", "", "Audiences of the API, comma-separated (default: the issuers).");
  flags.define("service-account-max-token-expiration", "0s",
               "Longest lifetime a TokenRequest may get (0: no limit; otherwise between 1h and 2^32 s).");
  flags.define(
      "service-account-extend-token-expiration", "true",
      "Pod-bound tokens asked for 3607 s last a year, with a warnafter claim (upstream's safe transition).",
      true);
  flags.define(
      "authorization-mode", "Node,RBAC",
      "Ordered authorizers: Node, RBAC, AlwaysAllow (members of system:masters may always do everything).");
  flags.define("anonymous-auth", "true", "Serve requests without credentials as system:anonymous.", true);
  flags.define("plain-http", "false",
               "Serve plain HTTP instead of HTTPS (only on a loopback --bind-address).", true);
  flags.define("port", "6443", "Port to serve on; 0 picks a free port.");
  flags.define("port-file", "", "If set, the bound port is written to this file once serving.");
  flags.define("advertise-address", "",
               "Address published in default/kubernetes endpoints (default: bind address).");
  flags.define("service-cluster-ip-range", "10.96.0.0/12",
               "CIDR from which Service cluster IPs are allocated.");
  flags.define("service-node-port-range", "30000-32767", "Port range reserved for NodePort services.");
  flags.define("watch-cache-size", "10000",
               "Events kept per resource for watches and consistent pagination.");
  flags.define("etcd-compaction-interval", "300",
               "Seconds between compactions of old revisions (0 disables).");
  flags.define("default-not-ready-toleration-seconds", "300",
               "tolerationSeconds of the not-ready:NoExecute toleration added to pods without one.");
  flags.define("default-unreachable-toleration-seconds", "300",
               "tolerationSeconds of the unreachable:NoExecute toleration added to pods without one.");
  flags.define("event-ttl", "1h0m0s", "How long events are kept after they were last written.");
  flags.define("kubelet-client-certificate", "",
               "Client certificate for kubelet connections (default CERT-DIR/apiserver-kubelet-client.crt).");
  flags.define("kubelet-client-key", "", "Key of --kubelet-client-certificate.");
  flags.define("streaming-connection-idle-timeout", "4h",
               "Exec, attach and port-forward sessions through this server with no data either way for this "
               "long are closed (0: never; as the kubelet's flag of the same name).");
  flags.define("kubelet-certificate-authority", "",
               "CA that kubelets' serving certificates must chain to (default: not verified, as upstream).");
  flags.define(
      "audit-log-path", "",
      "Append one JSON audit event (audit.k8s.io/v1, level Metadata) per request to this file; '-' is "
      "standard output.");
  flags.define("worker-threads", "32", "Request handler threads.");
  flags.define("max-requests-inflight", "400",
               "Read-only requests in flight at most; more are answered 429 (0: no limit).");
  flags.define("max-mutating-requests-inflight", "200",
               "Mutating requests in flight at most; more are answered 429 (0: no limit).");
  flags.define("max-watches-per-user", "1000",
               "Open watches one user may hold; more are answered 429 (0: no limit).");
  flags.define("shutdown-grace-seconds", "10", "How long in-flight requests may take to finish on SIGTERM.");
  flags.define("v", "0", "Log verbosity (0 info, 1+ debug).");
  flags.define("help", "false", "Show this help.", true);
  if (int rc = flags.parseMain(argc, argv, "shepherd-apiserver", "shepherd-apiserver [flags]"); rc >= 0)
    return rc;
  auto ttl = clock::parseDuration(flags.get("event-ttl"));
  if (!ttl) {
    std::fprintf(stderr, "shepherd-apiserver: invalid --event-ttl %s (use e.g. 1h, 30m, 90s)\n",
                 flags.get("event-ttl").c_str());
    return 2;
  }
  auto eventTtl = std::chrono::duration_cast<std::chrono::seconds>(*ttl);
  std::string bind = flags.get("bind-address");
  bool plain = flags.getBool("plain-http");
  if (plain && bind != "127.0.0.1" && bind != "::1" && bind != "localhost") {
    std::fprintf(stderr,
                 "shepherd-apiserver: plain HTTP may only be served on loopback (got --bind-address=%s)\n",
                 bind.c_str());
    return 2;
  }
  if (bind == "localhost") bind = "127.0.0.1";

  // Every client connection is a descriptor: take the hard limit, so thousands of idle
  // clients cannot exhaust the default of 1024.
  if (rlimit rl{}; getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }

  // Signals are taken synchronously by main; every other thread inherits the mask.
  sigset_t set = blockTerminationSignals();

  std::string dir = flags.get("data-dir");
  if (!makeDirs(dir)) {
    std::fprintf(stderr, "shepherd-apiserver: cannot create data dir %s: %s\n", dir.c_str(),
                 std::strerror(errno));
    return 1;
  }
  auto store = openStorage(flags, dir);
  if (!store) return 1;
  auto t0 = std::chrono::steady_clock::now();
  registry::RegistryOptions ro;
  ro.service_cidr = flags.get("service-cluster-ip-range");
  ro.node_port_range = flags.get("service-node-port-range");
  ro.watch_window = static_cast<size_t>(std::max(16, flags.getInt("watch-cache-size")));
  auto reg = registry::Registry::start(*store, ro);
  if (!reg) {
    std::fprintf(stderr, "shepherd-apiserver: %s\n", reg.error().message.c_str());
    return 1;
  }
  auto loadMs =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  LOG_INFO("storage loaded at revision " << store->currentRevision() << " in " << loadMs << " ms");

  handlers::ApiHandlerOptions ho;
  http::ServerOptions hs;
  hs.error_response = [](int code, const std::string& reason, const std::string& message) {
    return handlers::errorResponse(ApiError::make(code, reason, message));
  };
  std::string certDir = flags.get("cert-dir").empty() ? dir + "/pki" : flags.get("cert-dir");
  // Without a given serving certificate the generated PKI is used (it also holds the
  // ServiceAccount signing key, so plain-HTTP servers make it too).
  if (flags.get("tls-cert-file").empty()) {
    pki::ClusterPkiOptions po;
    po.dir = certDir;
    if (bind != "127.0.0.1" && bind != "0.0.0.0" && bind != "::") po.extra_sans.push_back(bind);
    if (!flags.get("advertise-address").empty()) po.extra_sans.push_back(flags.get("advertise-address"));
    if (auto r = pki::ensureClusterPki(po); !r) {
      std::fprintf(stderr, "shepherd-apiserver: %s\n", r.error().message.c_str());
      return 1;
    }
  }
  if (!plain) {
    http::TlsOptions tls{flags.get("tls-cert-file"), flags.get("tls-private-key-file"),
                         flags.get("client-ca-file")};
    if (tls.cert_file.empty()) {
      tls.cert_file = certDir + "/apiserver.crt";
      tls.key_file = certDir + "/apiserver.key";
      if (tls.client_ca_file.empty()) tls.client_ca_file = certDir + "/ca.crt";
    } else if (tls.key_file.empty()) {
      std::fprintf(stderr, "shepherd-apiserver: --tls-cert-file needs --tls-private-key-file\n");
      return 2;
    }
    hs.tls = tls;
    // Kubelets are reached over HTTPS too, as the apiserver-kubelet-client identity.
    handlers::KubeletClientTls kt{flags.get("kubelet-client-certificate"), flags.get("kubelet-client-key"),
                                  flags.get("kubelet-certificate-authority")};
    if (kt.cert_file.empty()) {
      kt.cert_file = certDir + "/apiserver-kubelet-client.crt";
      kt.key_file = certDir + "/apiserver-kubelet-client.key";
    }
    std::string err;
    ho.kubelet_tls = handlers::kubeletClientTls(kt, err);
    if (!ho.kubelet_tls) {
      std::fprintf(stderr, "shepherd-apiserver: %s\n", err.c_str());
      return 2;
    }
  }
  auto streamIdle = clock::parseDuration(flags.get("streaming-connection-idle-timeout"));
  if (!streamIdle) {
    std::fprintf(stderr, "shepherd-apiserver: invalid --streaming-connection-idle-timeout\n");
    return 2;
  }
  ho.streaming_idle_timeout_seconds =
      static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(*streamIdle).count());
  auth::AuthenticatorOptions ao;
  ao.anonymous = flags.getBool("anonymous-auth");
  ao.token_file = flags.get("token-auth-file");
  auto authenticator = auth::Authenticator::create(ao);
  if (!authenticator) {
    std::fprintf(stderr, "shepherd-apiserver: %s\n", authenticator.error().message.c_str());
    return 2;
  }
  auto saTokens = serviceAccountTokens(flags, certDir, *reg.value());
  if (!saTokens) {
    std::fprintf(stderr, "shepherd-apiserver: %s\n", saTokens.error().message.c_str());
    return 2;
  }
  {
    const auth::ServiceAccountTokens* tokens = saTokens->get();
    authenticator.value()->addTokenAuthenticator(
        [tokens](const std::string& token) -> std::optional<meta::UserInfo> {
          auto now =
              std::chrono::duration_cast<std::chrono::seconds>(clock::now().time_since_epoch()).count();
          auto r = tokens->authenticate(token, now);
          if (!r) return std::nullopt;
          if (!*r) {
            LOG_INFO("Unable to authenticate the request: " << r->error().message);
            return std::nullopt;
          }
          return std::move(r->value());
        });
  }
  ho.service_account_tokens = saTokens->get();
  ho.authenticator = authenticator->get();
  std::unique_ptr<handlers::AuditLog> auditLog;
  if (!flags.get("audit-log-path").empty()) {
    auto opened = handlers::AuditLog::open(flags.get("audit-log-path"));
    if (!opened) {
      std::fprintf(stderr, "shepherd-apiserver: %s\n", opened.error().message.c_str());
      return 1;
    }
    auditLog = std::move(*opened);
    ho.audit = auditLog.get();
  }
  std::vector<std::shared_ptr<const auth::Authorizer>> chain;
  for (const std::string& mode : flags.getList("authorization-mode")) {
    if (mode == "Node") {
      chain.push_back(
          std::make_shared<auth::NodeAuthorizer>(std::make_shared<registry::PodNodeGraph>(*reg.value())));
    } else if (mode == "RBAC") {
      auto policy = std::make_shared<registry::RbacPolicySource>(*reg.value());
      ho.rbac_policy = policy;
      chain.push_back(std::make_shared<auth::RbacAuthorizer>(policy));
    } else if (mode == "AlwaysAllow") {
      chain.push_back(std::make_shared<auth::AlwaysAllowAuthorizer>());
    } else {
      std::fprintf(stderr, "shepherd-apiserver: unknown --authorization-mode %s (Node, RBAC, AlwaysAllow)\n",
                   mode.c_str());
      return 2;
    }
  }
  auth::UnionAuthorizer authorizer(std::move(chain));
  ho.authorizer = &authorizer;
  plugins::admission::ChainOptions admission_opts;
  admission_opts.registry = reg.value().get();
  admission_opts.authorizer = &authorizer;
  admission_opts.rbac_policy = ho.rbac_policy;
  admission_opts.default_not_ready_toleration_seconds = flags.getInt("default-not-ready-toleration-seconds");
  admission_opts.default_unreachable_toleration_seconds =
      flags.getInt("default-unreachable-toleration-seconds");
  auto admissionChain = plugins::admission::buildChain(admission_opts);
  ho.admission = admissionChain.get();
  hs.address = bind;
  hs.port = flags.getInt("port");
  hs.worker_threads = std::max(2, flags.getInt("worker-threads"));
  hs.max_requests_inflight = flags.getInt("max-requests-inflight");
  hs.max_mutating_requests_inflight = flags.getInt("max-mutating-requests-inflight");
  hs.long_running = [](const http::Request& req) {
    // As upstream: watches and streaming subresources are not counted as in flight (decided
    // from the parsed request, so "?watch=1" on a write or a name like "exec" counts).
    // Only requests that could be such are parsed: the common one costs a string compare.
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
  };
  // Reads of one object come from the watch cache without blocking: they run on the
  // network threads. With an audit log (a file write per request) they stay on the workers,
  // and with etcd too (a consistent read asks etcd for its revision first).
  if (flags.get("audit-log-path").empty() && flags.get("etcd-servers").empty())
    hs.run_inline = [](const http::Request& req) {
      if (req.method != "GET" || req.hasQuery("watch")) return false;
      auth::RequestInfo i = auth::requestInfo(req);
      return i.resource_request && i.verb == "get" && i.subresource.empty();
    };
  // The advertised address is known once the port is; set below.
  auto api = std::make_unique<handlers::ApiHandler>(*reg.value(), ho);
  api->watches().setMaxPerUser(flags.getInt("max-watches-per-user"));
  http::Server server(hs, [&api](http::Request& req, std::shared_ptr<http::Responder> resp) {
    api->handle(req, std::move(resp));
  });
  auto port = server.start();
  if (!port) {
    std::fprintf(stderr, "shepherd-apiserver: %s\n", port.error().message.c_str());
    return 1;
  }
  std::string advertise = flags.get("advertise-address").empty() ? bind : flags.get("advertise-address");
  if (auto st = reg.value()->bootstrap(port.value()); !st) {
    std::fprintf(stderr, "shepherd-apiserver: bootstrap failed: %s\n", st.error().message.c_str());
    server.stop(0);
    return 1;
  }
  // default/kubernetes lists every live API server; with the embedded store this is the only one.
  registry::ApiServerLeases leases(*reg.value(), {advertise, port.value()},
                                   flags.get("etcd-servers").empty());
  if (auto live = leases.reconcile(); !live) {
    std::fprintf(stderr, "shepherd-apiserver: %s\n", live.error().message.c_str());
    server.stop(0);
    return 1;
  }
  api->setServerAddress(advertise + ":" + std::to_string(port.value()));
  api->setReady();
  if (!flags.get("port-file").empty()) {
    std::string tmp = flags.get("port-file") + ".tmp";
    std::ofstream(tmp) << port.value() << "\n";
    std::rename(tmp.c_str(), flags.get("port-file").c_str());
  }
  LOG_INFO("shepherd-apiserver serving on "
           << (plain ? "http://" : "https://") << bind << ":" << port.value() << " (data in "
           << (flags.get("etcd-servers").empty() ? dir : flags.get("etcd-servers")) << ")");

  int sig = 0;
  {
    Maintenance maint(*reg.value(), *api, *store, leases, flags.getInt("etcd-compaction-interval"), eventTtl);
    sigwait(&set, &sig);
    LOG_INFO("received signal " << sig << "; shutting down");
    api->setShuttingDown();
    api->watches().finishAll();
    server.stop(flags.getInt("shutdown-grace-seconds"));
  }
  leases.release();
  // Every acknowledged write is already durable; this finishes anything still queued.
  store->shutdown();
  LOG_INFO("shepherd-apiserver stopped");
  return 0;
}
