// The audit log (--audit-log-path): one audit.k8s.io/v1 Event per request as a JSON line,
// at level Metadata — who (user, impersonated user, source IP, user agent), what (verb,
// object reference, URI), the authorization decision and the response code. Upstream
// writes nothing without a policy file; ours is upstream's "Metadata for everything,
// omitStages: [RequestReceived]": one line when the response completes, or when a
// long-running response (a watch) starts.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "auth/request_info.h"
#include "common/api_error.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "meta/user_info.h"
#include "net/http/message.h"

namespace shepherd::handlers {

// What is known of one request as it passes authentication and authorization.
struct AuditEvent {
  std::string audit_id;
  clock::TimePoint received;
  std::string request_uri, source_ip, user_agent;
  meta::UserInfo user;  // as authenticated
  std::optional<meta::UserInfo> impersonated;
  std::optional<auth::RequestInfo> info;
  std::string decision, reason;  // authorization: "allow" / "forbid"
};

// Thread-safety: write() from any thread (one locked write + flush per line): mu_ guards
// the stream out_ points to; out_ and owned_ are set by open() and not changed.
class AuditLog {
 public:
  // "-" is standard output.
  static Result<std::unique_ptr<AuditLog>> open(const std::string& path);
  ~AuditLog();
  void write(const AuditEvent& e, const std::string& stage, int code, const std::string& status_body);

 private:
  Mutex mu_;
  FILE* out_ PT_GUARDED_BY(mu_) = nullptr;
  bool owned_ = false;
};

// Wraps `inner` so that the response's code goes to `log` with what `event` holds by then.
std::shared_ptr<http::Responder> auditingResponder(std::shared_ptr<http::Responder> inner, AuditLog& log,
                                                   std::shared_ptr<AuditEvent> event);

}  // namespace shepherd::handlers
