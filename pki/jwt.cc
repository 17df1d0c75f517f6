#include "pki/jwt.h"

#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <array>
#include <cstring>

#include "common/base64.h"
#include "common/json.h"
#include "pki/openssl_util.h"

namespace shepherd::pki {

namespace {

using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, OpenSslDeleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using EcdsaSigPtr = std::unique_ptr<ECDSA_SIG, OpenSslDeleter<ECDSA_SIG, ECDSA_SIG_free>>;

std::shared_ptr<EVP_PKEY> share(EVP_PKEY* k) {
  return std::shared_ptr<EVP_PKEY>(k, EVP_PKEY_free);
}

// ES* signatures on the wire are R || S, each padded to the curve's byte size.
size_t ecCoordinateBytes(const std::string& alg) {
  if (alg == "ES256") return 32;
  if (alg == "ES384") return 48;
  return 66;  // ES512 (P-521)
}

const EVP_MD* digestOf(const std::string& alg) {
  if (alg == "ES384") return EVP_sha384();
  if (alg == "ES512") return EVP_sha512();
  return EVP_sha256();  // ES256, RS256
}

// The JWS algorithm and key id of a key; an error for key types upstream does not sign with.
Result<JwsKey> describe(std::shared_ptr<EVP_PKEY> key) {
  JwsKey k;
  int type = EVP_PKEY_get_base_id(key.get());
  if (type == EVP_PKEY_EC) {
    int bits = EVP_PKEY_get_bits(key.get());
    if (bits == 256)
      k.alg = "ES256";
    else if (bits == 384)
      k.alg = "ES384";
    else if (bits == 521)
      k.alg = "ES512";
    else
      return ApiError::internal("unknown private key curve, must be 256, 384, or 521");
  } else if (type == EVP_PKEY_RSA) {
    k.alg = "RS256";
  } else {
    return ApiError::internal("unknown private key type, must be RSA or ECDSA");
  }
  int n = i2d_PUBKEY(key.get(), nullptr);
  if (n <= 0) return ApiError::internal("cannot encode the public key");
  std::string der(static_cast<size_t>(n), '\0');
  auto* p = reinterpret_cast<unsigned char*>(der.data());
  i2d_PUBKEY(key.get(), &p);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(der.data()), der.size(), digest);
  k.kid = base64Encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest), true);
  k.key = std::move(key);
  return k;
}

// DER ECDSA signature -> fixed-width R || S.
std::optional<std::string> derToJose(const std::string& der, size_t width) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  EcdsaSigPtr sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())));
  if (!sig) return std::nullopt;
  const BIGNUM* r = nullptr;
  const BIGNUM* s = nullptr;
  ECDSA_SIG_get0(sig.get(), &r, &s);
  std::string out(2 * width, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  if (BN_bn2binpad(r, o, static_cast<int>(width)) < 0 ||
      BN_bn2binpad(s, o + width, static_cast<int>(width)) < 0)
    return std::nullopt;
  return out;
}

// Fixed-width R || S -> DER ECDSA signature.
std::optional<std::string> joseToDer(std::string_view raw, size_t width) {
  if (raw.size() != 2 * width) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  EcdsaSigPtr sig(ECDSA_SIG_new());
  BIGNUM* r = BN_bin2bn(p, static_cast<int>(width), nullptr);
  BIGNUM* s = BN_bin2bn(p + width, static_cast<int>(width), nullptr);
  if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return std::nullopt;
  }
  int n = i2d_ECDSA_SIG(sig.get(), nullptr);
  if (n <= 0) return std::nullopt;
  std::string der(static_cast<size_t>(n), '\0');
  auto* d = reinterpret_cast<unsigned char*>(der.data());
  i2d_ECDSA_SIG(sig.get(), &d);
  return der;
}

bool verifyWith(const JwsKey& k, std::string_view signing_input, std::string_view signature) {
  std::string der;
  if (k.alg[0] == 'E') {
    auto d = joseToDer(signature, ecCoordinateBytes(k.alg));
    if (!d) return false;
    der = std::move(*d);
  } else {
    der = std::string(signature);
  }
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, digestOf(k.alg), nullptr, k.key.get()) != 1)
    return false;
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(der.data()), der.size(),
                          reinterpret_cast<const unsigned char*>(signing_input.data()),
                          signing_input.size()) == 1;
}

// Splits "a.b.c"; nullopt unless exactly three parts.
std::optional<std::array<std::string_view, 3>> splitJws(std::string_view token) {
  size_t a = token.find('.');
  if (a == std::string_view::npos) return std::nullopt;
  size_t b = token.find('.', a + 1);
  if (b == std::string_view::npos || token.find('.', b + 1) != std::string_view::npos) return std::nullopt;
  return std::array<std::string_view, 3>{token.substr(0, a), token.substr(a + 1, b - a - 1),
                                         token.substr(b + 1)};
}

}  // namespace

