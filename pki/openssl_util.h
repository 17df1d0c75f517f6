// Small OpenSSL helpers the pki files share (owning pointers, PEM text, extensions).
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <functional>
#include <memory>
#include <string>

namespace shepherd::pki {

template <class T, void (*F)(T*)>
struct OpenSslDeleter {
  void operator()(T* p) const { F(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, OpenSslDeleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<BIO, BIO_free_all>>;

// The PEM text `write` puts into a memory BIO ("" on failure).
std::string pemOf(const std::function<int(BIO*)>& write);
// A certificate extension from its OpenSSL config text; `issuer` may be `cert` itself.
bool addExtension(X509* cert, X509* issuer, int nid, const char* value);
// A random positive 128-bit serial number.
void setRandomSerial(X509* cert);
KeyPtr readKey(const std::string& pem);
CertPtr readCert(const std::string& pem);

}  // namespace shepherd::pki
