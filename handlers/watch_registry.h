// Tracks open watch streams so they can be timed out, sent bookmarks and ended on
// shutdown.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
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

  // At most this many open watches per user (0: no limit). Set before serving.
  void setMaxPerUser(int n) { max_per_user_ = n; }
  // A slot for one more watch of `user`, given back when the returned handle is destroyed;
  // null when the user already has the maximum open.
  std::shared_ptr<void> reserve(const std::string& user);
  int maxPerUser() const { return max_per_user_; }

 private:
  Mutex mu_;
  std::vector<std::weak_ptr<WatchStream>> streams_ GUARDED_BY(mu_);
  int max_per_user_ = 0;
  std::shared_ptr<Mutex> users_mu_ = std::make_shared<Mutex>();
  std::shared_ptr<std::unordered_map<std::string, int>> per_user_ =
      std::make_shared<std::unordered_map<std::string, int>>();
};

}  // namespace shepherd::handlers
