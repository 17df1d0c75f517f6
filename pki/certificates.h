// Issuing certificates from the cluster CA (OpenSSL): EC P-256 keys, SHA-256
// signatures, the usages Kubernetes components expect (serverAuth for serving
// certificates, clientAuth for client certificates whose CN is the user and whose O
// entries are the groups).
#pragma once

#include <string>
#include <vector>

#include "common/api_error.h"

namespace shepherd::pki {

struct CertificateRequest {
  std::string common_name;
  std::vector<std::string> organizations;  // groups of a client certificate
  std::vector<std::string> dns_names;      // serving certificate SANs
  std::vector<std::string> ip_addresses;
  bool server = false;  // serverAuth (else clientAuth)
  long valid_days = 365;
};

struct IssuedCertificate {
  std::string cert_pem, key_pem;
};

// Signs a new key's certificate with the CA (PEM texts of its certificate and key).
Result<IssuedCertificate> issueCertificate(const std::string& ca_cert_pem, const std::string& ca_key_pem,
                                           const CertificateRequest& request);

// Reads a whole file ("" and an error when it cannot).
Result<std::string> readFile(const std::string& path);
// Writes `text` to `path` with `mode`, atomically (temporary file, fsync, rename).
bool writeFileAtomically(const std::string& path, const std::string& text, unsigned mode);

}  // namespace shepherd::pki
