// Continue tokens for paged lists: an opaque, versioned encoding of the list's revision
// and the last key returned (relative to the resource prefix), as upstream does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace shepherd::registry {

struct ContinueToken {
  int64_t revision = 0;
  std::string start_after;  // key relative to the resource's storage prefix
};

std::string encodeContinue(const ContinueToken& t);
// nullopt when the token is malformed.
std::optional<ContinueToken> decodeContinue(const std::string& token);

}  // namespace shepherd::registry
