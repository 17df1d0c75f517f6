// The kubelet port's TLS material, as upstream's kubelet makes it when given none: a
// self-signed CA of the node's own and a serving certificate from it (IP SAN = node IP,
// DNS SAN = node name), kept in the certificate directory across restarts; and the CA whose
// client certificates the port accepts (by default the cluster CA of the kubeconfig).
#pragma once

#include <string>

#include "common/api_error.h"
#include "net/http/server.h"

namespace shepherd::kubelet {

struct ServingCertOptions {
  std::string cert_dir;
  std::string node_name, node_ip;
  std::string cert_file, key_file;  // given: used as they are
  std::string client_ca_file;       // given: used as it is
  std::string client_ca_pem;        // else this text (from the kubeconfig) is written to cert_dir
};

Result<http::TlsOptions> kubeletServingTls(const ServingCertOptions& o);

}  // namespace shepherd::kubelet
