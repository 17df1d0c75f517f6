#include "handlers/reviews.h"

#include "auth/access_review.h"
#include "auth/node_authorizer.h"

namespace shepherd::handlers {

namespace {

// SelfSubjectReview: the requester as authenticated (kubectl auth whoami).
std::string selfSubjectReview(json::Document& body, const meta::UserInfo& user) {
  auto& a = body.GetAllocator();
  json::setString(body, "apiVersion", "authentication.k8s.io/v1", a);
  json::setString(body, "kind", "SelfSubjectReview", a);
  json::Value info(rapidjson::kObjectType);
  json::setString(info, "username", user.name, a);
  if (!user.uid.empty()) json::setString(info, "uid", user.uid, a);
  json::Value groups(rapidjson::kArrayType);
  for (auto& g : user.groups) groups.PushBack(json::str(g, a), a);
  if (!groups.Empty()) json::set(info, "groups", std::move(groups), a);
  if (!user.extra.empty()) {
    json::Value extra(rapidjson::kObjectType);
    for (auto& [k, vs] : user.extra) {
      json::Value list(rapidjson::kArrayType);
      for (auto& v : vs) list.PushBack(json::str(v, a), a);
      json::set(extra, k, std::move(list), a);
    }
    json::set(info, "extra", std::move(extra), a);
  }
  json::Value status(rapidjson::kObjectType);
  json::set(status, "userInfo", std::move(info), a);
  json::set(body, "status", std::move(status), a);
  return json::serialize(body);
}

}  // namespace

Result<std::string> answerReview(const apis::Resource& r, json::Document& body, const ReviewContext& ctx) {
  if (r.group == "authorization.k8s.io") {
    if (r.plural == "selfsubjectaccessreviews")
      return auth::answerAccessReview(body, ctx.user, ctx.authorizer, true);
    if (r.plural == "subjectaccessreviews")
      return auth::answerAccessReview(body, ctx.user, ctx.authorizer, false);
    if (r.plural == "selfsubjectrulesreviews") {
      // Rules of authorizers other than RBAC (the Node authorizer) are not listed.
      bool others = auth::nodeNameOf(ctx.user) != "";
      return auth::answerRulesReview(body, ctx.user, ctx.rbac_policy, others);
    }
  }
  if (r.group == "authentication.k8s.io" && r.plural == "selfsubjectreviews")
    return selfSubjectReview(body, ctx.user);
  return ApiError::make(404, "NotFound", "the server could not find the requested resource");
}

}  // namespace shepherd::handlers
