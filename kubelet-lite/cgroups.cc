#include "kubelet-lite/cgroups.h"

#include <unistd.h>

#include <filesystem>

namespace shepherd::kubelet {

namespace fs = std::filesystem;

std::string podCgroupParent(const std::string& root, const json::Value& pod, const std::string& uid) {
  std::string_view q = json::getStringPath(pod, {"status", "qosClass"});
  std::string tier = q == "Guaranteed" ? "" : q == "BestEffort" ? "/besteffort" : "/burstable";
  return root + tier + "/pod" + uid;
}

void removePodCgroups(const std::string& parent) {
  std::error_code ec;
  // cgroup v1: one hierarchy per controller (cpu,cpuacct and friends are symlinks).
  for (auto& entry : fs::directory_iterator("/sys/fs/cgroup", ec)) {
    if (entry.is_symlink(ec)) continue;
    std::string dir = entry.path().string() + parent;
    if (fs::exists(dir, ec)) rmdir(dir.c_str());
  }
  // cgroup v2 (unified): the same path under the single hierarchy.
  std::string unified = "/sys/fs/cgroup" + parent;
  if (fs::exists(unified + "/cgroup.procs", ec)) rmdir(unified.c_str());
}

}  // namespace shepherd::kubelet
