// Request authentication, as kube-apiserver's union of authenticators: a verified client
// certificate (CN = user, O = groups), then a bearer token (static token file; more
// token kinds plug in as TokenAuthenticator), else anonymous. Credentials that are offered
// but do not hold give 401 Unauthorized; anonymous requests are system:anonymous in
// system:unauthenticated when allowed. Authenticated users also get system:authenticated.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/token_file.h"
#include "common/api_error.h"
#include "meta/user_info.h"
#include "net/http/message.h"

namespace shepherd::auth {

// A bearer token check: the user, nullopt when the token is not of this kind or unknown.
using TokenAuthenticator = std::function<std::optional<meta::UserInfo>(const std::string& token)>;

struct AuthenticatorOptions {
  bool anonymous = true;
  std::string token_file;  // "" = none
};

// Thread-safety: configure before serving; authenticate() from any thread.
class Authenticator {
 public:
  static Result<std::unique_ptr<Authenticator>> create(const AuthenticatorOptions& opts);
  void addTokenAuthenticator(TokenAuthenticator t) { token_authenticators_.push_back(std::move(t)); }
  Result<meta::UserInfo> authenticate(const http::Request& req) const;

 private:
  AuthenticatorOptions opts_;
  std::optional<TokenFile> tokens_;
  std::vector<TokenAuthenticator> token_authenticators_;
};

// The 401 every failed authentication answers (upstream's wording).
ApiError unauthorized();

}  // namespace shepherd::auth
