#include "auth/authorizer.h"

#include <algorithm>

namespace shepherd::auth {

Decision UnionAuthorizer::authorize(const meta::UserInfo& user, const RequestInfo& request) const {
  if (std::find(user.groups.begin(), user.groups.end(), meta::kMastersGroup) != user.groups.end())
    return {Decision::Kind::Allow, ""};
  std::string reasons;
  for (auto& a : chain_) {
    Decision d = a->authorize(user, request);
    if (d.kind != Decision::Kind::NoOpinion) return d;
    if (!d.reason.empty()) reasons += (reasons.empty() ? "" : "\n") + d.reason;
  }
  return {Decision::Kind::NoOpinion, reasons};
}

ApiError forbiddenError(const meta::UserInfo& user, const RequestInfo& r, const std::string& reason) {
  std::string msg;
  if (!r.resource_request) {
    msg = "User \"" + user.name + "\" cannot " + r.verb + " path \"" + r.path + "\"";
  } else {
    std::string resource = r.resource + (r.subresource.empty() ? "" : "/" + r.subresource);
    msg = "User \"" + user.name + "\" cannot " + r.verb + " resource \"" + resource + "\" in API group \"" +
          r.api_group + "\"" +
          (r.namespace_.empty() ? " at the cluster scope" : " in the namespace \"" + r.namespace_ + "\"");
  }
  if (!reason.empty()) msg += ": " + reason;
  std::string safe;
  for (char c : msg) {
    if (c == '&')
      safe += "&amp;";
    else if (c == '<')
      safe += "&lt;";
    else if (c == '>')
      safe += "&gt;";
    else
      safe += c;
  }
  if (!r.resource_request) return ApiError::forbidden("", "", "", safe);
  return ApiError::forbidden(r.api_group, r.resource, r.name, safe);
}

}  // namespace shepherd::auth
