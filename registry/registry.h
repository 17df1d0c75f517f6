// Registry: every served resource's Store, their watch caches, and the cluster's
// bootstrap objects, over one Storage.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "apis/catalog.h"
#include "registry/service_allocator.h"
#include "registry/store.h"
#include "storage/storage.h"
#include "storage/watch_cache.h"

namespace shepherd::registry {

struct RegistryOptions {
  std::string service_cidr = "10.96.0.0/12";
  std::string node_port_range = "30000-32767";
  size_t watch_window = 10000;  // events kept per resource for watch resumption
};

// Thread-safety: immutable after start(); Stores are thread-safe.
class Registry {
 public:
  static Result<std::unique_ptr<Registry>> start(storage::Storage& storage, const RegistryOptions& opts);
  ~Registry();

  Store* store(const std::string& group, const std::string& version, const std::string& plural) const;
  const std::vector<std::unique_ptr<Store>>& stores() const { return stores_; }
  storage::Storage& storage() { return storage_; }
  ServiceAllocator& serviceAllocator() { return *allocator_; }

  // Creates what a fresh cluster needs: the system namespaces and the default/kubernetes
  // Service (its Endpoints are ApiServerLeases' work). Idempotent.
  Status bootstrap(int port);
  // The default RBAC policy (part of bootstrap; see auth/bootstrap_policy.h).
  Status bootstrapPolicy();

  // Sends BOOKMARK events to watches that asked for them.
  void sendBookmarks();

  // Deletes events last written more than `ttl` ago (upstream's --event-ttl); returns
  // how many went. Deletions go through the store, so watchers see them.
  size_t expireEvents(std::chrono::seconds ttl);

 private:
  explicit Registry(storage::Storage& storage) : storage_(storage) {}
  void wireServiceHooks(Store& services);

  storage::Storage& storage_;
  std::unique_ptr<ServiceAllocator> allocator_;
  std::vector<std::unique_ptr<PreparedObjects>> prepared_;  // one per cache, outlives it
  std::vector<std::unique_ptr<storage::WatchCache>> caches_;
  std::vector<std::unique_ptr<Store>> stores_;
  std::map<std::tuple<std::string, std::string, std::string>, Store*> index_;
};

}  // namespace shepherd::registry
