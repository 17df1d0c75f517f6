// Resource quota evaluation, as upstream's quota evaluators (pkg/quota/v1): what an object
// charges to a quota (pods: counts and compute requests and limits; services: counts,
// node ports, load balancers; claims: counts and storage, per class too; other objects:
// count/<resource>[.<group>]), whether a quota's scopes and scope selector match a pod, and
// resource lists with upstream's quantity arithmetic and printing. Shared by the
// ResourceQuota admission plugin and the quota controller.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"

namespace shepherd::meta::quota {

// A quantity with the format its first operand had (as resource.Quantity.Add keeps it).
struct Amount {
  long double value = 0;
  bool binary = false;  // printed with Ki/Mi/Gi suffixes when exact
};
using ResourceList = std::map<std::string, Amount>;

// Quantity.String() of an amount.
std::string format(const Amount& a);
// A resource list from a JSON map of quantities (spec.hard, status.used, ...).
ResourceList parseList(const json::Value* m);
// The JSON map of a resource list.
json::Value toJson(const ResourceList& l, json::Allocator& a);
// "a=1,b=2" (sorted keys), as the admission messages write lists.
std::string listText(const ResourceList& l);

// A pod's effective requests and limits (PodRequests/PodLimits): containers and sidecars
// summed, maxed with each regular init container, plus the overhead when asked; requests
// default to limits, as the API's pod defaulting makes them.
std::pair<ResourceList, ResourceList> podRequestsAndLimits(const json::Value& pod, bool with_overhead);

// Which evaluator a resource has: pods, services, claims, or an object count.
struct Resource {
  std::string group, plural;
};
// Whether the evaluator of `r` counts the quota resource `name`.
bool matchesResource(const Resource& r, const std::string& name);
// The resources an object of `r` charges (before masking with a quota's keys); `now` in
// seconds since the epoch.
ResourceList usage(const Resource& r, const json::Value& obj, long double now_seconds);
// Whether a quota's scopes and scope selector admit the object (only pods match scoped
// quotas).
bool matchesScopes(const Resource& r, const json::Value& quota, const json::Value& obj);
// A pod is charged while it is not finished and not past its deletion grace.
bool podCounts(const json::Value& pod, long double now_seconds);
// "must specify limits.cpu for: c1,c2; ..." for the compute resources among `restricted`
// that some container does not set; "" when every container does.
std::string podConstraints(const json::Value& pod, const std::vector<std::string>& restricted);

}  // namespace shepherd::meta::quota
