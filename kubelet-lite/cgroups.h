// Pod-level cgroups. With the cgroupfs driver runc creates and removes each container's
// leaf cgroup under the absolute parent the kubelet names; the pod level is ours to remove.
#pragma once

#include <string>

#include "common/json.h"

namespace shepherd::kubelet {

// "<root>[/burstable|/besteffort]/pod<uid>" by the pod's QoS class.
std::string podCgroupParent(const std::string& root, const json::Value& pod, const std::string& uid);

// Removes the pod's (now empty) cgroup directory from every hierarchy (v1 and v2).
void removePodCgroups(const std::string& parent);

}  // namespace shepherd::kubelet
