#include "handlers/status.h"

namespace shepherd::handlers {

void writeStatus(const ApiError& e, json::Value& out, json::Allocator& a) {
  out.SetObject();
  out.AddMember("kind", "Status", a);
  out.AddMember("apiVersion", "v1", a);
  out.AddMember("metadata", json::Value(rapidjson::kObjectType), a);
  out.AddMember("status", "Failure", a);
  out.AddMember("message", json::str(e.message, a), a);
  out.AddMember("reason", json::str(e.reason, a), a);
  bool details = !e.name.empty() || !e.kind.empty() || !e.causes.empty() || e.retry_after_seconds;
  if (details) {
    json::Value d(rapidjson::kObjectType);
    if (!e.name.empty()) d.AddMember("name", json::str(e.name, a), a);
    if (!e.group.empty()) d.AddMember("group", json::str(e.group, a), a);
    if (!e.kind.empty()) d.AddMember("kind", json::str(e.kind, a), a);
    if (!e.uid.empty()) d.AddMember("uid", json::str(e.uid, a), a);
    if (!e.causes.empty()) {
      json::Value causes(rapidjson::kArrayType);
      for (const auto& c : e.causes) {
        json::Value cv(rapidjson::kObjectType);
        if (!c.type.empty()) cv.AddMember("reason", json::str(c.type, a), a);
        cv.AddMember("message", json::str(c.message, a), a);
        if (!c.field.empty()) cv.AddMember("field", json::str(c.field, a), a);
        causes.PushBack(cv, a);
      }
      d.AddMember("causes", causes, a);
    }
    if (e.retry_after_seconds) d.AddMember("retryAfterSeconds", *e.retry_after_seconds, a);
    out.AddMember("details", d, a);
  }
  out.AddMember("code", e.code, a);
}

std::string statusJson(const ApiError& e) {
  json::Document d;
  writeStatus(e, d, d.GetAllocator());
  return json::serialize(d);
}

http::Response errorResponse(const ApiError& e) {
  http::Response r;
  r.status = e.code;
  r.headers.emplace_back("Content-Type", "application/json");
  if (e.retry_after_seconds) r.headers.emplace_back("Retry-After", std::to_string(*e.retry_after_seconds));
  r.body = statusJson(e);
  return r;
}

std::string successStatusJson(const std::string& group, const std::string& kind, const std::string& name,
                              const std::string& uid) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  d.AddMember("kind", "Status", a);
  d.AddMember("apiVersion", "v1", a);
  d.AddMember("metadata", json::Value(rapidjson::kObjectType), a);
  d.AddMember("status", "Success", a);
  json::Value det(rapidjson::kObjectType);
  det.AddMember("name", json::str(name, a), a);
  if (!group.empty()) det.AddMember("group", json::str(group, a), a);
  det.AddMember("kind", json::str(kind, a), a);
  if (!uid.empty()) det.AddMember("uid", json::str(uid, a), a);
  d.AddMember("details", det, a);
  return json::serialize(d);
}

std::string warningHeader(const std::string& text) {
  std::string esc;
  for (char c : text) {
    if (c == '"' || c == '\\') esc += '\\';
    esc += c;
  }
  return "299 - \"" + esc + "\"";
}

}  // namespace shepherd::handlers
