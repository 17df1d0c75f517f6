#include "auth/authenticator.h"

#include <algorithm>
#include <cctype>

namespace shepherd::auth {

namespace {

void addAuthenticatedGroup(meta::UserInfo& u) {
  if (std::find(u.groups.begin(), u.groups.end(), meta::kAuthenticatedGroup) == u.groups.end())
    u.groups.push_back(meta::kAuthenticatedGroup);
}

// The token of "Authorization: Bearer <token>" ("" when absent or another scheme).
std::string bearerToken(const http::Request& req) {
  std::string_view h = req.header("authorization");
  size_t sp = h.find(' ');
  if (sp == std::string_view::npos) return "";
  std::string scheme(h.substr(0, sp));
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "bearer") return "";
  std::string_view token = h.substr(sp + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return std::string(token);
}

}  // namespace

ApiError unauthorized() {
  return ApiError::make(401, "Unauthorized", "Unauthorized");
}

Result<std::unique_ptr<Authenticator>> Authenticator::create(const AuthenticatorOptions& opts) {
  auto a = std::make_unique<Authenticator>();
  a->opts_ = opts;
  if (!opts.token_file.empty()) {
    auto tf = TokenFile::load(opts.token_file);
    if (!tf) return tf.error();
    a->tokens_ = std::move(*tf);
  }
  return a;
}

Result<meta::UserInfo> Authenticator::authenticate(const http::Request& req) const {
  bool offered = false;
  if (const auto& cert = req.client_certificate) {
    offered = true;
    if (cert->verified && !cert->common_name.empty()) {
      meta::UserInfo u;
      u.name = cert->common_name;
      u.groups = cert->organizations;
      addAuthenticatedGroup(u);
      return u;
    }
  }
  if (std::string token = bearerToken(req); !token.empty()) {
    offered = true;
    if (tokens_)
      if (const meta::UserInfo* u = tokens_->find(token)) {
        meta::UserInfo copy = *u;
        addAuthenticatedGroup(copy);
        return copy;
      }
    for (auto& t : token_authenticators_)
      if (auto u = t(token)) {
        addAuthenticatedGroup(*u);
        return *u;
      }
  }
  if (offered || !opts_.anonymous) return unauthorized();
  meta::UserInfo anon;
  anon.name = meta::kAnonymousUser;
  anon.groups = {meta::kUnauthenticatedGroup};
  return anon;
}

}  // namespace shepherd::auth
