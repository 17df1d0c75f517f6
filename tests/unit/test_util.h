// Helpers shared by unit tests: temporary directories that clean up after themselves.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace shepherd::testutil {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/shepherd-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace shepherd::testutil
