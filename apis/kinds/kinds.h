// The strategy of every served kind.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apis/resource.h"

namespace shepherd::apis::kinds {

std::shared_ptr<const Strategy> podStrategy();
std::shared_ptr<const Strategy> nodeStrategy();
std::shared_ptr<const Strategy> namespaceStrategy();
std::shared_ptr<const Strategy> serviceStrategy();
std::shared_ptr<const Strategy> endpointsStrategy();
std::shared_ptr<const Strategy> endpointSliceStrategy();
std::shared_ptr<const Strategy> configMapStrategy();
std::shared_ptr<const Strategy> secretStrategy();
std::shared_ptr<const Strategy> serviceAccountStrategy();
std::shared_ptr<const Strategy> podTemplateStrategy();
std::shared_ptr<const Strategy> replicationControllerStrategy();
std::shared_ptr<const Strategy> coreEventStrategy();
std::shared_ptr<const Strategy> eventsV1EventStrategy();
std::shared_ptr<const Strategy> leaseStrategy();
std::shared_ptr<const Strategy> replicaSetStrategy();
std::shared_ptr<const Strategy> deploymentStrategy();
std::shared_ptr<const Strategy> daemonSetStrategy();
std::shared_ptr<const Strategy> statefulSetStrategy();
std::shared_ptr<const Strategy> controllerRevisionStrategy();
std::shared_ptr<const Strategy> jobStrategy();
std::shared_ptr<const Strategy> cronJobStrategy();
std::shared_ptr<const Strategy> podDisruptionBudgetStrategy();
std::shared_ptr<const Strategy> priorityClassStrategy();
std::shared_ptr<const Strategy> persistentVolumeStrategy();
std::shared_ptr<const Strategy> persistentVolumeClaimStrategy();
std::shared_ptr<const Strategy> storageClassStrategy();
std::shared_ptr<const Strategy> limitRangeStrategy();
std::shared_ptr<const Strategy> resourceQuotaStrategy();
std::shared_ptr<const Strategy> roleStrategy();
std::shared_ptr<const Strategy> clusterRoleStrategy();
std::shared_ptr<const Strategy> roleBindingStrategy();
std::shared_ptr<const Strategy> clusterRoleBindingStrategy();

// The two PriorityClasses every cluster has (scheduling.SystemPriorityClasses), created at
// bootstrap; a "system-" name must be one of them with its value.
struct SystemPriorityClass {
  std::string name;
  int64_t value;
  std::string description;
};
const std::vector<SystemPriorityClass>& systemPriorityClasses();
const SystemPriorityClass* systemPriorityClass(const std::string& name);

// Whether a StorageClass carries the is-default-class annotation (GA or beta) as "true".
bool isDefaultStorageClass(const json::Value& obj);

// A Service spec's clusterIP, clusterIPs, ipFamilies and ipFamilyPolicy, each alone and
// together (ValidateServiceClusterIPsRelatedFields). The registry runs it again before
// it allocates, as upstream's allocator does.
void validateServiceClusterIPs(const json::Value& spec, FieldErrors& errs);

}  // namespace shepherd::apis::kinds
