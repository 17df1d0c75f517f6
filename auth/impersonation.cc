#include "auth/impersonation.h"

#include <algorithm>

#include "auth/service_account_token.h"
#include "common/url.h"

namespace shepherd::auth {

namespace {

constexpr std::string_view kExtraPrefix = "impersonate-extra-";

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

Result<meta::UserInfo> impersonatedUser(const http::Request& req, const meta::UserInfo& requester,
                                        const Authorizer& authorizer) {
  std::string user;
  bool userSet = false;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
  std::string uid;
  bool uidSet = false;
  std::vector<std::string> refs;  // what was asked for, for the "without a user" message
  for (const auto& [name, value] : req.headers) {
    if (name == "impersonate-user") {
      if (!userSet) user = value;  // the first one, as Go's Header.Get
      userSet = true;
    } else if (name == "impersonate-group") {
      groups.push_back(value);
      refs.push_back("{Group  " + value + "    }");  // upstream prints ObjectReferences with %v
    } else if (name == "impersonate-uid") {
      if (uidSet) continue;
      uid = value;
      uidSet = !value.empty();  // an empty value is no request, as upstream
      if (uidSet) refs.push_back("{UID  " + value + "    }");
    } else if (name.size() > kExtraPrefix.size() && name.compare(0, kExtraPrefix.size(), kExtraPrefix) == 0) {
      std::string key = percentDecode(std::string_view(name).substr(kExtraPrefix.size()), false);
      extra[key].push_back(value);
      refs.push_back("{UserExtra  " + value + "    " + key + "}");
    }
  }
  userSet = userSet && !user.empty();  // an empty Impersonate-User is none, as upstream
  if (!userSet) {
    if (refs.empty()) return requester;
    std::string list;
    for (const auto& r : refs) list += (list.empty() ? "" : " ") + r;
    return ApiError::badRequest("requested [" + list + "] without impersonating a user");
  }

  std::vector<RequestInfo> checks;
  std::string saPrefix = kServiceAccountUserPrefix;
  bool serviceAccount = false;
  std::string saNs;
  if (user.rfind(saPrefix, 0) == 0) {
    std::string rest = user.substr(saPrefix.size());
    size_t colon = rest.find(':');
    if (colon != std::string::npos && colon > 0 && colon + 1 < rest.size() &&
        rest.find(':', colon + 1) == std::string::npos) {
      serviceAccount = true;
      saNs = rest.substr(0, colon);
      checks.push_back(resourceRequest("impersonate", "", "serviceaccounts", saNs, rest.substr(colon + 1)));
    }
  }
  if (!serviceAccount) checks.push_back(resourceRequest("impersonate", "", "users", "", user));
  for (const auto& g : groups) checks.push_back(resourceRequest("impersonate", "", "groups", "", g));
  for (const auto& [key, values] : extra)
    for (const auto& v : values)
      checks.push_back(resourceRequest("impersonate", "authentication.k8s.io", "userextras", "", v, key));
  if (uidSet) checks.push_back(resourceRequest("impersonate", "authentication.k8s.io", "uids", "", uid));
  for (const auto& c : checks) {
    Decision d = authorizer.authorize(requester, c);
    if (!d.allowed()) return forbiddenError(requester, c, d.reason);
  }

  meta::UserInfo out;
  out.name = user;
  out.uid = uid;
  out.groups = groups;
  if (groups.empty() && serviceAccount)
    out.groups = {kServiceAccountsGroup, std::string(kServiceAccountsGroup) + ":" + saNs};
  if (user == meta::kAnonymousUser) {
    if (!has(out.groups, meta::kUnauthenticatedGroup)) out.groups.push_back(meta::kUnauthenticatedGroup);
  } else if (!has(out.groups, meta::kAuthenticatedGroup) && !has(out.groups, meta::kUnauthenticatedGroup)) {
    out.groups.push_back(meta::kAuthenticatedGroup);
  }
  out.extra = std::move(extra);
  return out;
}

}  // namespace shepherd::auth
