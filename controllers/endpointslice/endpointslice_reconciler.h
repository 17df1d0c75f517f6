// What the EndpointSlices of one Service should become, as upstream's reconciler: the
// Service's endpoints (one per selected pod with an IP, terminating pods included) are
// grouped by address type and port set; endpoints stay in the slice that already holds
// them, new ones fill slices being written anyway before new slices are made, slices
// left empty go, and a Service without endpoints keeps one empty placeholder slice.
// Pure: no I/O, so the controller can be tested without a server.
#pragma once

#include <string>
#include <vector>

#include "client/informer.h"
#include "common/json.h"

namespace shepherd::controllers {

inline constexpr const char* kServiceNameLabel = "kubernetes.io/service-name";
inline constexpr const char* kManagedByLabel = "endpointslice.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "endpointslice-controller.k8s.io";

struct SlicePlan {
  std::vector<json::Document> create;  // whole objects, named by generateName
  std::vector<json::Document> update;  // whole objects, with name and resourceVersion
  std::vector<std::string> remove;     // names of slices to delete
  bool empty() const { return create.empty() && update.empty() && remove.empty(); }
};

// `pods`: the pods of the Service's namespace; `existing`: the slices this controller
// manages for the Service. `max_per_slice` >= 1.
SlicePlan planEndpointSlices(const json::Value& service, const std::vector<client::Object>& pods,
                             const std::vector<client::Object>& existing, size_t max_per_slice);

}  // namespace shepherd::controllers
