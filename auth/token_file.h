// Static bearer tokens from a CSV file, upstream's --token-auth-file format: one line per
// token, `token,user,uid[,"group1,group2,..."]`.
#pragma once

#include <map>
#include <string>

#include "auth/user_info.h"
#include "common/api_error.h"

namespace shepherd::auth {

// Thread-safety: immutable after load; lookups from any thread.
class TokenFile {
 public:
  static Result<TokenFile> load(const std::string& path);
  static Result<TokenFile> parse(const std::string& text);
  const UserInfo* find(const std::string& token) const;
  size_t size() const { return users_.size(); }

 private:
  std::map<std::string, UserInfo> users_;
};

}  // namespace shepherd::auth
