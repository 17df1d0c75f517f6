// The controllers of a budget's pods and their scale, for budgets given as a percentage
// or as maxUnavailable (upstream's finders): a ReplicationController, a Deployment (through
// its ReplicaSet), a ReplicaSet no Deployment owns, a StatefulSet (all from the informers),
// or any other kind with a scale subresource (read live: discovery, then .../scale).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/informer.h"
#include "common/api_error.h"

namespace shepherd::controllers::disruption {

struct ExpectedScale {
  int64_t expected = 0;                // the sum of the controllers' spec.replicas
  std::vector<std::string> unmanaged;  // pods without a controller
};

// Thread-safety: reads the informers' caches and the client; safe from any worker.
class PodControllers {
 public:
  PodControllers(client::Client& c, client::Informer& rcs, client::Informer& replica_sets,
                 client::Informer& deployments, client::Informer& stateful_sets)
      : client_(c), rcs_(rcs), replica_sets_(replica_sets), deployments_(deployments), sets_(stateful_sets) {}

  // getExpectedScale; an error ("found no controllers for pod ...") when a pod's controller
  // is none of those.
  Result<ExpectedScale> expectedScale(const std::vector<client::Object>& pods);

 private:
  struct Scale {
    std::string uid;
    int64_t replicas = 0;
  };
  // Each finder: the scale, nullopt when the reference is not its kind (or is stale).
  Result<std::optional<Scale>> replicationController(const json::Value& ref, const std::string& ns);
  Result<std::optional<Scale>> deployment(const json::Value& ref, const std::string& ns);
  Result<std::optional<Scale>> replicaSet(const json::Value& ref, const std::string& ns);
  Result<std::optional<Scale>> statefulSet(const json::Value& ref, const std::string& ns);
  Result<std::optional<Scale>> scaleSubresource(const json::Value& ref, const std::string& ns);

  client::Client& client_;
  client::Informer& rcs_;
  client::Informer& replica_sets_;
  client::Informer& deployments_;
  client::Informer& sets_;
};

}  // namespace shepherd::controllers::disruption
