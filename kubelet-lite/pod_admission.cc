#include "kubelet-lite/pod_admission.h"

namespace shepherd::kubelet {

namespace {

struct HostPort {
  std::string ip, protocol;
  int64_t port;
};

// The host ports of a pod's containers and restartable (sidecar) init containers, as
// the scheduler's NodePorts plugin collects them.
std::vector<HostPort> hostPorts(const json::Value& pod) {
  std::vector<HostPort> out;
  const json::Value* spec = json::find(pod, "spec");
  if (!spec || !spec->IsObject()) return out;
  for (const char* list : {"containers", "initContainers"}) {
    const json::Value* cs = json::find(*spec, list);
    if (!cs || !cs->IsArray()) continue;
    for (const auto& c : cs->GetArray()) {
      if (!c.IsObject()) continue;
      if (std::string_view(list) == "initContainers" && json::getString(c, "restartPolicy") != "Always")
        continue;
      const json::Value* ports = json::find(c, "ports");
      if (!ports || !ports->IsArray()) continue;
      for (const auto& p : ports->GetArray()) {
        if (!p.IsObject()) continue;
        int64_t port = json::getInt(p, "hostPort").value_or(0);
        if (port <= 0) continue;
        std::string ip(json::getString(p, "hostIP"));
        if (ip.empty()) ip = "0.0.0.0";
        out.push_back({ip, std::string(json::getString(p, "protocol", "TCP")), port});
      }
    }
  }
  return out;
}

// Same port and protocol, and addresses that overlap (0.0.0.0 overlaps every one).
bool conflicts(const HostPort& a, const HostPort& b) {
  return a.port == b.port && a.protocol == b.protocol &&
         (a.ip == b.ip || a.ip == "0.0.0.0" || b.ip == "0.0.0.0");
}

}  // namespace

std::optional<PodRejection> admitPod(const json::Value& pod, const std::vector<const json::Value*>& active) {
  std::vector<HostPort> want = hostPorts(pod);
  if (want.empty()) return std::nullopt;
  for (const json::Value* other : active)
    for (const auto& used : hostPorts(*other))
      for (const auto& w : want)
        if (conflicts(w, used))
          return PodRejection{
              "NodePorts",
              "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod "
              "ports"};
  return std::nullopt;
}

}  // namespace shepherd::kubelet
