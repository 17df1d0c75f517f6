#include "kubelet-lite/serving_cert.h"

#include <sys/stat.h>

#include <filesystem>

#include "pki/certificate_authority.h"
#include "pki/certificates.h"

namespace shepherd::kubelet {

namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

Result<http::TlsOptions> kubeletServingTls(const ServingCertOptions& o) {
  std::error_code ec;
  std::filesystem::create_directories(o.cert_dir, ec);
  if (ec) return ApiError::internal("cannot create " + o.cert_dir + ": " + ec.message());
  http::TlsOptions t;
  t.client_ca_file = o.client_ca_file;
  if (t.client_ca_file.empty()) {
    t.client_ca_file = o.cert_dir + "/client-ca.crt";
    if (!pki::writeFileAtomically(t.client_ca_file, o.client_ca_pem, 0644))
      return ApiError::internal("cannot write " + t.client_ca_file);
  }
  if (!o.cert_file.empty()) {
    t.cert_file = o.cert_file;
    t.key_file = o.key_file;
    return t;
  }
  // Per node name, so several nodes may share one directory (fake nodes in tests).
  std::string base = o.cert_dir + "/kubelet-" + o.node_name;
  t.cert_file = base + ".crt";
  t.key_file = base + ".key";
  if (exists(t.cert_file) && exists(t.key_file)) return t;
  auto ca = pki::ensureCertificateAuthority(base + "-ca.crt", base + "-ca.key", o.node_name + "-ca");
  if (!ca) return ca.error();
  auto caKey = pki::readFile(base + "-ca.key");
  if (!caKey) return caKey.error();
  pki::CertificateRequest req{o.node_name, {}, {o.node_name}, {}, true, 365};
  if (!o.node_ip.empty()) req.ip_addresses.push_back(o.node_ip);
  auto issued = pki::issueCertificate(*ca, *caKey, req);
  if (!issued) return issued.error();
  if (!pki::writeFileAtomically(t.key_file, issued->key_pem, 0600) ||
      !pki::writeFileAtomically(t.cert_file, issued->cert_pem, 0644))
    return ApiError::internal("cannot write the kubelet serving certificate to " + o.cert_dir);
  return t;
}

}  // namespace shepherd::kubelet
