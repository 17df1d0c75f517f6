// PersistentVolume and claim helpers shared by the PV binder, the local-path provisioner
// and the scheduler's volume binding, as upstream's component-helpers (storage/volume):
// the binding annotations, which class a claim or volume is in, whether a volume is bound
// to a claim or satisfies it, and which volume suits an unbound claim best.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"

namespace shepherd::meta {

inline constexpr const char* kBindCompleted = "pv.kubernetes.io/bind-completed";
inline constexpr const char* kBoundByController = "pv.kubernetes.io/bound-by-controller";
inline constexpr const char* kSelectedNode = "volume.kubernetes.io/selected-node";
inline constexpr const char* kStorageProvisioner = "volume.kubernetes.io/storage-provisioner";
inline constexpr const char* kBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner";
inline constexpr const char* kProvisionedBy = "pv.kubernetes.io/provisioned-by";
inline constexpr const char* kBetaStorageClass = "volume.beta.kubernetes.io/storage-class";

bool hasAnnotation(const json::Value& obj, const char* key);
std::string annotation(const json::Value& obj, const char* key);

// The beta annotation, else spec.storageClassName, else "" (GetPersistentVolumeClaimClass
// and GetPersistentVolumeClass).
std::string storageClassOf(const json::Value& obj);
// Whether the claim names a class at all: the annotation, or storageClassName set, even to
// "" (PersistentVolumeClaimHasClass).
bool claimHasClass(const json::Value& claim);

// spec.claimRef names this claim (namespace and name; uid empty or the claim's).
bool isVolumeBoundToClaim(const json::Value& volume, const json::Value& claim);

// Why a volume the claim names cannot serve it (checkVolumeSatisfyClaim), or nullopt.
std::optional<std::string> volumeMismatch(const json::Value& volume, const json::Value& claim);

// FindMatchingVolume: a volume pre-bound to the claim at once; otherwise the smallest
// Available volume of the claim's class, selector and volume mode with room for the
// request, preferring the volumes with the fewest access modes that still hold all the
// claim's. Without a node (the binder) a delayed (WaitForFirstConsumer) claim only takes
// a pre-bound volume; with one (the scheduler) the volume's node affinity must admit the
// node, and volumes in `excluded` (by name) are skipped.
const json::Value* findMatchingVolume(const json::Value& claim,
                                      const std::vector<const json::Value*>& volumes, bool delay_binding,
                                      const json::Value* node = nullptr,
                                      const std::set<std::string>& excluded = {});

// Whether the node satisfies a volume's spec.nodeAffinity.required (none: every node).
bool volumeNodeAffinityMatches(const json::Value& volume, const json::Value& node);

// A claim's fully bound state as the scheduler and kubelet read it: volumeName set and
// the bind-completed annotation present.
bool claimFullyBound(const json::Value& claim);

}  // namespace shepherd::meta
