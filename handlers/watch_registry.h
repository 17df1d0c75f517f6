// Tracks open watch streams so they can be timed out, sent bookmarks and ended on
// shutdown.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "handlers/watch_stream.h"

namespace shepherd::handlers {

// Thread-safety: all methods lock an internal mutex.
class WatchRegistry {
 public:
  void add(const std::shared_ptr<WatchStream>& w);
  // Ends streams past their deadline and forgets finished ones.
  void expire();
  // Ends every stream (server shutdown).
  void finishAll();
  size_t size();

 private:
  std::mutex mu_;
  std::vector<std::weak_ptr<WatchStream>> streams_;
};

}  // namespace shepherd::handlers
