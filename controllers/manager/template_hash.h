// The hashes that name a workload's revisions, as upstream's: Deployments' pod-template-hash
// and DaemonSets' controller-revision-hash (ComputeHash: FNV-1a of the template, here its
// JSON, and the collision count), and StatefulSet revision names (FNV-1 of the revision's
// data and the collision count); both in upstream's safe alphabet.
#pragma once

#include <cstdint>
#include <string>

#include "common/json.h"

namespace shepherd::controllers {

std::string templateHash(const json::Value& tmpl, int64_t collision_count);
std::string revisionDataHash(const std::string& data, int64_t collision_count);
// The decimal digits of `h`, each mapped into "bcdfghjklmnpqrstvwxz2456789".
std::string safeEncode(uint32_t h);

}  // namespace shepherd::controllers
