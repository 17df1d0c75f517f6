// Impersonation (kubectl --as, --as-group, --as-uid), as upstream's filter: after
// authentication and before authorization, Impersonate-User / -Group / -Uid / -Extra-<key>
// headers turn the request into the named user's, provided the requester may
// "impersonate" each named user, service account, group, extra value and uid. The
// impersonated user inherits nothing of the requester.
#pragma once

#include "auth/authorizer.h"
#include "common/api_error.h"
#include "meta/user_info.h"
#include "net/http/message.h"

namespace shepherd::auth {

// The user the request acts as: `requester` itself without Impersonate-* headers; 400 for
// groups, extras or a uid without a user; 403 when a check fails.
Result<meta::UserInfo> impersonatedUser(const http::Request& req, const meta::UserInfo& requester,
                                        const Authorizer& authorizer);

}  // namespace shepherd::auth
