// Endpoints controller, as upstream's: for every Service with a selector, the Endpoints
// object of the same name lists the matching pods that have an IP — ready ones under
// addresses, the others under notReadyAddresses (all under addresses with
// publishNotReadyAddresses) — with each Service port resolved against the pod (numeric
// targetPort, or a named container port), grouped into subsets by port set. Endpoints
// of a deleted Service are deleted; Services without a selector are left alone.
#pragma once

#include "client/shared_informers.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers {

// Thread-safety: as Controller; handlers only read caches and queue keys.
class EndpointsController : public Controller {
 public:
  EndpointsController(client::Client& c, client::SharedInformers& informers);

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  client::Client& client_;
  client::Informer& services_;
  client::Informer& pods_;
  client::Informer& endpoints_;
};

// The subsets of the Endpoints for `service` over the pods of its namespace (exposed for
// unit tests): deterministic order (subsets by port set, addresses by IP).
json::Value endpointSubsets(const json::Value& service, const std::vector<client::Object>& pods,
                            json::Allocator& a);

}  // namespace shepherd::controllers
