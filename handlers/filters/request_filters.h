// The filters of the API server's pipeline (handlers/filters/filter.h), outermost first.
#pragma once

#include "auth/authenticator.h"
#include "auth/authorizer.h"
#include "handlers/audit_log.h"
#include "handlers/filters/filter.h"

namespace shepherd::handlers {

// What the request asks (verb, resource, namespace, name), derived once for the others.
class RequestInfoFilter final : public Filter {
 public:
  void handle(http::Request& req, std::shared_ptr<http::Responder> resp,
              const RequestHandler& next) const override;
};

// One audit line per request (--audit-log-path): the responder is wrapped so the answer's
// code is recorded with what the later filters learnt.
class AuditFilter final : public Filter {
 public:
  explicit AuditFilter(AuditLog& log) : log_(log) {}
  void handle(http::Request& req, std::shared_ptr<http::Responder> resp,
              const RequestHandler& next) const override;

 private:
  AuditLog& log_;
};

// The requester from its credentials; offered credentials that fail are 401.
class AuthenticationFilter final : public Filter {
 public:
  explicit AuthenticationFilter(const auth::Authenticator& a) : authenticator_(a) {}
  void handle(http::Request& req, std::shared_ptr<http::Responder> resp,
              const RequestHandler& next) const override;

 private:
  const auth::Authenticator& authenticator_;
};

// Impersonate-* headers: the acting user, once `impersonate` is allowed for each part.
class ImpersonationFilter final : public Filter {
 public:
  explicit ImpersonationFilter(const auth::Authorizer& a) : authorizer_(a) {}
  void handle(http::Request& req, std::shared_ptr<http::Responder> resp,
              const RequestHandler& next) const override;

 private:
  const auth::Authorizer& authorizer_;
};

// 403 unless an authorizer allows the request.
class AuthorizationFilter final : public Filter {
 public:
  explicit AuthorizationFilter(const auth::Authorizer& a) : authorizer_(a) {}
  void handle(http::Request& req, std::shared_ptr<http::Responder> resp,
              const RequestHandler& next) const override;

 private:
  const auth::Authorizer& authorizer_;
};

}  // namespace shepherd::handlers
