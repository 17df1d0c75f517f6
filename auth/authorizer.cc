#include "auth/authorizer.h"

#include <algorithm>

namespace shepherd::auth {

Decision UnionAuthorizer::authorize(const UserInfo& user, const RequestInfo& request) const {
  if (std::find(user.groups.begin(), user.groups.end(), kMastersGroup) != user.groups.end())
    return {Decision::Kind::Allow, ""};
  std::string reasons;
  for (auto& a : chain_) {
    Decision d = a->authorize(user, request);
    if (d.kind != Decision::Kind::NoOpinion) return d;
    if (!d.reason.empty()) reasons += (reasons.empty() ? "" : "\n") + d.reason;
  }
  return {Decision::Kind::NoOpinion, reasons};
}

ApiError forbiddenError(const UserInfo& user, const RequestInfo& r, const std::string& reason) {
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
  ApiError e;
  e.code = 403;
  e.reason = "Forbidden";
  if (!r.resource_request || r.resource.empty()) {
    e.message = "forbidden: " + safe;
    return e;
  }
  std::string qualified = r.resource + (r.api_group.empty() ? "" : "." + r.api_group);
  e.message = r.name.empty() ? qualified + " is forbidden: " + safe
                             : qualified + " \"" + r.name + "\" is forbidden: " + safe;
  e.name = r.name;
  e.group = r.api_group;
  e.kind = r.resource;
  return e;
}

}  // namespace shepherd::auth
