#include "common/log.h"

#include <atomic>
#include <cstdio>

#include "common/clock.h"

namespace shepherd::log {

namespace {
std::atomic<int> g_level{static_cast<int>(Level::Info)};
const char* name(Level l) {
  switch (l) {
    case Level::Debug: return "D";
    case Level::Info: return "I";
    case Level::Warn: return "W";
    case Level::Error: return "E";
  }
  return "?";
}
}  // namespace

void setLevel(Level l) { g_level = static_cast<int>(l); }
bool enabled(Level l) { return static_cast<int>(l) >= g_level.load(std::memory_order_relaxed); }

void write(Level l, const std::string& msg) {
  std::string line = std::string(name(l)) + " " + clock::rfc3339Micro(clock::now()) + " " + msg + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);  // one fwrite: lines never interleave
}

}  // namespace shepherd::log
