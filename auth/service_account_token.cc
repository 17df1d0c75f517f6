#include "auth/service_account_token.h"

#include <algorithm>

#include "common/json.h"

namespace shepherd::auth {

namespace {

void setObjectClaim(json::Value& parent, const char* key, const ObjectClaim& o, json::Allocator& a) {
  json::Value v(rapidjson::kObjectType);
  json::setString(v, "name", o.name, a);
  if (!o.uid.empty()) json::setString(v, "uid", o.uid, a);
  json::set(parent, key, std::move(v), a);
}

std::optional<ObjectClaim> objectClaim(const json::Value& parent, const char* key) {
  const json::Value* v = json::find(parent, key);
  if (!v || !v->IsObject()) return std::nullopt;
  return ObjectClaim{std::string(json::getString(*v, "name")), std::string(json::getString(*v, "uid"))};
}

Result<meta::UserInfo> invalidToken(std::string why) {
  return ApiError::make(401, "Unauthorized", std::move(why));
}

// The uid check upstream makes for every object a token names.
Status checkBound(const ObjectLookup& lookup, std::string_view resource, const char* what,
                  const std::string& ns, const ObjectClaim& claim, int64_t now) {
  auto live = lookup(resource, ns, claim.name);
  if (!live || (live->deletion_timestamp && *live->deletion_timestamp < now - kClockLeewaySeconds))
    return ApiError::make(401, "Unauthorized", "service account token has been invalidated");
  if (!claim.uid.empty() && live->uid != claim.uid)
    return ApiError::make(401, "Unauthorized",
                          std::string(what) + " UID (" + live->uid + ") does not match service account " +
                              what + " ref claim (" + claim.uid + ")");
  return okStatus();
}

}  // namespace

std::string encodeClaims(const TokenClaims& c) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  json::Value aud(rapidjson::kArrayType);
  for (const auto& s : c.audiences) aud.PushBack(json::str(s, a), a);
  json::set(d, "aud", std::move(aud), a);
  json::set(d, "exp", json::Value(c.expires), a);
  json::set(d, "iat", json::Value(c.issued_at), a);
  json::setString(d, "iss", c.issuer, a);
  if (!c.jti.empty()) json::setString(d, "jti", c.jti, a);
  json::Value k8s(rapidjson::kObjectType);
  json::setString(k8s, "namespace", c.ns, a);
  if (c.node) setObjectClaim(k8s, "node", *c.node, a);
  if (c.pod) setObjectClaim(k8s, "pod", *c.pod, a);
  if (c.secret) setObjectClaim(k8s, "secret", *c.secret, a);
  setObjectClaim(k8s, "serviceaccount", c.service_account, a);
  if (c.warn_after) json::set(k8s, "warnafter", json::Value(c.warn_after), a);
  json::set(d, "kubernetes.io", std::move(k8s), a);
  json::set(d, "nbf", json::Value(c.not_before), a);
  json::setString(d, "sub", c.subject(), a);
  return json::serialize(d);
}

std::optional<TokenClaims> decodeClaims(std::string_view payload_json) {
  json::Document d;
  if (!json::parse(payload_json, d) || !d.IsObject()) return std::nullopt;
  const json::Value* k8s = json::find(d, "kubernetes.io");
  if (!k8s || !k8s->IsObject()) return std::nullopt;
  TokenClaims c;
  c.issuer = json::getString(d, "iss");
  if (const json::Value* aud = json::find(d, "aud")) {
    if (aud->IsString())
      c.audiences.emplace_back(json::view(*aud));
    else if (aud->IsArray())
      for (const auto& v : aud->GetArray())
        if (v.IsString()) c.audiences.emplace_back(json::view(v));
  }
  c.issued_at = json::getInt(d, "iat").value_or(0);
  c.not_before = json::getInt(d, "nbf").value_or(0);
  c.expires = json::getInt(d, "exp").value_or(0);
  c.jti = json::getString(d, "jti");
  c.ns = json::getString(*k8s, "namespace");
  auto sa = objectClaim(*k8s, "serviceaccount");
  if (!sa || c.ns.empty() || sa->name.empty()) return std::nullopt;
  c.service_account = *sa;
  c.pod = objectClaim(*k8s, "pod");
  c.secret = objectClaim(*k8s, "secret");
  c.node = objectClaim(*k8s, "node");
  c.warn_after = json::getInt(*k8s, "warnafter").value_or(0);
  // A token with no exp is not a bound token.
  if (!json::find(d, "exp")) return std::nullopt;
  if (json::getString(d, "sub") != c.subject()) return std::nullopt;
  return c;
}

