#include "apiserver/service_account_tokens.h"

#include "common/clock.h"
#include "pki/certificates.h"
#include "pki/jwt.h"

namespace shepherd::apiserver {

Result<std::unique_ptr<auth::ServiceAccountTokens>> serviceAccountTokens(const Options& options,
                                                                         registry::Registry& reg) {
  auth::ServiceAccountTokenOptions o;
  o.issuers = options.service_account_issuers;
  o.audiences = options.api_audiences;
  o.max_expiration_seconds = options.service_account_max_token_expiration_seconds;
  o.extend_expiration = options.service_account_extend_token_expiration;
  std::string signingFile = options.service_account_signing_key_file;
  if (signingFile.empty()) signingFile = options.certDir() + "/sa.key";
  auto signingPem = pki::readFile(signingFile);
  if (!signingPem) return ApiError::badRequest("cannot read the service account signing key " + signingFile);
  auto signer = pki::JwtSigner::fromPem(*signingPem);
  if (!signer)
    return ApiError::badRequest("failed to parse service-account-issuer-key-file: " + signer.error().message);
  pki::JwtVerifier verifier;
  std::vector<std::string> keyFiles = options.service_account_key_files;
  if (keyFiles.empty()) keyFiles.push_back(signingFile);
  for (const auto& f : keyFiles) {
    auto pem = pki::readFile(f);
    if (!pem) return ApiError::badRequest("cannot read --service-account-key-file " + f);
    if (auto st = verifier.addKeys(*pem); !st) return ApiError::badRequest(f + ": " + st.error().message);
  }
  auth::ObjectLookup lookup = [&reg](std::string_view resource, const std::string& ns,
                                     const std::string& name) -> std::optional<auth::LiveObject> {
    registry::Store* store = reg.store("", "v1", std::string(resource));
    if (!store) return std::nullopt;
    auto obj = store->get(ns, name);
    if (!obj) return std::nullopt;
    json::Document d;
    d.Parse(obj.value()->json.data(), obj.value()->json.size());
    auth::LiveObject live;
    live.uid = json::getStringPath(d, {"metadata", "uid"});
    if (auto t = clock::parseRfc3339(json::getStringPath(d, {"metadata", "deletionTimestamp"})))
      live.deletion_timestamp =
          std::chrono::duration_cast<std::chrono::seconds>(t->time_since_epoch()).count();
    return live;
  };
  return std::make_unique<auth::ServiceAccountTokens>(std::move(o), std::move(*signer), std::move(verifier),
                                                      std::move(lookup));
}

}  // namespace shepherd::apiserver
