#include "apis/catalog.h"

#include "apis/kinds/kinds.h"

namespace shepherd::apis {

namespace {

const std::vector<std::string> kCreateOnly = {"create"};

// Fields left out of a designated initializer keep Resource's defaults, which is the
// point of writing the rows this way; g++ 12 warns about them all the same.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

// Every served resource, in discovery order (kubectl api-resources lists them so). One
// resource per entry; fields left out keep Resource's defaults.
std::vector<Resource> servedResources() {
  using namespace kinds;
  const std::string core = "io.k8s.api.core.v1.";
  const std::vector<std::string> all = {"all"};
  // clang-format off
  return {
      {.version = "v1", .kind = "Namespace", .plural = "namespaces", .singular = "namespace", .short_names = {"ns"},
       .namespaced = false, .subresources = {"finalize", "status"}, .return_deleted_object = true,
       .storage_prefix = "/registry/namespaces/", .schema_name = core + "Namespace", .strategy = namespaceStrategy()},
      {.version = "v1", .kind = "Pod", .plural = "pods", .singular = "pod", .short_names = {"po"}, .categories = all,
       .subresources = {"attach", "binding", "eviction", "exec", "log", "portforward", "status"}, .tracks_generation = true,
       .return_deleted_object = true, .storage_prefix = "/registry/pods/", .schema_name = core + "Pod",
       .strategy = podStrategy()},
      {.version = "v1", .kind = "Node", .plural = "nodes", .singular = "node", .short_names = {"no"},
       .namespaced = false, .subresources = {"status"}, .storage_prefix = "/registry/minions/",
       .schema_name = core + "Node", .strategy = nodeStrategy()},
      {.version = "v1", .kind = "Event", .plural = "events", .singular = "event", .short_names = {"ev"},
       .storage_prefix = "/registry/events/", .schema_name = core + "Event", .strategy = coreEventStrategy()},
      {.version = "v1", .kind = "ConfigMap", .plural = "configmaps", .singular = "configmap", .short_names = {"cm"},
       .storage_prefix = "/registry/configmaps/", .schema_name = core + "ConfigMap", .strategy = configMapStrategy()},
      {.version = "v1", .kind = "Secret", .plural = "secrets", .singular = "secret",
       .storage_prefix = "/registry/secrets/", .schema_name = core + "Secret", .strategy = secretStrategy()},
      {.version = "v1", .kind = "ServiceAccount", .plural = "serviceaccounts", .singular = "serviceaccount",
       .short_names = {"sa"}, .subresources = {"token"}, .storage_prefix = "/registry/serviceaccounts/",
       .schema_name = core + "ServiceAccount", .strategy = serviceAccountStrategy()},
      {.version = "v1", .kind = "PodTemplate", .plural = "podtemplates", .singular = "podtemplate",
       .storage_prefix = "/registry/podtemplates/", .schema_name = core + "PodTemplate",
       .strategy = podTemplateStrategy()},
      {.version = "v1", .kind = "Service", .plural = "services", .singular = "service", .short_names = {"svc"},
       .categories = all, .subresources = {"status"}, .return_deleted_object = true,
       .storage_prefix = "/registry/services/specs/", .schema_name = core + "Service", .strategy = serviceStrategy()},
      {.version = "v1", .kind = "Endpoints", .plural = "endpoints", .singular = "endpoints", .short_names = {"ep"},
       .storage_prefix = "/registry/services/endpoints/", .schema_name = core + "Endpoints",
       .strategy = endpointsStrategy()},
      {.version = "v1", .kind = "ReplicationController", .plural = "replicationcontrollers",
       .singular = "replicationcontroller", .short_names = {"rc"}, .categories = all,
       .subresources = {"scale", "status"}, .tracks_generation = true, .storage_prefix = "/registry/controllers/",
       .schema_name = core + "ReplicationController", .strategy = replicationControllerStrategy()},
      {.version = "v1", .kind = "PersistentVolumeClaim", .plural = "persistentvolumeclaims",
       .singular = "persistentvolumeclaim", .short_names = {"pvc"}, .subresources = {"status"},
       .return_deleted_object = true, .storage_prefix = "/registry/persistentvolumeclaims/", .schema_name = core + "PersistentVolumeClaim",
       .strategy = persistentVolumeClaimStrategy()},
      {.version = "v1", .kind = "PersistentVolume", .plural = "persistentvolumes", .singular = "persistentvolume",
       .short_names = {"pv"}, .namespaced = false, .subresources = {"status"},
       .return_deleted_object = true, .storage_prefix = "/registry/persistentvolumes/", .schema_name = core + "PersistentVolume",
       .strategy = persistentVolumeStrategy()},
      {.version = "v1", .kind = "ResourceQuota", .plural = "resourcequotas", .singular = "resourcequota",
       .short_names = {"quota"}, .subresources = {"status"}, .storage_prefix = "/registry/resourcequotas/",
       .schema_name = core + "ResourceQuota", .strategy = resourceQuotaStrategy()},
      {.version = "v1", .kind = "LimitRange", .plural = "limitranges", .singular = "limitrange",
       .short_names = {"limits"}, .storage_prefix = "/registry/limitranges/", .schema_name = core + "LimitRange",
       .strategy = limitRangeStrategy()},
      // The legacy way to bind a pod (POST .../namespaces/{ns}/bindings), answered as pods/binding.
      {.version = "v1", .kind = "Binding", .plural = "bindings", .singular = "binding", .verbs = kCreateOnly,
       .stored = false, .schema_name = core + "Binding"},
      {.group = "apps", .version = "v1", .kind = "Deployment", .plural = "deployments", .singular = "deployment",
       .short_names = {"deploy"}, .categories = all, .subresources = {"scale", "status"}, .tracks_generation = true,
       .storage_prefix = "/registry/deployments/", .schema_name = "io.k8s.api.apps.v1.Deployment",
       .strategy = deploymentStrategy()},
      {.group = "apps", .version = "v1", .kind = "ReplicaSet", .plural = "replicasets", .singular = "replicaset",
       .short_names = {"rs"}, .categories = all, .subresources = {"scale", "status"}, .tracks_generation = true,
       .storage_prefix = "/registry/replicasets/", .schema_name = "io.k8s.api.apps.v1.ReplicaSet",
       .strategy = replicaSetStrategy()},
      {.group = "apps", .version = "v1", .kind = "DaemonSet", .plural = "daemonsets", .singular = "daemonset",
       .short_names = {"ds"}, .categories = all, .subresources = {"status"}, .tracks_generation = true,
       .storage_prefix = "/registry/daemonsets/", .schema_name = "io.k8s.api.apps.v1.DaemonSet",
       .strategy = daemonSetStrategy()},
      {.group = "apps", .version = "v1", .kind = "StatefulSet", .plural = "statefulsets", .singular = "statefulset",
       .short_names = {"sts"}, .categories = all, .subresources = {"scale", "status"}, .tracks_generation = true,
       .storage_prefix = "/registry/statefulsets/", .schema_name = "io.k8s.api.apps.v1.StatefulSet",
       .strategy = statefulSetStrategy()},
      {.group = "apps", .version = "v1", .kind = "ControllerRevision", .plural = "controllerrevisions",
       .singular = "controllerrevision", .storage_prefix = "/registry/controllerrevisions/",
       .schema_name = "io.k8s.api.apps.v1.ControllerRevision", .strategy = controllerRevisionStrategy()},
      {.group = "batch", .version = "v1", .kind = "Job", .plural = "jobs", .singular = "job", .categories = all,
       .subresources = {"status"}, .tracks_generation = true, .storage_prefix = "/registry/jobs/",
       .schema_name = "io.k8s.api.batch.v1.Job", .strategy = jobStrategy()},
      {.group = "batch", .version = "v1", .kind = "CronJob", .plural = "cronjobs", .singular = "cronjob",
       .short_names = {"cj"}, .categories = all, .subresources = {"status"}, .tracks_generation = true,
       .storage_prefix = "/registry/cronjobs/", .schema_name = "io.k8s.api.batch.v1.CronJob",
       .strategy = cronJobStrategy()},
      {.group = "policy", .version = "v1", .kind = "PodDisruptionBudget", .plural = "poddisruptionbudgets",
       .singular = "poddisruptionbudget", .short_names = {"pdb"}, .subresources = {"status"},
       .tracks_generation = true, .storage_prefix = "/registry/poddisruptionbudgets/",
       .schema_name = "io.k8s.api.policy.v1.PodDisruptionBudget", .strategy = podDisruptionBudgetStrategy()},
      {.group = "scheduling.k8s.io", .version = "v1", .kind = "PriorityClass", .plural = "priorityclasses",
       .singular = "priorityclass", .short_names = {"pc"}, .namespaced = false,
       .storage_prefix = "/registry/priorityclasses/", .schema_name = "io.k8s.api.scheduling.v1.PriorityClass",
       .strategy = priorityClassStrategy()},
      {.group = "storage.k8s.io", .version = "v1", .kind = "StorageClass", .plural = "storageclasses",
       .singular = "storageclass", .short_names = {"sc"}, .namespaced = false,
       .return_deleted_object = true, .storage_prefix = "/registry/storageclasses/", .schema_name = "io.k8s.api.storage.v1.StorageClass",
       .strategy = storageClassStrategy()},
      {.group = "coordination.k8s.io", .version = "v1", .kind = "Lease", .plural = "leases", .singular = "lease",
       .storage_prefix = "/registry/leases/", .schema_name = "io.k8s.api.coordination.v1.Lease",
       .strategy = leaseStrategy()},
      {.group = "discovery.k8s.io", .version = "v1", .kind = "EndpointSlice", .plural = "endpointslices",
       .singular = "endpointslice", .storage_prefix = "/registry/endpointslices/",
       .schema_name = "io.k8s.api.discovery.v1.EndpointSlice", .strategy = endpointSliceStrategy()},
      {.group = "rbac.authorization.k8s.io", .version = "v1", .kind = "ClusterRoleBinding",
       .plural = "clusterrolebindings", .singular = "clusterrolebinding", .namespaced = false,
       .storage_prefix = "/registry/clusterrolebindings/", .schema_name = "io.k8s.api.rbac.v1.ClusterRoleBinding",
       .strategy = clusterRoleBindingStrategy()},
      {.group = "rbac.authorization.k8s.io", .version = "v1", .kind = "ClusterRole", .plural = "clusterroles",
       .singular = "clusterrole", .namespaced = false, .storage_prefix = "/registry/clusterroles/",
       .schema_name = "io.k8s.api.rbac.v1.ClusterRole", .strategy = clusterRoleStrategy()},
      {.group = "rbac.authorization.k8s.io", .version = "v1", .kind = "RoleBinding", .plural = "rolebindings",
       .singular = "rolebinding", .storage_prefix = "/registry/rolebindings/",
       .schema_name = "io.k8s.api.rbac.v1.RoleBinding", .strategy = roleBindingStrategy()},
      {.group = "rbac.authorization.k8s.io", .version = "v1", .kind = "Role", .plural = "roles", .singular = "role",
       .storage_prefix = "/registry/roles/", .schema_name = "io.k8s.api.rbac.v1.Role", .strategy = roleStrategy()},
      {.group = "events.k8s.io", .version = "v1", .kind = "Event", .plural = "events", .singular = "event",
       .short_names = {"ev"}, .storage_prefix = "/registry/events/", .schema_name = "io.k8s.api.events.v1.Event",
       .strategy = eventsV1EventStrategy()},
      // Reviews: answered at once by the API server, never stored.
      {.group = "authorization.k8s.io", .version = "v1", .kind = "SelfSubjectAccessReview",
       .plural = "selfsubjectaccessreviews", .singular = "selfsubjectaccessreview", .namespaced = false,
       .verbs = kCreateOnly, .stored = false, .schema_name = "io.k8s.api.authorization.v1.SelfSubjectAccessReview"},
      {.group = "authorization.k8s.io", .version = "v1", .kind = "SubjectAccessReview",
       .plural = "subjectaccessreviews", .singular = "subjectaccessreview", .namespaced = false,
       .verbs = kCreateOnly, .stored = false, .schema_name = "io.k8s.api.authorization.v1.SubjectAccessReview"},
      {.group = "authorization.k8s.io", .version = "v1", .kind = "SelfSubjectRulesReview",
       .plural = "selfsubjectrulesreviews", .singular = "selfsubjectrulesreview", .namespaced = false,
       .verbs = kCreateOnly, .stored = false, .schema_name = "io.k8s.api.authorization.v1.SelfSubjectRulesReview"},
      {.group = "authentication.k8s.io", .version = "v1", .kind = "SelfSubjectReview",
       .plural = "selfsubjectreviews", .singular = "selfsubjectreview", .namespaced = false, .verbs = kCreateOnly,
       .stored = false, .schema_name = "io.k8s.api.authentication.v1.SelfSubjectReview"},
  };
  // clang-format on
}

}  // namespace

Catalog::Catalog() {
  for (Resource& r : servedResources()) {
    if (!r.strategy) r.strategy = std::make_shared<Strategy>();
    bool seen = false;
    for (const auto& gv : group_versions_) seen = seen || (gv.group == r.group && gv.version == r.version);
    if (!seen) group_versions_.push_back({r.group, r.version});
    resources_.push_back(std::make_shared<const Resource>(std::move(r)));
  }
}

const Catalog& Catalog::instance() {
  static const Catalog c;
  return c;
}

std::vector<std::shared_ptr<const Resource>> Catalog::resourcesOf(const std::string& group,
                                                                  const std::string& version) const {
  std::vector<std::shared_ptr<const Resource>> out;
  for (auto& r : resources_)
    if (r->group == group && r->version == version) out.push_back(r);
  return out;
}

std::shared_ptr<const Resource> Catalog::find(const std::string& group, const std::string& version,
                                              const std::string& plural) const {
  for (auto& r : resources_)
    if (r->group == group && r->version == version && r->plural == plural) return r;
  return nullptr;
}

}  // namespace shepherd::apis
