// How a Service relates to pods, shared by the Endpoints and EndpointSlice controllers:
// which pods its selector picks and which pod port a Service port's targetPort names.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/informer.h"
#include "client/workqueue.h"
#include "common/json.h"

namespace shepherd::controllers {

// A Service selector (a plain map) matches when every pair is among the labels; an empty
// or missing selector matches nothing.
bool serviceSelects(const json::Value& selector, const json::Value* labels);

// The pod's port for a Service port's targetPort (a number, or a container port name
// looked up with the Service port's protocol); the Service port itself when unset.
std::optional<int64_t> resolveTargetPort(const json::Value& service_port, const json::Value& pod);

// The targetRef of an endpoint for `pod` (kind Pod, namespace, name, uid).
json::Value podReference(const json::Value& pod, json::Allocator& a);

// The Service's ports as the pod serves them (targetPort resolved per pod; ports the pod
// lacks are left out), in the Service's order. `always_name`: name "" is written too, as
// EndpointSlices carry it; Endpoints leave it out.
json::Value endpointPorts(const json::Value& service, const json::Value& pod, bool always_name,
                          json::Allocator& a);

// Keys of the Services in the pod's namespace whose selector picks the pod, or picked its
// previous version `old_pod` (may be null): the Services a pod event concerns.
std::vector<std::string> servicesSelecting(const client::Informer& services, const json::Value* old_pod,
                                           const json::Value& pod);

// Pod informer handlers that queue the keys servicesSelecting names.
client::EventHandlers queueSelectingServices(const client::Informer& services, client::WorkQueue& queue);

}  // namespace shepherd::controllers
