#include "storage/storage.h"

namespace shepherd::storage {

const char* codeName(Code c) {
  switch (c) {
    case Code::Ok: return "Ok";
    case Code::NotFound: return "NotFound";
    case Code::Exists: return "Exists";
    case Code::Conflict: return "Conflict";
    case Code::Compacted: return "Compacted";
    case Code::Unavailable: return "Unavailable";
    case Code::Internal: return "Internal";
  }
  return "?";
}

std::string prefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    unsigned char last = static_cast<unsigned char>(end.back());
    if (last < 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return end;
}

}  // namespace shepherd::storage
