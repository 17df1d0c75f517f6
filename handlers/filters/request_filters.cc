#include "handlers/filters/request_filters.h"

#include "auth/impersonation.h"
#include "auth/request_info.h"
#include "common/ids.h"
#include "handlers/request_context.h"
#include "handlers/status.h"

namespace shepherd::handlers {

void RequestInfoFilter::handle(http::Request& req, std::shared_ptr<http::Responder> resp,
                               const RequestHandler& next) const {
  requestContext(req).info = auth::requestInfo(req);
  next(req, std::move(resp));
}

void AuditFilter::handle(http::Request& req, std::shared_ptr<http::Responder> resp,
                         const RequestHandler& next) const {
  RequestContext& ctx = requestContext(req);
  auto audit = std::make_shared<AuditEvent>();
  audit->audit_id = ids::uuid4();
  audit->received = clock::now();
  audit->request_uri = req.target;
  audit->source_ip = req.remote.substr(0, req.remote.rfind(':'));
  audit->user_agent = req.header("user-agent");
  audit->info = ctx.info;
  ctx.audit = audit;
  next(req, auditingResponder(std::move(resp), log_, std::move(audit)));
}

void AuthenticationFilter::handle(http::Request& req, std::shared_ptr<http::Responder> resp,
                                  const RequestHandler& next) const {
  auto user = authenticator_.authenticate(req);
  if (!user) return resp->send(errorResponse(user.error()));
  RequestContext& ctx = requestContext(req);
  ctx.user = std::move(*user);
  if (ctx.audit) ctx.audit->user = ctx.user;
  next(req, std::move(resp));
}

void ImpersonationFilter::handle(http::Request& req, std::shared_ptr<http::Responder> resp,
                                 const RequestHandler& next) const {
  RequestContext& ctx = requestContext(req);
  auto acting = auth::impersonatedUser(req, ctx.user, authorizer_);
  if (!acting) return resp->send(errorResponse(acting.error()));
  if (ctx.audit && !req.header("impersonate-user").empty()) ctx.audit->impersonated = *acting;
  ctx.user = std::move(*acting);
  next(req, std::move(resp));
}

void AuthorizationFilter::handle(http::Request& req, std::shared_ptr<http::Responder> resp,
                                 const RequestHandler& next) const {
  RequestContext& ctx = requestContext(req);
  if (!ctx.info) ctx.info = auth::requestInfo(req);
  auth::Decision d = authorizer_.authorize(ctx.user, *ctx.info);
  if (ctx.audit) {
    ctx.audit->decision = d.allowed() ? "allow" : "forbid";
    ctx.audit->reason = d.reason;
  }
  if (!d.allowed()) return resp->send(errorResponse(auth::forbiddenError(ctx.user, *ctx.info, d.reason)));
  next(req, std::move(resp));
}

}  // namespace shepherd::handlers
