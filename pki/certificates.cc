#include "pki/certificates.h"

#include <fcntl.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "pki/openssl_util.h"

namespace shepherd::pki {

Result<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ApiError::internal("pki: cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool writeFileAtomically(const std::string& path, const std::string& text, unsigned mode) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) return false;
  bool ok = ::fchmod(fd, static_cast<mode_t>(mode)) == 0 &&
            ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  return ok && ::rename(tmp.c_str(), path.c_str()) == 0;
}

Result<IssuedCertificate> issueCertificate(const std::string& ca_cert_pem, const std::string& ca_key_pem,
                                           const CertificateRequest& req) {
  CertPtr ca = readCert(ca_cert_pem);
  KeyPtr ca_key = readKey(ca_key_pem);
  if (!ca || !ca_key) return ApiError::internal("pki: the CA certificate or key cannot be read");
  KeyPtr key(EVP_EC_gen("P-256"));
  CertPtr cert(X509_new());
  if (!key || !cert) return ApiError::internal("pki: cannot generate a key");
  X509_set_version(cert.get(), 2);
  setRandomSerial(cert.get());
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60 * 60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), req.valid_days * 24 * 60 * 60);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (auto& o : req.organizations)
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(o.c_str()),
                               -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(req.common_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get()));
  X509_set_pubkey(cert.get(), key.get());
  std::string sans;
  for (auto& d : req.dns_names) sans += (sans.empty() ? "" : ",") + std::string("DNS:") + d;
  for (auto& ip : req.ip_addresses) sans += (sans.empty() ? "" : ",") + std::string("IP:") + ip;
  bool ok = addExtension(cert.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE") &&
            addExtension(cert.get(), ca.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment") &&
            addExtension(cert.get(), ca.get(), NID_ext_key_usage, req.server ? "serverAuth" : "clientAuth") &&
            addExtension(cert.get(), ca.get(), NID_authority_key_identifier, "keyid:always") &&
            (sans.empty() || addExtension(cert.get(), ca.get(), NID_subject_alt_name, sans.c_str()));
  if (!ok) return ApiError::internal("pki: cannot add the certificate extensions for " + req.common_name);
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0)
    return ApiError::internal("pki: cannot sign the certificate for " + req.common_name);
  IssuedCertificate out;
  out.key_pem = pemOf(
      [&](BIO* b) { return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
  out.cert_pem = pemOf([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); });
  if (out.key_pem.empty() || out.cert_pem.empty())
    return ApiError::internal("pki: cannot encode a certificate");
  return out;
}

}  // namespace shepherd::pki
