#include "apiserver/options.h"

#include "common/clock.h"

namespace shepherd::apiserver {

void defineFlags(Flags& flags) {
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
}

namespace {

std::optional<std::chrono::seconds> seconds(const Flags& flags, const std::string& name) {
  auto d = clock::parseDuration(flags.get(name));
  if (!d) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::seconds>(*d);
}

}  // namespace

Result<Options> optionsFromFlags(const Flags& flags) {
  Options o;
  o.data_dir = flags.get("data-dir");
  o.etcd_servers = flags.getList("etcd-servers");
  o.etcd_prefix = flags.get("etcd-prefix");
  while (o.etcd_prefix.size() > 1 && o.etcd_prefix.back() == '/') o.etcd_prefix.pop_back();
  if (!o.etcd_servers.empty() && (o.etcd_prefix.empty() || o.etcd_prefix[0] != '/' || o.etcd_prefix == "/"))
    return ApiError::badRequest("--etcd-prefix must be an absolute path like /registry");
  o.etcd_ca_file = flags.get("etcd-cafile");
  o.etcd_cert_file = flags.get("etcd-certfile");
  o.etcd_key_file = flags.get("etcd-keyfile");

  o.bind_address = flags.get("bind-address");
  o.plain_http = flags.getBool("plain-http");
  const std::string& bind = o.bind_address;
  if (o.plain_http && bind != "127.0.0.1" && bind != "::1" && bind != "localhost")
    return ApiError::badRequest("plain HTTP may only be served on loopback (got --bind-address=" + bind +
                                ")");
  if (o.bind_address == "localhost") o.bind_address = "127.0.0.1";
  o.port = flags.getInt("port");
  o.advertise_address = flags.get("advertise-address");
  o.tls_cert_file = flags.get("tls-cert-file");
  o.tls_private_key_file = flags.get("tls-private-key-file");
  if (!o.plain_http && !o.tls_cert_file.empty() && o.tls_private_key_file.empty())
    return ApiError::badRequest("--tls-cert-file needs --tls-private-key-file");
  o.cert_dir = flags.get("cert-dir");
  o.client_ca_file = flags.get("client-ca-file");
  o.worker_threads = std::max(2, flags.getInt("worker-threads"));
  o.max_requests_inflight = flags.getInt("max-requests-inflight");
  o.max_mutating_requests_inflight = flags.getInt("max-mutating-requests-inflight");
  o.max_watches_per_user = flags.getInt("max-watches-per-user");
  o.shutdown_grace_seconds = flags.getInt("shutdown-grace-seconds");

  o.token_auth_file = flags.get("token-auth-file");
  o.anonymous_auth = flags.getBool("anonymous-auth");
  o.authorization_modes = flags.getList("authorization-mode");
  for (const std::string& mode : o.authorization_modes)
    if (mode != "Node" && mode != "RBAC" && mode != "AlwaysAllow")
      return ApiError::badRequest("unknown --authorization-mode " + mode + " (Node, RBAC, AlwaysAllow)");
  o.service_account_issuers = flags.getList("service-account-issuer");
  if (o.service_account_issuers.empty())
    return ApiError::badRequest("service-account-issuer is a required flag");
  o.service_account_key_files = flags.getList("service-account-key-file");
  o.api_audiences = flags.getList("api-audiences");
  o.service_account_signing_key_file = flags.get("service-account-signing-key-file");
  auto maxToken = seconds(flags, "service-account-max-token-expiration");
  if (!maxToken) return ApiError::badRequest("invalid --service-account-max-token-expiration");
  o.service_account_max_token_expiration_seconds = maxToken->count();
  if (o.service_account_max_token_expiration_seconds != 0 &&
      (o.service_account_max_token_expiration_seconds < 3600 ||
       o.service_account_max_token_expiration_seconds > (1LL << 32)))
    return ApiError::badRequest(
        "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds");
  o.service_account_extend_token_expiration = flags.getBool("service-account-extend-token-expiration");

  o.service_cluster_ip_range = flags.get("service-cluster-ip-range");
  o.service_node_port_range = flags.get("service-node-port-range");
  o.watch_cache_size = std::max(16, flags.getInt("watch-cache-size"));
  o.etcd_compaction_interval_seconds = flags.getInt("etcd-compaction-interval");
  o.default_not_ready_toleration_seconds = flags.getInt("default-not-ready-toleration-seconds");
  o.default_unreachable_toleration_seconds = flags.getInt("default-unreachable-toleration-seconds");
  auto ttl = seconds(flags, "event-ttl");
  if (!ttl)
    return ApiError::badRequest("invalid --event-ttl " + flags.get("event-ttl") + " (use e.g. 1h, 30m, 90s)");
  o.event_ttl = *ttl;

  o.kubelet_client_certificate = flags.get("kubelet-client-certificate");
  o.kubelet_client_key = flags.get("kubelet-client-key");
  o.kubelet_certificate_authority = flags.get("kubelet-certificate-authority");
  auto idle = seconds(flags, "streaming-connection-idle-timeout");
  if (!idle) return ApiError::badRequest("invalid --streaming-connection-idle-timeout");
  o.streaming_connection_idle_timeout_seconds = static_cast<int>(idle->count());
  o.audit_log_path = flags.get("audit-log-path");
  return o;
}

Options defaultOptions() {
  Flags flags;
  defineFlags(flags);
  auto o = optionsFromFlags(flags);
  return o ? std::move(*o) : Options{};  // the defaults are consistent (unit tested)
}

}  // namespace shepherd::apiserver
