// The arithmetic and bookkeeping of Deployment rollouts, as upstream's deployment util:
// surge and unavailability budgets, the new ReplicaSet's size, template hashes, revision
// annotations and the status conditions. Pure functions over JSON objects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/informer.h"
#include "common/json.h"
#include "controllers/manager/template_hash.h"

namespace shepherd::controllers::deployment {

inline constexpr const char* kRevision = "deployment.kubernetes.io/revision";
inline constexpr const char* kDesiredReplicas = "deployment.kubernetes.io/desired-replicas";
inline constexpr const char* kMaxReplicas = "deployment.kubernetes.io/max-replicas";
inline constexpr const char* kHashLabel = "pod-template-hash";

// An IntOrString ("25%" or 1) against `total`: percentages round up or down as asked.
int64_t intOrPercent(const json::Value* v, int64_t total, bool round_up, int64_t def);
int64_t replicasOf(const json::Value& obj);  // spec.replicas, default 1
int64_t maxSurge(const json::Value& d);
// maxUnavailable, at least 1 when both budgets resolve to 0 (as upstream).
int64_t maxUnavailable(const json::Value& d);
bool isRollingUpdate(const json::Value& d);

// The new ReplicaSet's size for the next step of a rolling update.
int64_t newRsNewReplicas(const json::Value& d, const std::vector<client::Object>& all,
                         const json::Value& new_rs);

// Whether a ReplicaSet's template is the Deployment's, ignoring the hash label.
bool equalIgnoreHash(const json::Value& rs_template, const json::Value& d_template);
int64_t revisionOf(const json::Value& obj);

// status.conditions helpers (type, status, reason, message; timestamps as upstream:
// lastTransitionTime kept while the status holds; no update when status and reason hold).
const json::Value* condition(const json::Value& status, std::string_view type);
void setCondition(json::Value& status, const std::string& type, const std::string& cond_status,
                  const std::string& reason, const std::string& message, const std::string& now,
                  json::Allocator& a);
void removeCondition(json::Value& status, std::string_view type, json::Allocator& a);

// Upstream's DeploymentComplete / DeploymentProgressing over a new status.
bool deploymentComplete(const json::Value& d, const json::Value& status);
bool deploymentProgressing(const json::Value& d, const json::Value& status);

}  // namespace shepherd::controllers::deployment
