// The cluster's PKI in one directory, created on first use and kept afterwards: the CA,
// the API server's serving certificate, one client certificate and kubeconfig per
// identity (admin in system:masters, the scheduler, the controller manager, each node in
// system:nodes, the API server's own client for kubelets), and the ServiceAccount token
// signing key. Keys are mode 0600.
//
// Layout (DIR/...): ca.crt ca.key apiserver.crt apiserver.key
//   apiserver-kubelet-client.{crt,key} sa.key sa.pub
//   admin.{crt,key,kubeconfig} scheduler.{...} controller-manager.{...}
//   node-<name>.{crt,key,kubeconfig}
#pragma once

#include <string>
#include <vector>

#include "common/api_error.h"

namespace shepherd::pki {

struct ClusterPkiOptions {
  std::string dir;
  std::string server_url;               // written into the kubeconfigs
  std::vector<std::string> nodes;       // node names
  std::vector<std::string> extra_sans;  // more serving SANs (IPs or DNS names)
};

Result<bool> ensureClusterPki(const ClusterPkiOptions& opts);

// A kubeconfig for `user` at `server_url`, with the CA and client certificate embedded.
std::string kubeconfigText(const std::string& server_url, const std::string& ca_pem, const std::string& user,
                           const std::string& cert_pem, const std::string& key_pem);

}  // namespace shepherd::pki
