// The user a request acts as: authentication sets it (impersonation may replace it) in
// the request's per-request slot; authorization, admission, audit and the handlers read it.
#pragma once

#include "meta/user_info.h"
#include "net/http/message.h"

namespace shepherd::handlers {

// The request's user; an empty (unauthenticated) user when none was set.
inline const meta::UserInfo& requestUser(const http::Request& req) {
  static const meta::UserInfo kNobody;
  const auto* u = std::any_cast<meta::UserInfo>(&req.context);
  return u ? *u : kNobody;
}

inline void setRequestUser(http::Request& req, meta::UserInfo user) {
  req.context = std::move(user);
}

}  // namespace shepherd::handlers
