// ApiServerLeases: which API servers of a cluster are alive, and the default/kubernetes
// Endpoints (and EndpointSlices) that list them, as upstream's "lease" endpoint reconciler.
//
// Each API server keeps one key under /registry/masterleases/ (address:port -> last
// renewal, wall-clock seconds) and renews it every reconcile; a key not renewed for `ttl`
// is dropped by whichever server reconciles next. The store has no TTL of its own, so the
// servers' clocks must roughly agree (as the leases of the coordination API assume).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/api_error.h"
#include "common/clock.h"
#include "registry/registry.h"
#include "storage/storage.h"

namespace shepherd::registry {

struct ApiServerEndpoint {
  std::string address;
  int port = 0;
  bool operator<(const ApiServerEndpoint& o) const {
    return port != o.port ? port < o.port : address < o.address;
  }
  bool operator==(const ApiServerEndpoint& o) const { return port == o.port && address == o.address; }
};

// Thread-safety: reconcile() and release() must not run concurrently (one caller thread).
class ApiServerLeases {
 public:
  // `exclusive`: this server is the only one (the embedded store): it keeps no lease (no
  // periodic writes), drops any left over, and default/kubernetes lists just itself.
  ApiServerLeases(Registry& registry, ApiServerEndpoint self, bool exclusive,
                  std::chrono::seconds ttl = std::chrono::seconds(15),
                  const clock::Clock& clock = clock::realClock());

  // Renews this server's lease, drops expired ones and writes default/kubernetes when
  // the live set differs from it. Returns the live servers.
  Result<std::vector<ApiServerEndpoint>> reconcile();
  // Drops this server's lease and writes the endpoints without it (on shutdown).
  void release();

 private:
  Status writeEndpoints(const std::vector<ApiServerEndpoint>& live);
  std::string key(const ApiServerEndpoint& e) const;

  Registry& registry_;
  storage::Storage& storage_;
  ApiServerEndpoint self_;
  bool exclusive_;
  std::chrono::seconds ttl_;
  const clock::Clock& clock_;
};

}  // namespace shepherd::registry
