// Pod volumes on the node: each volume becomes a host directory (or file) under the pod's
// directory, filled from its source — emptyDir (tmpfs for medium Memory), hostPath,
// configMap, secret, downwardAPI and projected — and bind-mounted into containers.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/api_error.h"
#include "common/json.h"
#include "kubelet-lite/env.h"

namespace shepherd::kubelet {

struct PreparedVolumes {
  std::map<std::string, std::string> host_paths;  // volume name -> host path
  std::vector<std::string> tmpfs_mounts;          // to unmount on teardown
};

// The host path of the volume bound to a claim (namespace, claim name), or why the pod
// cannot have it yet ("error processing PVC ns/name: PVC is not bound", ...).
using ClaimLookup = std::function<Result<std::string>(const std::string& ns, const std::string& claim)>;

// Creates or refreshes every volume of the pod under `pod_dir`/volumes. A missing
// non-optional configMap or secret is an error with reason FailedMount; a claim
// (persistentVolumeClaim, or an ephemeral volume's <pod>-<volume> claim) whose volume the
// pod cannot have yet is one with reason UnmountedVolumes and upstream's "Unable to attach
// or mount volumes: ..." message.
Result<PreparedVolumes> prepareVolumes(const std::string& pod_dir, const PodFacts& facts,
                                       const DataLookup& lookup, const ClaimLookup& claims = nullptr);

// Upstream's hostPath type check: the *OrCreate types create what is missing (a directory
// 0755, or a file 0644), then every type checks the kind (FailedMount otherwise).
Status checkHostPathType(const std::string& path, const std::string& type);

// Unmounts tmpfs volumes and removes the pod directory.
void teardownVolumes(const std::string& pod_dir);

// Writes `content` to `path` atomically (temp file + rename) with `mode`.
bool writeFileAtomic(const std::string& path, const std::string& content, int mode);

// The /etc/hosts the kubelet manages for a pod (localhost entries, the pod's own name
// and IP, hostAliases).
std::string hostsFile(const json::Value& pod, const std::string& pod_ip);
// Writes hostsFile() to `pod_dir`/etc-hosts (the source of the containers' /etc/hosts bind
// mount), creating the pod directory if the pod has none yet and replacing an empty
// directory a runtime made in the file's place; returns the file's path.
Result<std::string> writeHostsFile(const std::string& pod_dir, const json::Value& pod,
                                   const std::string& pod_ip);
// The pod's hostname as upstream's kubelet sets it: spec.hostname or the pod's name, cut
// to 63 characters (the kernel's limit) without a trailing '-' or '.'.
std::string podHostname(const json::Value& pod);

}  // namespace shepherd::kubelet
