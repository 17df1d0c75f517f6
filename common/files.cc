#include "common/files.h"

#include <errno.h>
#include <sys/stat.h>

#include <filesystem>

namespace shepherd {

bool makeDirs(const std::string& path, mode_t mode) {
  namespace fs = std::filesystem;
  std::string cur;
  for (const auto& part : fs::path(path)) {
    cur = (fs::path(cur) / part).string();
    if (part == "/" || part.empty()) continue;
    if (::mkdir(cur.c_str(), mode) != 0 && errno != EEXIST) return false;
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;
  if (S_ISDIR(st.st_mode)) return true;
  errno = ENOTDIR;
  return false;
}

}  // namespace shepherd
