// What the scheduler knows about nodes and pods: resource amounts in integer units, and
// the per-node totals of pods bound (or assumed bound) there.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"

namespace shepherd::scheduler {

struct Resources {
  int64_t milli_cpu = 0;
  int64_t memory = 0;             // bytes
  int64_t ephemeral_storage = 0;  // bytes
  int64_t pods = 0;
  Resources& operator+=(const Resources& o);
  Resources& operator-=(const Resources& o);
};

struct Toleration {
  std::string key, op, value, effect;  // op: Equal (default) or Exists
};

struct Taint {
  std::string key, value, effect;
};

struct NodeSelectorRequirement {
  std::string key, op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  bool field = false;  // matchFields (metadata.name) rather than labels
};
using NodeSelectorTerm = std::vector<NodeSelectorRequirement>;  // ANDed

struct PreferredTerm {
  int32_t weight = 0;
  NodeSelectorTerm term;
};

struct HostPort {
  std::string protocol;
  std::string ip;
  int32_t port = 0;
  bool operator<(const HostPort& o) const {
    return std::tie(protocol, ip, port) < std::tie(o.protocol, o.ip, o.port);
  }
};

// A pod as the scheduler needs it, parsed once.
struct PodInfo {
  std::string key;  // ns/name
  std::string ns, name, uid;
  std::string scheduler_name;
  std::string node_name;
  int32_t priority = 0;
  std::string creation;  // RFC 3339, for queue order
  Resources requests;    // pods = 1
  // For scoring only: a container without a cpu or memory request counts as upstream's
  // defaults (100m, 200Mi), so best-effort pods still spread (upstream NonZeroRequested).
  Resources non_zero_requests;
  std::map<std::string, std::string> node_selector;
  std::vector<NodeSelectorTerm> required_terms;  // ORed; empty = no requirement
  std::vector<PreferredTerm> preferred_terms;
  std::vector<Toleration> tolerations;
  std::vector<HostPort> host_ports;
  bool terminal = false;  // Succeeded or Failed: holds no resources
  bool deleting = false;
};

struct NodeInfo {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  bool unschedulable = false;
  bool ready = false;
  Resources allocatable;
  Resources requested;           // of pods bound or assumed here
  Resources non_zero_requested;  // the same pods' non_zero_requests, for scoring
  std::set<HostPort> used_ports;
  std::map<std::string, PodInfo> pods;  // by pod key

  // Charges the pod's requests and host ports here (replacing an earlier copy of it).
  void addPod(const PodInfo& pod);
  // Releases what addPod charged; a pod not here is ignored.
  void removePod(const std::string& key);
};

PodInfo parsePod(const json::Value& pod);
NodeInfo parseNode(const json::Value& node);  // without pods
// A pod's effective requests, and the same with upstream's scoring defaults for each
// container missing a cpu or memory request; one walk over the spec.
struct PodResources {
  Resources requests;
  Resources non_zero;
};
PodResources podRequests(const json::Value& spec);

}  // namespace shepherd::scheduler
