#include "pki/certificate_authority.h"

#include <fcntl.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

namespace shepherd::pki {

namespace {

template <class T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string pemOf(const std::function<int(BIO*)>& write) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return "";
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

// Writes `text` to `path` with `mode`, atomically (temporary file, then rename).
bool writeFile(const std::string& path, const std::string& text, mode_t mode) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  return ok && ::rename(tmp.c_str(), path.c_str()) == 0;
}

bool addExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

Result<std::string> create(const std::string& cert_path, const std::string& key_path, const std::string& cn) {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return ApiError::internal("pki: cannot generate a P-256 key");
  CertPtr cert(X509_new());
  if (!cert) return ApiError::internal("pki: out of memory");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  urandom.read(reinterpret_cast<char*>(serial), sizeof serial);
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60 * 60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 60 * 60);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  if (!addExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !addExtension(cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign") ||
      !addExtension(cert.get(), NID_subject_key_identifier, "hash"))
    return ApiError::internal("pki: cannot add the CA extensions");
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0)
    return ApiError::internal("pki: cannot sign the CA");
  std::string keyPem = pemOf(
      [&](BIO* b) { return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
  std::string certPem = pemOf([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); });
  if (keyPem.empty() || certPem.empty()) return ApiError::internal("pki: cannot encode the CA");
  if (!writeFile(key_path, keyPem, 0600)) return ApiError::internal("pki: cannot write " + key_path);
  if (!writeFile(cert_path, certPem, 0644)) return ApiError::internal("pki: cannot write " + cert_path);
  return certPem;
}

}  // namespace

Result<std::string> ensureCertificateAuthority(const std::string& cert_path, const std::string& key_path,
                                               const std::string& common_name) {
  if (!exists(cert_path) && !exists(key_path)) return create(cert_path, key_path, common_name);
  std::ifstream in(cert_path);
  if (!in) return ApiError::internal("pki: cannot read " + cert_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string pem = ss.str();
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return ApiError::internal("pki: " + cert_path + " holds no PEM certificate");
  return pem;
}

}  // namespace shepherd::pki
