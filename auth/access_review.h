// SelfSubjectAccessReview and SubjectAccessReview (authorization.k8s.io/v1): the
// authorizer's answer to "may this user do this?", computed when the review is created.
#pragma once

#include <string>

#include "auth/authorizer.h"
#include "auth/rbac_policy.h"
#include "common/api_error.h"
#include "common/json.h"

namespace shepherd::auth {

// Fills `review.status` for `user` (the requester for a self review; spec.user/groups
// otherwise, when `self` is false) and returns the review; 422 for a spec without exactly
// one of resourceAttributes and nonResourceAttributes (or, not self, without a user or group).
Result<std::string> answerAccessReview(json::Document& review, const meta::UserInfo& requester,
                                       const Authorizer* authorizer, bool self);

// SelfSubjectRulesReview (kubectl auth can-i --list): the RBAC rules the requester holds
// in spec.namespace. system:masters holds everything; rules other authorizers grant (Node)
// are not listed, so the answer is then marked incomplete, as upstream's.
Result<std::string> answerRulesReview(json::Document& review, const meta::UserInfo& requester,
                                      const PolicySource* policy, bool other_authorizers);

}  // namespace shepherd::auth
