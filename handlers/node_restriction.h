// NodeRestriction admission (upstream's, for what Shepherd serves): a node may create
// only mirror pods bound to itself, delete and update the status of only the pods bound
// to it, modify only its own Node (not its taints, by update) and only its own Lease in
// kube-node-lease. Other users pass untouched.
#pragma once

#include "auth/request_info.h"
#include "common/api_error.h"
#include "net/http/message.h"
#include "registry/registry.h"

namespace shepherd::handlers {

// OK, or the 403 to answer. `req.body` is the decoded request as sent (JSON).
Status admitNodeRequest(const http::Request& req, const auth::RequestInfo& info,
                        registry::Registry& registry);

}  // namespace shepherd::handlers
