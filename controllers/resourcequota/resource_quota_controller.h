// Resource quota controller, as upstream's (pkg/controller/resourcequota): keeps each
// ResourceQuota's status true - status.hard a copy of spec.hard (admission enforces only
// what the controller has observed) and status.used the namespace's usage of every hard
// resource it can count (meta/quota: pods, services, claims, object counts), recomputed
// when the quota's spec changes, when a counted object is deleted or a pod finishes
// (replenishment), and every five minutes (--resource-quota-sync-period). Object counts of
// kinds served after it started are listed live (through discovery).
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "client/discovery.h"
#include "client/shared_informers.h"
#include "common/mutex.h"
#include "controllers/manager/controller.h"
#include "meta/quota.h"

namespace shepherd::controllers::resourcequota {

// Thread-safety: as Controller; the discovery cache is guarded by mu_.
class ResourceQuotaController : public Controller {
 public:
  static constexpr std::chrono::minutes kDefaultResync{5};
  // `resources`: what discovery found; every namespaced one that can be listed, watched
  // and deleted gets an informer (shared with the garbage collector's), so deleting any
  // counted object is replenished at once.
  ResourceQuotaController(client::Client& c, client::SharedInformers& informers,
                          const std::vector<client::ApiResource>& resources = {},
                          std::chrono::milliseconds resync = kDefaultResync);

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  // The objects of a resource in a namespace: from an informer, or a live LIST.
  Result<std::vector<client::Object>> objects(const meta::quota::Resource& r, const std::string& ns);
  // The resource a quota key counts (pods, services, claims, count/<plural>[.<group>]).
  std::optional<meta::quota::Resource> resourceOf(const std::string& key) const;
  void replenish(const client::Object& obj);

  client::Client& client_;
  const std::chrono::milliseconds resync_;
  client::Informer& quotas_;
  std::map<std::string, client::Informer*> informers_;  // by "group/plural"
  Mutex mu_;
  std::vector<client::ApiResource> discovered_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point discovered_at_ GUARDED_BY(mu_){};
};

}  // namespace shepherd::controllers::resourcequota
