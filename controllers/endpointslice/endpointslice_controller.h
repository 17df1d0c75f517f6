// EndpointSlice controller, as upstream's: for every Service with a selector, the
// discovery.k8s.io/v1 EndpointSlices labelled kubernetes.io/service-name=<service> and
// managed-by endpointslice-controller.k8s.io, owned by the Service, list its pods'
// endpoints (ready, serving and terminating conditions) in slices of at most
// --max-endpoints-per-slice (100). The plan comes from planEndpointSlices; writes are
// tracked so the next sync waits for the cache to show them.
#pragma once

#include "client/shared_informers.h"
#include "controllers/endpointslice/endpointslice_tracker.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers {

// Thread-safety: as Controller; handlers only read caches, record tracker events and
// queue keys.
class EndpointSliceController : public Controller {
 public:
  EndpointSliceController(client::Client& c, client::SharedInformers& informers, size_t max_per_slice);

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  void onSlice(const json::Value& slice);

  client::Client& client_;
  client::Informer& services_;
  client::Informer& pods_;
  client::Informer& slices_;
  size_t max_per_slice_;
  EndpointSliceTracker tracker_;
};

}  // namespace shepherd::controllers
