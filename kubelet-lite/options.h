// kubelet-lite's configuration: every setting its command line has, parsed and checked
// once (as apiserver/options.h does for the API server).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/api_error.h"
#include "common/flags.h"
#include "kubelet-lite/fake_fleet.h"
#include "kubelet-lite/kubelet.h"
#include "kubelet-lite/log_server.h"
#include "kubelet-lite/node_status.h"

namespace shepherd::kubelet {

struct KubeletOptions {
  std::string kubeconfig;
  std::string node_name;  // --hostname-override, else the machine's hostname
  std::string node_ip;
  std::string address;  // what the kubelet port binds (default: node_ip)
  int port = 0;
  // The kubelet port's TLS.
  std::string cert_dir;  // default ROOT-DIR/pki
  std::string tls_cert_file, tls_private_key_file, client_ca_file;
  std::vector<std::string> authorized_client_users;
  int streaming_idle_timeout_seconds = 0;
  // The runtime.
  bool fake_runtime = false;  // --runtime=fake
  std::string runtime_endpoint;
  std::string root_dir, cgroup_root, resolv_conf;
  // The Node object.
  std::map<std::string, std::string> labels;
  int max_pods = 0;
  std::string cpu, memory;  // capacity overrides (empty: detected)
  int lease_seconds = 0, renew_interval_seconds = 0;
  // --runtime=fake.
  int fake_startup_ms = 0;
  int fake_nodes = 0;  // > 0: a fleet of fake nodes in this process
  int fake_workers = 0;

  std::string bindAddress() const { return address.empty() ? node_ip : address; }
  std::string certDir() const { return cert_dir.empty() ? root_dir + "/pki" : cert_dir; }
};

// Defines kubelet-lite's flags (with their defaults and help) on `flags`.
void defineFlags(Flags& flags);
// The options the parsed flags say; BadRequest with the reason when they are inconsistent.
Result<KubeletOptions> optionsFromFlags(const Flags& flags);
// "k=v,k2=v2" as --node-labels takes it.
Result<std::map<std::string, std::string>> parseNodeLabels(const std::string& s);

// The components' configurations from the options (options → config).
// The pod workers' settings; pods' DNS under dnsPolicy Default comes from --resolv-conf.
KubeletConfig kubeletConfig(const KubeletOptions& o, const MachineResources& machine,
                            const std::string& runtime_name);
// The Node object, advertising the kubelet port it really got.
NodeConfig nodeConfig(const KubeletOptions& o, int kubelet_port, const std::string& runtime_version);
// A fleet of --fake-nodes fake nodes.
FakeFleetConfig fakeFleetConfig(const KubeletOptions& o);
// The kubelet port: TLS with client certificates checked against the client CA (from
// --client-ca-file, else `cluster_ca_pem`, the kubeconfig's CA); plain HTTP with no CA at all.
Result<LogServerOptions> kubeletPortOptions(const KubeletOptions& o, const std::string& cluster_ca_pem);

}  // namespace shepherd::kubelet
