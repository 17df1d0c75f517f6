// The create-only review resources (authorization.k8s.io access and rules reviews,
// authentication.k8s.io SelfSubjectReview): each POST is answered at once from the
// requester and the authorizers, and nothing is stored.
#pragma once

#include <string>

#include "apis/resource.h"
#include "auth/authorizer.h"
#include "auth/rbac_policy.h"
#include "common/api_error.h"
#include "common/json.h"
#include "meta/user_info.h"

namespace shepherd::handlers {

// What a review may need of the request.
struct ReviewContext {
  const meta::UserInfo& user;                       // the requester as authenticated
  const auth::Authorizer* authorizer = nullptr;     // null: everything is allowed
  const auth::PolicySource* rbac_policy = nullptr;  // null: RBAC is not in use
};

// The answered review (JSON) for a POST of `body` to the create-only resource `r`; 404
// for a resource that is not a review.
Result<std::string> answerReview(const apis::Resource& r, json::Document& body, const ReviewContext& ctx);

}  // namespace shepherd::handlers
