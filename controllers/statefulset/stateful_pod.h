// A StatefulSet's pods and claims, as upstream's stateful_set_utils: ordinal identities
// (<set>-<ordinal>, hostname, subdomain, the pod-name and pod-index labels), the pod made
// for an ordinal at a revision, the claims of volumeClaimTemplates
// (<template>-<set>-<ordinal>) and which owners the retention policy gives them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json.h"

namespace shepherd::controllers::statefulset {

inline constexpr const char* kPodNameLabel = "statefulset.kubernetes.io/pod-name";
inline constexpr const char* kPodIndexLabel = "apps.kubernetes.io/pod-index";

// The ordinal in a pod's name "<parent>-<n>", or nullopt.
std::optional<int64_t> ordinalOf(const json::Value& pod);
std::string parentOf(const json::Value& pod);
// Named <set>-<n>: the set may own it.
bool isMemberOf(const json::Value& set, const json::Value& pod);
int64_t startOrdinal(const json::Value& set);

// The pod for `ordinal` from `tmpl` (a revision's template), labelled with the revision.
json::Document newPod(const json::Value& set, const json::Value& tmpl, const std::string& revision,
                      int64_t ordinal);
// Whether the pod's name, labels, hostname and subdomain match its ordinal's identity.
bool identityMatches(const json::Value& set, const json::Value& pod);
// Whether every claim template has its volume on the pod.
bool storageMatches(const json::Value& set, const json::Value& pod);
// Rewrites the pod's identity and claim volumes in place.
void updateIdentity(const json::Value& set, json::Value& pod, json::Allocator& a);
void updateStorage(const json::Value& set, json::Value& pod, json::Allocator& a);

// The claims a pod must have: name -> the claim object to create.
struct Claim {
  std::string name;
  json::Document object;
};
std::vector<Claim> claimsFor(const json::Value& set, int64_t ordinal);

// Which owners the retention policy wants on a claim of `pod` (condemned: scaled down).
struct ClaimOwners {
  bool set = false;
  bool pod = false;
};
ClaimOwners wantedOwners(const json::Value& set, bool condemned);
// Whether the claim's ownerReferences already say what the policy wants (stale or foreign
// controllers count as up to date: they are left alone).
bool claimOwnersUpToDate(const json::Value& set, const json::Value& pod, const json::Value& claim,
                         bool condemned);
// The claim's ownerReferences as the policy wants them (others kept).
json::Value claimOwnerRefs(const json::Value& set, const json::Value& pod, const json::Value& claim,
                           bool condemned, json::Allocator& a);

}  // namespace shepherd::controllers::statefulset
