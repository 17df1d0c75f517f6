#include "common/ids.h"

#include <cstdio>
#include <random>

namespace shepherd::ids {

namespace {
// Thread-local engine: no lock on the request path.
std::mt19937_64& engine() {
  thread_local std::mt19937_64 e{std::random_device{}()};
  return e;
}
}  // namespace

std::string uuid4() {
  uint64_t a = engine()(), b = engine()();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

std::string randomSuffix(int n) {
  static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::uniform_int_distribution<int> d(0, sizeof(alphabet) - 2);
  std::string s;
  for (int i = 0; i < n; ++i) s += alphabet[d(engine())];
  return s;
}

}  // namespace shepherd::ids
