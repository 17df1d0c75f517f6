// The Node authorizer (upstream's): a kubelet, user system:node:<name> in group
// system:nodes, may read only its own Node, the pods bound to it (listing them needs the
// spec.nodeName=<name> field selector) and the secrets and configmaps those pods use,
// and only its own Lease; everything else it may do is ClusterRole system:node's rules.
// Users that are not nodes get no opinion. NodeRestriction (handlers/node_restriction)
// then checks what a node writes.
#pragma once

#include <memory>
#include <string>

#include "auth/authorizer.h"

namespace shepherd::auth {

// What the authorizer needs to know about pods and their references.
// Thread-safety: called concurrently.
class NodeGraph {
 public:
  virtual ~NodeGraph() = default;
  virtual bool podOnNode(const std::string& node, const std::string& ns, const std::string& pod) const = 0;
  // Whether a pod bound to `node` uses the secret, configmap or serviceaccount (`resource`) ns/name.
  virtual bool usedByPodOnNode(const std::string& node, const std::string& resource, const std::string& ns,
                               const std::string& name) const = 0;
};

// The node a user is ("" if not a node).
std::string nodeNameOf(const meta::UserInfo& user);

class NodeAuthorizer final : public Authorizer {
 public:
  explicit NodeAuthorizer(std::shared_ptr<const NodeGraph> graph) : graph_(std::move(graph)) {}
  Decision authorize(const meta::UserInfo& user, const RequestInfo& request) const override;

 private:
  std::shared_ptr<const NodeGraph> graph_;
};

}  // namespace shepherd::auth