meta::UserInfo serviceAccountUser(const TokenClaims& c) {
  meta::UserInfo u;
  u.name = c.subject();
  u.uid = c.service_account.uid;
  u.groups = {kServiceAccountsGroup, std::string(kServiceAccountsGroup) + ":" + c.ns};
  if (c.pod && !c.pod->name.empty() && !c.pod->uid.empty()) {
    u.extra["authentication.kubernetes.io/pod-name"] = {c.pod->name};
    u.extra["authentication.kubernetes.io/pod-uid"] = {c.pod->uid};
  }
  if (c.node && !c.node->name.empty()) {
    u.extra["authentication.kubernetes.io/node-name"] = {c.node->name};
    if (!c.node->uid.empty()) u.extra["authentication.kubernetes.io/node-uid"] = {c.node->uid};
  }
  if (!c.jti.empty()) u.extra["authentication.kubernetes.io/credential-id"] = {"JTI=" + c.jti};
  return u;
}

ServiceAccountTokens::ServiceAccountTokens(ServiceAccountTokenOptions opts, pki::JwtSigner signer,
                                           pki::JwtVerifier verifier, ObjectLookup lookup)
    : opts_(std::move(opts)),
      signer_(std::move(signer)),
      verifier_(std::move(verifier)),
      lookup_(std::move(lookup)) {
  if (opts_.audiences.empty()) opts_.audiences = opts_.issuers;
}

Result<std::string> ServiceAccountTokens::issue(TokenClaims claims) const {
  if (opts_.issuers.empty()) return ApiError::internal("no service account issuer configured");
  claims.issuer = opts_.issuers.front();
  return signer_.sign(encodeClaims(claims));
}

std::optional<Result<meta::UserInfo>> ServiceAccountTokens::authenticate(std::string_view token,
                                                                         int64_t now) const {
  // Cheap pre-check first, as upstream: only JWTs of one of our issuers are ours.
  if (token.empty() || token.front() == '{') return std::nullopt;
  auto unverified = pki::unverifiedJwsPayload(token);
  if (!unverified) return std::nullopt;
  json::Document peek;
  if (!json::parse(*unverified, peek) || !peek.IsObject()) return std::nullopt;
  std::string_view iss = json::getString(peek, "iss");
  if (std::find(opts_.issuers.begin(), opts_.issuers.end(), iss) == opts_.issuers.end()) return std::nullopt;
  auto payload = verifier_.verify(token);
  if (!payload) return Result<meta::UserInfo>(payload.error());
  auto claims = decodeClaims(*payload);
  if (!claims) return invalidToken("service account token claims could not be validated");
  return validate(*claims, now);
}

Result<meta::UserInfo> ServiceAccountTokens::validate(const TokenClaims& c, int64_t now) const {
  if (now > c.expires + kClockLeewaySeconds) return invalidToken("service account token has expired");
  if (c.not_before && now < c.not_before - kClockLeewaySeconds)
    return invalidToken("service account token is not valid yet");
  if (c.issued_at && now < c.issued_at - kClockLeewaySeconds)
    return invalidToken("service account token is issued in the future");
  bool audience_ok = false;
  for (const auto& a : c.audiences)
    if (std::find(opts_.audiences.begin(), opts_.audiences.end(), a) != opts_.audiences.end())
      audience_ok = true;
  if (!audience_ok) {
    std::string want;
    for (const auto& a : opts_.audiences) want += (want.empty() ? "" : ",") + a;
    return invalidToken("token audiences are invalid for the target audiences " + want);
  }
  // The ServiceAccount must still exist with the same uid, and so must what it is bound to.
  auto sa = lookup_("serviceaccounts", c.ns, c.service_account.name);
  if (!sa || (sa->deletion_timestamp && *sa->deletion_timestamp < now - kClockLeewaySeconds))
    return invalidToken("service account " + c.ns + "/" + c.service_account.name + " has been deleted");
  if (!c.service_account.uid.empty() && sa->uid != c.service_account.uid)
    return invalidToken("service account UID (" + sa->uid + ") does not match claim (" +
                        c.service_account.uid + ")");
  if (c.secret)
    if (auto st = checkBound(lookup_, "secrets", "secret", c.ns, *c.secret, now); !st) return st.error();
  if (c.pod)
    if (auto st = checkBound(lookup_, "pods", "pod", c.ns, *c.pod, now); !st) return st.error();
  return serviceAccountUser(c);
}

}  // namespace shepherd::auth
