// JSON Web Signatures in compact form (RFC 7515), the way kube-apiserver signs
// ServiceAccount tokens: the header holds only "alg" and "kid"; ECDSA P-256/384/521 keys sign
// ES256/ES384/ES512, RSA keys RS256; kid = base64url(SHA-256(PKIX DER of the public key)).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/api_error.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace shepherd::pki {

// One key, its JWS algorithm and key id. Immutable once made; shared freely.
struct JwsKey {
  std::shared_ptr<EVP_PKEY> key;
  std::string alg;  // ES256, ES384, ES512, RS256
  std::string kid;
};

// Thread-safety: immutable after creation; sign() from any thread.
class JwtSigner {
 public:
  // From a PEM private key (EC or RSA).
  static Result<JwtSigner> fromPem(const std::string& private_key_pem);
  // "<header>.<payload>.<signature>", each base64url without padding.
  Result<std::string> sign(std::string_view payload_json) const;
  const JwsKey& key() const { return key_; }

 private:
  JwsKey key_;
};

// Thread-safety: add keys before use; verify() from any thread.
class JwtVerifier {
 public:
  // Every key in the PEM text (public keys, private keys or certificates); an error when
  // it holds none.
  Status addKeys(const std::string& pem);
  bool empty() const { return keys_.empty(); }
  // The payload (JSON text) of a compact JWS signed by one of the keys. With a "kid" in the
  // header only keys of that id are tried (upstream: "invalid signature, no keys found").
  Result<std::string> verify(std::string_view token) const;

 private:
  std::vector<JwsKey> keys_;
};

// The decoded payload of a compact JWS, signature unchecked: nullopt unless the token has
// three parts and a base64url middle part (used to route a token by its issuer).
std::optional<std::string> unverifiedJwsPayload(std::string_view token);

}  // namespace shepherd::pki
