// metav1.Status responses: every error a client can cause is answered this way.
#pragma once

#include <string>

#include "common/api_error.h"
#include "common/json.h"
#include "net/http/message.h"

namespace shepherd::handlers {

void writeStatus(const ApiError& e, json::Value& out, json::Allocator& a);
std::string statusJson(const ApiError& e);
http::Response errorResponse(const ApiError& e);
// A Success Status (e.g. for a DELETE of a kind that does not return the object).
std::string successStatusJson(const std::string& group, const std::string& kind, const std::string& name,
                              const std::string& uid);
// The value of a "Warning" response header for `text` (code 299, as upstream).
std::string warningHeader(const std::string& text);

}  // namespace shepherd::handlers
