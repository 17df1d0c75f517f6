// The hash that names a workload's revision (Deployments' pod-template-hash, DaemonSets'
// and StatefulSets' controller-revision-hash), as upstream's ComputeHash: FNV-32a of the
// template (here its JSON) and the collision count, in upstream's safe alphabet.
#pragma once

#include <cstdint>
#include <string>

#include "common/json.h"

namespace shepherd::controllers {

std::string templateHash(const json::Value& tmpl, int64_t collision_count);

}  // namespace shepherd::controllers
