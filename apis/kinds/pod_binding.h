// pods/binding: what a Binding does to its pod (upstream's BindingREST.assignPod). The
// handler (handlers/binding.cc) runs it as a read-modify-write of the pod, so two
// schedulers can never bind one pod twice: the second finds spec.nodeName set.
#pragma once

#include <string>

#include "common/api_error.h"
#include "common/json.h"

namespace shepherd::apis::kinds {

// The Binding's own checks: target.name required, target.kind Node (or empty).
Status validateBinding(const json::Value& binding, const std::string& pod_name);

// Sets spec.nodeName, the Binding's annotations and PodScheduled=True on `pod` (`now` for
// the condition); 409 on a UID or resourceVersion precondition that does not hold, a pod
// being deleted, or one already bound.
Status assignPod(json::Document& pod, const json::Value& binding, const std::string& pod_name,
                 const std::string& now);

}  // namespace shepherd::apis::kinds
