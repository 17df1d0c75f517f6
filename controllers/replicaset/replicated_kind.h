// The kinds the ReplicaSet controller keeps replicas of: apps/v1 ReplicaSet and core/v1
// ReplicationController. Upstream runs one base controller for both (the replication
// manager adapts RCs to ReplicaSets); they differ only in where they live and in the
// selector's shape (a LabelSelector, or a plain label map for RCs).
#pragma once

#include <string>

#include "common/api_error.h"
#include "common/json.h"
#include "meta/selectors.h"

namespace shepherd::controllers {

struct ReplicatedKind {
  std::string group;        // "" for the core group
  std::string api_version;  // as in ownerReferences
  std::string plural;
  std::string kind;
  std::string controller_name;  // the work queue's and the logs' name
  bool map_selector = false;    // spec.selector is a label map (RC), not a LabelSelector

  // The collection path in a namespace, and one object's path.
  std::string collectionPath(const std::string& ns) const;
  std::string objectPath(const std::string& ns, const std::string& name) const;
  Result<meta::LabelSelector> selectorOf(const json::Value& obj) const;
};

const ReplicatedKind& replicaSetKind();
const ReplicatedKind& replicationControllerKind();

}  // namespace shepherd::controllers
