// Who made a request, as the authenticators establish it (upstream's user.Info).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace shepherd::meta {

inline constexpr const char* kAnonymousUser = "system:anonymous";
inline constexpr const char* kUnauthenticatedGroup = "system:unauthenticated";
inline constexpr const char* kAuthenticatedGroup = "system:authenticated";
inline constexpr const char* kMastersGroup = "system:masters";

struct UserInfo {
  std::string name;  // "" until authenticated
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

}  // namespace shepherd::meta
