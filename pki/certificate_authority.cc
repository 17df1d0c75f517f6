#include "pki/certificate_authority.h"

#include <fcntl.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pki/certificates.h"
#include "pki/openssl_util.h"

namespace shepherd::pki {

namespace {

Result<std::string> create(const std::string& cert_path, const std::string& key_path, const std::string& cn) {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return ApiError::internal("pki: cannot generate a P-256 key");
  CertPtr cert(X509_new());
  if (!cert) return ApiError::internal("pki: out of memory");
  X509_set_version(cert.get(), 2);
  setRandomSerial(cert.get());
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60 * 60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 60 * 60);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  if (!addExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !addExtension(cert.get(), cert.get(), NID_key_usage,
                    "critical,digitalSignature,keyEncipherment,keyCertSign") ||
      !addExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash"))
    return ApiError::internal("pki: cannot add the CA extensions");
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0)
    return ApiError::internal("pki: cannot sign the CA");
  std::string keyPem = pemOf(
      [&](BIO* b) { return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
  std::string certPem = pemOf([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); });
  if (keyPem.empty() || certPem.empty()) return ApiError::internal("pki: cannot encode the CA");
  if (!writeFileAtomically(key_path, keyPem, 0600))
    return ApiError::internal("pki: cannot write " + key_path);
  if (!writeFileAtomically(cert_path, certPem, 0644))
    return ApiError::internal("pki: cannot write " + cert_path);
  return certPem;
}

}  // namespace

Result<std::string> ensureCertificateAuthority(const std::string& cert_path, const std::string& key_path,
                                               const std::string& common_name) {
  struct stat st;
  if (::stat(cert_path.c_str(), &st) != 0 && ::stat(key_path.c_str(), &st) != 0)
    return create(cert_path, key_path, common_name);
  auto pem = readFile(cert_path);
  if (!pem) return pem.error();
  if (!readCert(*pem)) return ApiError::internal("pki: " + cert_path + " holds no PEM certificate");
  return *pem;
}

}  // namespace shepherd::pki
