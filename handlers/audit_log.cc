#include "handlers/audit_log.h"

#include "common/json.h"

namespace shepherd::handlers {

namespace {

json::Value userJson(const meta::UserInfo& u, json::Allocator& a) {
  json::Value v(rapidjson::kObjectType);
  if (!u.name.empty()) json::setString(v, "username", u.name, a);
  if (!u.uid.empty()) json::setString(v, "uid", u.uid, a);
  if (!u.groups.empty()) {
    json::Value g(rapidjson::kArrayType);
    for (const auto& s : u.groups) g.PushBack(json::str(s, a), a);
    json::set(v, "groups", std::move(g), a);
  }
  if (!u.extra.empty()) {
    json::Value x(rapidjson::kObjectType);
    for (const auto& [k, vals] : u.extra) {
      json::Value l(rapidjson::kArrayType);
      for (const auto& s : vals) l.PushBack(json::str(s, a), a);
      json::set(x, k, std::move(l), a);
    }
    json::set(v, "extra", std::move(x), a);
  }
  return v;
}

// Header and URI bytes as sent may be anything: keep each line valid JSON (UTF-8) by
// replacing control and non-ASCII bytes.
std::string printable(std::string s) {
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return s;
}

class AuditingResponder final : public http::Responder {
 public:
  AuditingResponder(std::shared_ptr<http::Responder> inner, AuditLog& log, std::shared_ptr<AuditEvent> e)
      : inner_(std::move(inner)), log_(log), event_(std::move(e)) {}
  void send(http::Response r) override {
    log_.write(*event_, "ResponseComplete", r.status, r.status >= 400 ? r.body : "");
    inner_->send(std::move(r));
  }
  std::shared_ptr<http::StreamWriter> startStream(int status, http::Headers headers) override {
    log_.write(*event_, "ResponseStarted", status, "");
    return inner_->startStream(status, std::move(headers));
  }
  void upgrade(http::Response r, std::function<void(std::shared_ptr<http::ByteStream>)> fn) override {
    log_.write(*event_, "ResponseStarted", r.status, "");
    inner_->upgrade(std::move(r), std::move(fn));
  }

 private:
  std::shared_ptr<http::Responder> inner_;
  AuditLog& log_;
  std::shared_ptr<AuditEvent> event_;
};

}  // namespace

Result<std::unique_ptr<AuditLog>> AuditLog::open(const std::string& path) {
  auto log = std::make_unique<AuditLog>();
  if (path == "-") {
    log->out_ = stdout;
    return log;
  }
  log->out_ = std::fopen(path.c_str(), "a");
  if (!log->out_) return ApiError::internal("cannot open the audit log " + path);
  log->owned_ = true;
  return log;
}

AuditLog::~AuditLog() {
  if (owned_ && out_) std::fclose(out_);
}

void AuditLog::write(const AuditEvent& e, const std::string& stage, int code,
                     const std::string& status_body) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  json::setString(d, "kind", "Event", a);
  json::setString(d, "apiVersion", "audit.k8s.io/v1", a);
  json::setString(d, "level", "Metadata", a);
  json::setString(d, "auditID", e.audit_id, a);
  json::setString(d, "stage", stage, a);
  json::setString(d, "requestURI", printable(e.request_uri), a);
  std::string verb;
  if (e.info) verb = e.info->verb;
  json::setString(d, "verb", verb, a);
  json::set(d, "user", userJson(e.user, a), a);
  if (e.impersonated) json::set(d, "impersonatedUser", userJson(*e.impersonated, a), a);
  json::Value ips(rapidjson::kArrayType);
  ips.PushBack(json::str(e.source_ip, a), a);
  json::set(d, "sourceIPs", std::move(ips), a);
  if (!e.user_agent.empty())
    json::setString(d, "userAgent",
                    e.user_agent.size() > 1024 ? printable(e.user_agent.substr(0, 1024)) + "...TRUNCATED"
                                               : printable(e.user_agent),
                    a);
  if (e.info && e.info->resource_request) {
    json::Value ref(rapidjson::kObjectType);
    const auto& i = *e.info;
    if (!i.resource.empty()) json::setString(ref, "resource", i.resource, a);
    if (!i.namespace_.empty()) json::setString(ref, "namespace", i.namespace_, a);
    if (!i.name.empty()) json::setString(ref, "name", i.name, a);
    if (!i.api_group.empty()) json::setString(ref, "apiGroup", i.api_group, a);
    if (!i.api_version.empty()) json::setString(ref, "apiVersion", i.api_version, a);
    if (!i.subresource.empty()) json::setString(ref, "subresource", i.subresource, a);
    json::set(d, "objectRef", std::move(ref), a);
  }
  json::Value st(rapidjson::kObjectType);
  json::set(st, "metadata", json::Value(rapidjson::kObjectType), a);
  if (code >= 400) {
    // Errors copy status and reason from the Status body (never its message), as upstream.
    json::Document body;
    if (!status_body.empty() && json::parse(status_body, body) && body.IsObject()) {
      if (auto s = json::getString(body, "status"); !s.empty()) json::setString(st, "status", s, a);
      if (auto r = json::getString(body, "reason"); !r.empty()) json::setString(st, "reason", r, a);
    }
  }
  json::set(st, "code", json::Value(code), a);
  json::set(d, "responseStatus", std::move(st), a);
  json::setString(d, "requestReceivedTimestamp", clock::rfc3339Micro(e.received), a);
  json::setString(d, "stageTimestamp", clock::rfc3339Micro(clock::now()), a);
  if (!e.decision.empty()) {
    json::Value ann(rapidjson::kObjectType);
    json::setString(ann, "authorization.k8s.io/decision", e.decision, a);
    json::setString(ann, "authorization.k8s.io/reason", e.reason, a);
    json::set(d, "annotations", std::move(ann), a);
  }
  std::string line = json::serialize(d);
  line += '\n';
  MutexLock g(mu_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

std::shared_ptr<http::Responder> auditingResponder(std::shared_ptr<http::Responder> inner, AuditLog& log,
                                                   std::shared_ptr<AuditEvent> event) {
  return std::make_shared<AuditingResponder>(std::move(inner), log, std::move(event));
}

}  // namespace shepherd::handlers
