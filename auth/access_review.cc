#include "auth/access_review.h"

#include <algorithm>

#include "auth/rbac_escalation.h"

namespace shepherd::auth {

Result<std::string> answerAccessReview(json::Document& review, const meta::UserInfo& requester,
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
  meta::UserInfo user = requester;
  if (!self) {
    user = meta::UserInfo{};
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

Result<std::string> answerRulesReview(json::Document& review, const meta::UserInfo& requester,
                                      const PolicySource* policy, bool other_authorizers) {
  auto& a = review.GetAllocator();
  std::string ns(json::getStringPath(review, {"spec", "namespace"}));
  std::vector<PolicyRule> rules;
  bool incomplete = other_authorizers;
  if (std::find(requester.groups.begin(), requester.groups.end(), meta::kMastersGroup) !=
      requester.groups.end()) {
    rules = {PolicyRule{{"*"}, {"*"}, {"*"}, {}, {}}, PolicyRule{{"*"}, {}, {}, {}, {"*"}}};
  } else if (policy) {
    if (auto snapshot = policy->current()) rules = rulesFor(*snapshot, requester, ns);
  } else {
    incomplete = true;
  }
  auto strings = [&](const std::vector<std::string>& v) {
    json::Value arr(rapidjson::kArrayType);
    for (const auto& s : v) arr.PushBack(json::str(s, a), a);
    return arr;
  };
  json::Value resourceRules(rapidjson::kArrayType), nonResourceRules(rapidjson::kArrayType);
  for (const auto& r : rules) {
    json::Value v(rapidjson::kObjectType);
    json::set(v, "verbs", strings(r.verbs), a);
    if (!r.non_resource_urls.empty()) {
      json::set(v, "nonResourceURLs", strings(r.non_resource_urls), a);
      nonResourceRules.PushBack(v, a);
      continue;
    }
    json::set(v, "apiGroups", strings(r.api_groups), a);
    json::set(v, "resources", strings(r.resources), a);
    if (!r.resource_names.empty()) json::set(v, "resourceNames", strings(r.resource_names), a);
    resourceRules.PushBack(v, a);
  }
  json::setString(review, "apiVersion", "authorization.k8s.io/v1", a);
  json::setString(review, "kind", "SelfSubjectRulesReview", a);
  json::Value status(rapidjson::kObjectType);
  json::set(status, "resourceRules", std::move(resourceRules), a);
  json::set(status, "nonResourceRules", std::move(nonResourceRules), a);
  json::set(status, "incomplete", json::Value(incomplete), a);
  if (other_authorizers)
    json::setString(status, "evaluationError", "node authorizer does not support user rule resolution", a);
  json::set(review, "status", std::move(status), a);
  return json::serialize(review);
}

}  // namespace shepherd::auth
