// The Node authorizer's view of which pods run on a node and what they use, read from the
// pods' watch cache (pods listed by the spec.nodeName field index).
#pragma once

#include "auth/node_authorizer.h"
#include "registry/registry.h"

namespace shepherd::registry {

// Thread-safety: stateless over the thread-safe pods store.
class PodNodeGraph final : public auth::NodeGraph {
 public:
  explicit PodNodeGraph(Registry& registry) : pods_(registry.store("", "v1", "pods")) {}
  bool podOnNode(const std::string& node, const std::string& ns, const std::string& pod) const override;
  bool usedByPodOnNode(const std::string& node, const std::string& resource, const std::string& ns,
                       const std::string& name) const override;

 private:
  Store* pods_;
};

// Whether `pod` refers to the secret or configmap (`resource`) `name`: volumes (also
// projected), env and envFrom of every container, image pull secrets.
bool podUses(const json::Value& pod, const std::string& resource, const std::string& name);

}  // namespace shepherd::registry
