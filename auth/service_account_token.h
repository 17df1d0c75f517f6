// Bound ServiceAccount tokens, as kube-apiserver issues and checks them: signed JWTs whose
// claims name the issuer, the audiences, the ServiceAccount (and optionally the pod, secret
// and node they are bound to) and a lifetime. A token authenticates as
// system:serviceaccount:<ns>:<name> in system:serviceaccounts[:<ns>] while it is unexpired
// (60 s leeway, as go-jose), its audiences meet the API audiences, and every object it names
// still exists with the same uid.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/api_error.h"
#include "meta/user_info.h"
#include "pki/jwt.h"

namespace shepherd::auth {

inline constexpr const char* kServiceAccountUserPrefix = "system:serviceaccount:";
inline constexpr const char* kServiceAccountsGroup = "system:serviceaccounts";
// Upstream's "safe transition" lifetime: tokens asked for exactly this long are made to last
// a year, with a warnafter claim at the asked time.
inline constexpr int64_t kWarnOnlyExpirationSeconds = 3607;
inline constexpr int64_t kExtendedExpirationSeconds = 365LL * 24 * 3600;
inline constexpr int64_t kClockLeewaySeconds = 60;

struct ServiceAccountTokenOptions {
  std::vector<std::string> issuers;    // the first signs; all are accepted
  std::vector<std::string> audiences;  // the API audiences (default: the issuers)
  int64_t max_expiration_seconds = 0;  // 0: no cap
  bool extend_expiration = true;
};

struct ObjectClaim {
  std::string name, uid;
};

// What a token says.
struct TokenClaims {
  std::string issuer;
  std::vector<std::string> audiences;
  int64_t issued_at = 0, not_before = 0, expires = 0, warn_after = 0;  // Unix seconds
  std::string jti;
  std::string ns;
  ObjectClaim service_account;
  std::optional<ObjectClaim> pod, secret, node;
  std::string subject() const { return kServiceAccountUserPrefix + ns + ":" + service_account.name; }
};

std::string encodeClaims(const TokenClaims& c);
// nullopt when the payload is not a bound ServiceAccount token of any issuer.
std::optional<TokenClaims> decodeClaims(std::string_view payload_json);

// A live object as the store holds it: its uid and whether it is being deleted since
// deletionTimestamp (Unix seconds).
struct LiveObject {
  std::string uid;
  std::optional<int64_t> deletion_timestamp;
};
// Looks up "serviceaccounts", "pods", "secrets" or "nodes" (ns "" for nodes); nullopt when
// the object does not exist.
using ObjectLookup = std::function<std::optional<LiveObject>(std::string_view resource, const std::string& ns,
                                                             const std::string& name)>;

// The user a ServiceAccount token stands for (before system:authenticated is added).
meta::UserInfo serviceAccountUser(const TokenClaims& c);

// Thread-safety: immutable after construction; issue() and authenticate() from any thread.
class ServiceAccountTokens {
 public:
  ServiceAccountTokens(ServiceAccountTokenOptions opts, pki::JwtSigner signer, pki::JwtVerifier verifier,
                       ObjectLookup lookup);
  const ServiceAccountTokenOptions& options() const { return opts_; }
  // Signs the claims (issuer filled in with the first issuer).
  Result<std::string> issue(TokenClaims claims) const;
  // The user of a valid token; nullopt when the token is not ours (another issuer, not a
  // JWT); an error (logged by the caller, 401 to the client) when it is ours but not valid.
  std::optional<Result<meta::UserInfo>> authenticate(std::string_view token, int64_t now) const;

 private:
  Result<meta::UserInfo> validate(const TokenClaims& c, int64_t now) const;

  ServiceAccountTokenOptions opts_;
  pki::JwtSigner signer_;
  pki::JwtVerifier verifier_;
  ObjectLookup lookup_;
};

}  // namespace shepherd::auth
