// The scheduling algorithm's pure parts: filters (can the pod run on this node, and if
// not, why — in upstream's words) and scores (how good a node is, 0..100 per plugin).
#pragma once

#include <string>
#include <vector>

#include "scheduler/node_info.h"

namespace shepherd::scheduler {

// Empty when the node fits; otherwise the reasons, e.g. {"Insufficient cpu"}.
std::vector<std::string> filter(const PodInfo& pod, const NodeInfo& node);

bool matchesTerm(const NodeSelectorTerm& term, const NodeInfo& node);
bool tolerates(const std::vector<Toleration>& tolerations, const Taint& taint);

// Weighted sum of the score plugins (LeastAllocated, BalancedAllocation, preferred
// NodeAffinity, TaintToleration of PreferNoSchedule taints).
int64_t score(const PodInfo& pod, const NodeInfo& node);

// "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node
// affinity/selector." from per-node reasons (each reason counted once per node).
std::string unschedulableMessage(size_t nodes, const std::vector<std::vector<std::string>>& reasons);

}  // namespace shepherd::scheduler
