#include "auth/access_review.h"

namespace shepherd::auth {

Result<std::string> answerAccessReview(json::Document& review, const UserInfo& requester,
                                       const Authorizer* authorizer, bool self) {
  auto& a = review.GetAllocator();
  const char* kind = self ? "SelfSubjectAccessReview" : "SubjectAccessReview";
  const json::Value* spec = json::find(review, "spec");
  const json::Value* ra = spec ? json::find(*spec, "resourceAttributes") : nullptr;
  const json::Value* nra = spec ? json::find(*spec, "nonResourceAttributes") : nullptr;
  if (ra && ra->IsNull()) ra = nullptr;
  if (nra && nra->IsNull()) nra = nullptr;
  std::vector<StatusCause> causes;
  if (!ra && !nra)
    causes.push_back(
        {"FieldValueInvalid",
         "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be "
         "specified",
         "spec.resourceAttributes"});
  if (ra && nra)
    causes.push_back({"FieldValueInvalid",
                      "Invalid value: \"\": cannot be specified in combination with resourceAttributes",
                      "spec.nonResourceAttributes"});
  UserInfo user = requester;
  if (!self) {
    user = UserInfo{};
    user.name = std::string(spec ? json::getString(*spec, "user") : "");
    user.uid = std::string(spec ? json::getString(*spec, "uid") : "");
    if (const json::Value* g = spec ? json::find(*spec, "groups") : nullptr; g && g->IsArray())
      for (auto& v : g->GetArray())
        if (v.IsString()) user.groups.emplace_back(json::view(v));
    if (user.name.empty() && user.groups.empty())
      causes.push_back({"FieldValueInvalid",
                        "Invalid value: \"\": at least one of user or group must be specified", "spec.user"});
  }
  if (!causes.empty()) return ApiError::invalid("authorization.k8s.io", kind, "", causes);

  RequestInfo info;
  if (ra) {
    info.resource_request = true;
    info.namespace_ = std::string(json::getString(*ra, "namespace"));
    info.verb = std::string(json::getString(*ra, "verb"));
    info.api_group = std::string(json::getString(*ra, "group"));
    info.api_version = std::string(json::getString(*ra, "version"));
    info.resource = std::string(json::getString(*ra, "resource"));
    info.subresource = std::string(json::getString(*ra, "subresource"));
    info.name = std::string(json::getString(*ra, "name"));
  } else {
    info.path = std::string(json::getString(*nra, "path"));
    info.verb = std::string(json::getString(*nra, "verb"));
  }
  Decision d = authorizer ? authorizer->authorize(user, info) : Decision{Decision::Kind::Allow, ""};
  json::setString(review, "apiVersion", "authorization.k8s.io/v1", a);
  json::setString(review, "kind", kind, a);
  json::Value status(rapidjson::kObjectType);
  status.AddMember("allowed", d.allowed(), a);
  if (d.kind == Decision::Kind::Deny) status.AddMember("denied", true, a);
  if (!d.reason.empty()) status.AddMember("reason", json::str(d.reason, a), a);
  json::set(review, "status", std::move(status), a);
  return json::serialize(review);
}

}  // namespace shepherd::auth
