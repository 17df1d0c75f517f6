// The API server's configuration (kube-apiserver's options → config): every setting the
// command line has, parsed and checked once. The flags are its only source of defaults:
// defaultOptions() is what a command line without flags gives, for servers started in
// process (tests, benchmarks).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/api_error.h"
#include "common/flags.h"

namespace shepherd::apiserver {

struct Options {
  std::string data_dir;  // the embedded store (state.db) and the generated PKI
  // Storage: the embedded SQLite store unless etcd servers are named.
  std::vector<std::string> etcd_servers;
  std::string etcd_prefix;  // absolute, no trailing slash
  std::string etcd_ca_file, etcd_cert_file, etcd_key_file;
  // Serving.
  std::string bind_address;       // "localhost" is turned into 127.0.0.1
  int port = 0;                   // 0 picks a free port
  bool plain_http = false;        // only on loopback
  std::string advertise_address;  // default: the bind address
  std::string tls_cert_file, tls_private_key_file, cert_dir, client_ca_file;
  int worker_threads = 0;
  int max_requests_inflight = 0, max_mutating_requests_inflight = 0, max_watches_per_user = 0;
  int shutdown_grace_seconds = 0;
  // Authentication and authorization.
  std::string token_auth_file;
  bool anonymous_auth = true;
  std::vector<std::string> authorization_modes;  // Node, RBAC, AlwaysAllow
  std::vector<std::string> service_account_issuers, service_account_key_files, api_audiences;
  std::string service_account_signing_key_file;  // default CERT-DIR/sa.key
  int64_t service_account_max_token_expiration_seconds = 0;
  bool service_account_extend_token_expiration = true;
  // Resources.
  std::string service_cluster_ip_range, service_node_port_range;
  int watch_cache_size = 0;
  int etcd_compaction_interval_seconds = 0;
  int64_t default_not_ready_toleration_seconds = 0, default_unreachable_toleration_seconds = 0;
  std::chrono::seconds event_ttl{0};
  // Kubelets and streaming.
  std::string kubelet_client_certificate, kubelet_client_key, kubelet_certificate_authority;
  int streaming_connection_idle_timeout_seconds = 0;
  std::string audit_log_path;  // "-": standard output

  // Where the generated CA and certificates live.
  std::string certDir() const { return cert_dir.empty() ? data_dir + "/pki" : cert_dir; }
  bool embeddedStore() const { return etcd_servers.empty(); }
};

// Defines the API server's flags (with their defaults and help) on `flags`.
void defineFlags(Flags& flags);
// The options the parsed flags say; BadRequest with the reason when they are inconsistent.
Result<Options> optionsFromFlags(const Flags& flags);
// The options of a command line without flags.
Options defaultOptions();

}  // namespace shepherd::apiserver
