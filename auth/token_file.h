// Static bearer tokens from a CSV file, upstream's --token-auth-file format: one line per
// token, `token,user,uid[,"group1,group2,..."]`.
#pragma once

#include <map>
#include <string>

#include "common/api_error.h"
#include "meta/user_info.h"

namespace shepherd::auth {

// Thread-safety: immutable after load; lookups from any thread.
class TokenFile {
 public:
  static Result<TokenFile> load(const std::string& path);
  static Result<TokenFile> parse(const std::string& text);
  const meta::UserInfo* find(const std::string& token) const;
  size_t size() const { return users_.size(); }

 private:
  std::map<std::string, meta::UserInfo> users_;
};

}  // namespace shepherd::auth
