// serviceaccounts/token (POST .../serviceaccounts/{name}/token): TokenRequest, how
// `kubectl create token` gets a bound, expiring ServiceAccount token. The steps, checks and
// messages follow upstream's TokenREST: name/namespace must match the URL, the
// ServiceAccount must exist, expirationSeconds defaults to 1 h and lies in [10 min, 2^32 s],
// a bound Pod or Secret must exist (and match a given uid), the max-expiration flag shortens
// with a warning, and pod-bound 3607 s requests get upstream's one-year extension.
#include <algorithm>

#include "apis/schema.h"
#include "auth/service_account_token.h"
#include "common/clock.h"
#include "common/ids.h"
#include "handlers/negotiation.h"
#include "handlers/rest_handler.h"
#include "handlers/status.h"

namespace shepherd::handlers {

namespace {

constexpr int64_t kMinExpirationSeconds = 600;
constexpr int64_t kMaxExpirationSeconds = 1LL << 32;

ApiError invalidRequest(const std::string& field, const std::string& detail) {
  return ApiError::invalid("authentication.k8s.io", "TokenRequest", "",
                           {{"FieldValueInvalid", detail, field}});
}

std::string uidOf(const registry::ObjectPtr& o) {
  json::Document d;
  d.Parse(o->json.data(), o->json.size());
  return std::string(json::getStringPath(d, {"metadata", "uid"}));
}

// What is checked before anything is looked up: the kind, the types, and that a name or
// namespace in the body matches the URL's.
Status checkRequest(json::Document& body, const RequestScope& s) {
  std::string_view kind = json::getString(body, "kind");
  if (!kind.empty() && kind != "TokenRequest")
    return ApiError::badRequest("the kind in the data (" + std::string(kind) +
                                ") does not match the expected kind (TokenRequest)");
  const auto& schemas = apis::SchemaRegistry::instance();
  if (const apis::SchemaNode* root = schemas.definition("io.k8s.api.authentication.v1.TokenRequest")) {
    std::vector<apis::SchemaFinding> findings;
    schemas.check(body, root, findings);
    for (const auto& f : findings)
      if (f.kind == apis::SchemaFinding::Kind::TypeMismatch)
        return ApiError::badRequest("TokenRequest in version \"v1\" cannot be handled as a TokenRequest: " +
                                    f.message);
  }
  json::ensureObject(body, "metadata", body.GetAllocator());
  const json::Value& meta = *json::find(body, "metadata");
  std::string bodyName(json::getString(meta, "name"));
  std::string bodyNs(json::getString(meta, "namespace"));
  if (!bodyName.empty() && bodyName != s.name)
    return ApiError::invalid(
        "authentication.k8s.io", "TokenRequest", bodyName,
        {{"FieldValueInvalid",
          "Invalid value: \"" + bodyName + "\": must match the service account name if specified",
          "metadata.name"}});
  if (!bodyNs.empty() && bodyNs != s.ns)
    return ApiError::invalid(
        "authentication.k8s.io", "TokenRequest", s.name,
        {{"FieldValueInvalid",
          "Invalid value: \"" + bodyNs + "\": must match the service account namespace if specified",
          "metadata.namespace"}});
  return okStatus();
}

// spec.audiences (the API's when none are asked for, written back into the spec).
std::vector<std::string> audiencesOf(json::Value& spec, const auth::ServiceAccountTokenOptions& opts,
                                     json::Allocator& a) {
  std::vector<std::string> audiences;
  if (const json::Value* aud = json::find(spec, "audiences"); aud && aud->IsArray())
    for (const auto& v : aud->GetArray())
      if (v.IsString()) audiences.emplace_back(json::view(v));
  if (audiences.empty()) {
    audiences = opts.audiences;
    json::Value list(rapidjson::kArrayType);
    for (const auto& s : audiences) list.PushBack(json::str(s, a), a);
    json::set(spec, "audiences", std::move(list), a);
  }
  return audiences;
}

// spec.expirationSeconds: 1 h by default, within [10 min, 2^32 s].
Result<int64_t> expirationOf(const json::Value& spec) {
  const json::Value* requested = json::find(spec, "expirationSeconds");
  if (requested && !requested->IsNull() && !requested->IsInt64())
    return ApiError::badRequest(
        "TokenRequest in version \"v1\" cannot be handled as a TokenRequest: spec.expirationSeconds: not an "
        "int64");
  int64_t seconds = json::getInt(spec, "expirationSeconds").value_or(3600);
  if (seconds < kMinExpirationSeconds)
    return invalidRequest("spec.expirationSeconds", "Invalid value: " + std::to_string(seconds) +
                                                        ": may not specify a duration less than 10 minutes");
  if (seconds > kMaxExpirationSeconds)
    return invalidRequest("spec.expirationSeconds",
                          "Invalid value: " + std::to_string(seconds) +
                              ": may not specify a duration larger than 2^32 seconds");
  return seconds;
}

// spec.boundObjectRef: the Pod or Secret the token is bound to must exist (and be this one
// if a uid is given); a pod-bound token also names the pod's node.
Status bindToObject(const json::Value& ref, const RequestScope& s, registry::Registry& registry,
                    auth::TokenClaims& claims) {
  std::string refKind(json::getString(ref, "kind"));
  std::string refName(json::getString(ref, "name"));
  std::string refUid(json::getString(ref, "uid"));
  std::string refVersion(json::getString(ref, "apiVersion"));
  std::string group =
      refVersion.find('/') == std::string::npos ? "" : refVersion.substr(0, refVersion.find('/'));
  if (group.empty() && refKind == "Node")
    return ApiError::badRequest(
        "cannot bind token to a Node object as the \"ServiceAccountTokenNodeBinding\" feature-gate is "
        "disabled");
  if (!group.empty() || (refKind != "Pod" && refKind != "Secret"))
    return ApiError::badRequest("cannot bind token to object of type " + refVersion + ", Kind=" + refKind);
  registry::Store* store = registry.store("", "v1", refKind == "Pod" ? "pods" : "secrets");
  if (!store) return ApiError::internal("no store for " + refKind);
  auto bound = store->get(s.ns, refName);
  if (!bound) return bound.error();
  json::Document obj;
  obj.Parse(bound.value()->json.data(), bound.value()->json.size());
  std::string liveUid(json::getStringPath(obj, {"metadata", "uid"}));
  if (refKind == "Pod" && json::getStringPath(obj, {"spec", "serviceAccountName"}) != s.name)
    return ApiError::badRequest("cannot bind token for serviceaccount \"" + s.name +
                                "\" to pod running with different serviceaccount name.");
  if (!refUid.empty() && refUid != liveUid)
    return ApiError::conflict(
        "", refKind, refName,
        "the UID in the bound object reference (" + refUid +
            ") does not match the UID in record. The object might have been deleted and "
            "then recreated");
  if (refKind != "Pod") {
    claims.secret = auth::ObjectClaim{refName, liveUid};
    return okStatus();
  }
  claims.pod = auth::ObjectClaim{refName, liveUid};
  // As upstream (ServiceAccountTokenPodNodeInfo): a pod-bound token names the pod's node.
  if (std::string_view node = json::getStringPath(obj, {"spec", "nodeName"}); !node.empty()) {
    auth::ObjectClaim n{std::string(node), ""};
    if (registry::Store* nodes = registry.store("", "v1", "nodes"))
      if (auto live = nodes->get("", n.name)) n.uid = uidOf(live.value());
    claims.node = n;
  }
  return okStatus();
}

// The token's lifetime: shortened to --service-account-max-token-expiration (with a
// warning), and pod-bound 3607 s tokens for the API's audiences last a year with a
// warnafter claim (upstream's safe transition). Returns the warnings.
std::vector<std::string> setLifetime(int64_t& seconds, int64_t now, const std::vector<std::string>& audiences,
                                     const auth::ServiceAccountTokenOptions& opts,
                                     auth::TokenClaims& claims) {
  std::vector<std::string> warnings;
  if (opts.max_expiration_seconds > 0 && seconds > opts.max_expiration_seconds) {
    warnings.push_back("requested expiration of " + std::to_string(seconds) + " seconds shortened to " +
                       std::to_string(opts.max_expiration_seconds) + " seconds");
    seconds = opts.max_expiration_seconds;
  }
  claims.expires = now + seconds;
  bool audiencesAreApi = true;
  for (const auto& aud : audiences)
    if (std::find(opts.audiences.begin(), opts.audiences.end(), aud) == opts.audiences.end())
      audiencesAreApi = false;
  if (opts.extend_expiration && claims.pod && seconds == auth::kWarnOnlyExpirationSeconds &&
      audiencesAreApi) {
    claims.warn_after = claims.expires;
    claims.expires = now + auth::kExtendedExpirationSeconds;
  }
  return warnings;
}

}  // namespace

void RestHandler::createToken(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                              const RequestScope& s) {
  auto fail = [&resp](const ApiError& e) { resp->send(errorResponse(e)); };
  if (req.method != "POST")
    return fail(ApiError::methodNotSupported("", "serviceaccounts/token", req.method));
  if (!service_account_tokens_)
    return fail(ApiError::make(404, "NotFound", "the server could not find the requested resource"));
  auto fmt = negotiateOutput(req, false);
  if (!fmt) return fail(fmt.error());
  json::Document body;
  if (auto st = decodeBody(req, body); !st) return fail(st.error());
  if (!body.IsObject()) return fail(ApiError::badRequest("the request body must be a TokenRequest"));
  // Admission sees the TokenRequest as the object created (NodeRestriction: a node's
  // tokens must be bound to its own pods).
  if (auto st = admissionFor(req, s, false).admit(admission::Operation::Create, body, nullptr); !st)
    return fail(st.error());
  if (auto st = checkRequest(body, s); !st) return fail(st.error());
  auto sa = s.store->get(s.ns, s.name);
  if (!sa) return fail(sa.error());

  const auth::ServiceAccountTokenOptions& opts = service_account_tokens_->options();
  auto& a = body.GetAllocator();
  json::Value& spec = json::ensureObject(body, "spec", a);
  std::vector<std::string> audiences = audiencesOf(spec, opts, a);
  auto seconds = expirationOf(spec);
  if (!seconds) return fail(seconds.error());
  auto now = clock::now();
  int64_t nowSec = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  auth::TokenClaims claims;
  claims.ns = s.ns;
  claims.service_account = {s.name, uidOf(sa.value())};
  claims.audiences = audiences;
  claims.issued_at = claims.not_before = nowSec;
  claims.jti = ids::uuid4();
  if (const json::Value* ref = json::find(spec, "boundObjectRef"); ref && ref->IsObject())
    if (auto st = bindToObject(*ref, s, registry_, claims); !st) return fail(st.error());
  std::vector<std::string> warnings = setLifetime(*seconds, nowSec, audiences, opts, claims);
  json::set(spec, "expirationSeconds", json::Value(*seconds), a);
  auto token = service_account_tokens_->issue(claims);
  if (!token) return fail(token.error());

  // Adding members to `body` may move its other members: look metadata up afresh.
  json::setString(body, "kind", "TokenRequest", a);
  json::setString(body, "apiVersion", "authentication.k8s.io/v1", a);
  json::Value status(rapidjson::kObjectType);
  json::setString(status, "token", *token, a);
  json::setString(status, "expirationTimestamp", clock::rfc3339(now + std::chrono::seconds(*seconds)), a);
  json::set(body, "status", std::move(status), a);
  json::Value& outMeta = *json::find(body, "metadata");
  json::setString(outMeta, "name", s.name, a);
  json::setString(outMeta, "namespace", s.ns, a);
  json::setString(outMeta, "creationTimestamp", clock::rfc3339(now), a);
  http::Response r;
  r.status = 201;
  r.headers.emplace_back("Content-Type", contentTypeOf(*fmt));
  for (const auto& w : warnings) r.headers.emplace_back("Warning", warningHeader(w));
  r.body = encode(body, *fmt);
  resp->send(std::move(r));
}

}  // namespace shepherd::handlers