Result<JwtSigner> JwtSigner::fromPem(const std::string& private_key_pem) {
  KeyPtr key = readKey(private_key_pem);
  if (!key) return ApiError::internal("no private key in the PEM data");
  auto k = describe(share(key.release()));
  if (!k) return k.error();
  JwtSigner s;
  s.key_ = std::move(*k);
  return s;
}

Result<std::string> JwtSigner::sign(std::string_view payload_json) const {
  json::Document header;
  header.SetObject();
  json::setString(header, "alg", key_.alg, header.GetAllocator());
  json::setString(header, "kid", key_.kid, header.GetAllocator());
  std::string input = base64Encode(json::serialize(header), true) + "." + base64Encode(payload_json, true);
  MdCtxPtr ctx(EVP_MD_CTX_new());
  size_t n = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, digestOf(key_.alg), nullptr, key_.key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &n, reinterpret_cast<const unsigned char*>(input.data()),
                     input.size()) != 1)
    return ApiError::internal("cannot sign the token");
  std::string sig(n, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &n,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
    return ApiError::internal("cannot sign the token");
  sig.resize(n);
  if (key_.alg[0] == 'E') {
    auto raw = derToJose(sig, ecCoordinateBytes(key_.alg));
    if (!raw) return ApiError::internal("cannot encode the token signature");
    sig = std::move(*raw);
  }
  return input + "." + base64Encode(sig, true);
}

Status JwtVerifier::addKeys(const std::string& pem) {
  size_t before = keys_.size();
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  // Walk the PEM blocks one by one: public keys, private keys and certificates all count.
  while (true) {
    char* name = nullptr;
    char* header = nullptr;
    unsigned char* data = nullptr;
    long len = 0;
    if (PEM_read_bio(bio.get(), &name, &header, &data, &len) != 1) break;
    std::string block_name = name;
    const unsigned char* p = data;
    EVP_PKEY* key = nullptr;
    if (block_name == "PUBLIC KEY") {
      key = d2i_PUBKEY(nullptr, &p, len);
    } else if (block_name == "PRIVATE KEY" || block_name == "EC PRIVATE KEY" ||
               block_name == "RSA PRIVATE KEY") {
      int type = block_name == "EC PRIVATE KEY"    ? EVP_PKEY_EC
                 : block_name == "RSA PRIVATE KEY" ? EVP_PKEY_RSA
                                                   : 0;
      key = type ? d2i_PrivateKey(type, nullptr, &p, len) : d2i_AutoPrivateKey(nullptr, &p, len);
    } else if (block_name == "CERTIFICATE") {
      if (X509* cert = d2i_X509(nullptr, &p, len)) {
        key = X509_get_pubkey(cert);
        X509_free(cert);
      }
    }
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
    if (!key) continue;
    auto k = describe(share(key));
    if (k) keys_.push_back(std::move(*k));
  }
  if (keys_.size() == before) return ApiError::internal("no usable public key in the PEM data");
  return okStatus();
}

Result<std::string> JwtVerifier::verify(std::string_view token) const {
  auto parts = splitJws(token);
  if (!parts) return ApiError::make(401, "Unauthorized", "not a compact JWS");
  auto header_text = base64UrlDecodeStrict((*parts)[0]);
  auto payload = base64UrlDecodeStrict((*parts)[1]);
  auto signature = base64UrlDecodeStrict((*parts)[2]);
  if (!header_text || !payload || !signature)
    return ApiError::make(401, "Unauthorized", "malformed JWS encoding");
  json::Document header;
  if (!json::parse(*header_text, header) || !header.IsObject())
    return ApiError::make(401, "Unauthorized", "malformed JWS header");
  std::string_view alg = json::getString(header, "alg");
  std::string_view kid = json::getString(header, "kid");
  std::string_view signing_input = token.substr(0, (*parts)[0].size() + 1 + (*parts)[1].size());
  bool tried = false;
  for (const auto& k : keys_) {
    if (!kid.empty() && k.kid != kid) continue;
    if (k.alg != alg) continue;  // the algorithm must be the key's own (no "none", no confusion)
    tried = true;
    if (verifyWith(k, signing_input, *signature)) return std::move(*payload);
  }
  return ApiError::make(401, "Unauthorized",
                        tried ? "invalid signature" : "invalid signature, no keys found");
}

std::optional<std::string> unverifiedJwsPayload(std::string_view token) {
  auto parts = splitJws(token);
  if (!parts) return std::nullopt;
  return base64UrlDecodeStrict((*parts)[1]);
}

}  // namespace shepherd::pki
