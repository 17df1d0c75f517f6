#include "handlers/request_context.h"

namespace shepherd::handlers {

RequestContext& requestContext(http::Request& req) {
  if (auto* c = std::any_cast<RequestContext>(&req.context)) return *c;
  req.context = RequestContext{};
  return *std::any_cast<RequestContext>(&req.context);
}

const meta::UserInfo& requestUser(const http::Request& req) {
  static const meta::UserInfo kNobody;
  const auto* c = std::any_cast<RequestContext>(&req.context);
  return c ? c->user : kNobody;
}

}  // namespace shepherd::handlers
