// The cluster's certificate authority: a self-signed CA certificate and its key in PEM
// files. Until TLS serving lands (security issue) it only backs the `kube-root-ca.crt`
// ConfigMaps; the security work signs serving and client certificates with it.
#pragma once

#include <string>

#include "common/api_error.h"

namespace shepherd::pki {

// Reads the CA certificate at `cert_path`; if neither it nor `key_path` exists, first
// creates both (EC P-256 key, mode 0600; certificate valid for 10 years, CN `common_name`).
// Returns the certificate's PEM text.
Result<std::string> ensureCertificateAuthority(const std::string& cert_path, const std::string& key_path,
                                               const std::string& common_name);

}  // namespace shepherd::pki
