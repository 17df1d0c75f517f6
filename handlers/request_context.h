// What the request pipeline learns about a request, kept in its per-request slot
// (http::Request::context): what it asks (RequestInfo), who asks (after authentication,
// then impersonation) and its audit event. The filters fill it; authorization, admission,
// audit and the handlers read it.
#pragma once

#include <memory>
#include <optional>

#include "auth/request_info.h"
#include "handlers/audit_log.h"
#include "meta/user_info.h"
#include "net/http/message.h"

namespace shepherd::handlers {

struct RequestContext {
  std::optional<auth::RequestInfo> info;
  meta::UserInfo user;                // empty until authenticated
  std::shared_ptr<AuditEvent> audit;  // null: not audited
};

// The request's context, made on first use.
RequestContext& requestContext(http::Request& req);
// The request's user; an empty (unauthenticated) user when none was set.
const meta::UserInfo& requestUser(const http::Request& req);

}  // namespace shepherd::handlers
