// Small file-system helpers shared by the programs.
#pragma once

#include <sys/types.h>

#include <string>

namespace shepherd {

// mkdir -p: creates every missing directory of `path` with `mode` (Go's os.MkdirAll);
// true when `path` is a directory afterwards, else false with errno set.
bool makeDirs(const std::string& path, mode_t mode);

}  // namespace shepherd
