// SharedInformers: one informer per resource (and selector) for all the controllers of a
// process, as client-go's SharedInformerFactory: controllers ask for the informers they
// need and add their handlers, then the process starts them all and waits for sync.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "client/informer.h"
#include "common/mutex.h"

namespace shepherd::client {

// Options for every object of a resource (no namespace, no selectors).
InformerOptions allObjects(const std::string& group, const std::string& version, const std::string& plural);

// Thread-safety: get() and start() from one thread during set-up; waitForSync() and
// stop() from any thread afterwards. mu_ guards informers_.
class SharedInformers {
 public:
  explicit SharedInformers(Client& client) : client_(client) {}
  ~SharedInformers() { stop(); }
  SharedInformers(const SharedInformers&) = delete;
  SharedInformers& operator=(const SharedInformers&) = delete;

  // The informer for these options, created on first use (before start()).
  Informer& get(const InformerOptions& opts);
  void start();
  bool waitForSync(int timeout_ms);
  void stop();
  size_t size();  // informers made so far

 private:
  Client& client_;
  Mutex mu_;
  std::map<std::string, std::unique_ptr<Informer>> informers_ GUARDED_BY(mu_);
};

}  // namespace shepherd::client
