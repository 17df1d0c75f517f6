#include "controllers/app/controller_descriptors.h"

#include <optional>
#include <sstream>

#include "client/discovery.h"
#include "common/clock.h"
#include "common/log.h"
#include "controllers/cronjob/cronjob_controller.h"
#include "controllers/daemonset/daemonset_controller.h"
#include "controllers/deployment/deployment_controller.h"
#include "controllers/disruption/disruption_controller.h"
#include "controllers/endpoint/endpoints_controller.h"
#include "controllers/endpointslice/endpointslice_controller.h"
#include "controllers/ephemeral/ephemeral_controller.h"
#include "controllers/garbagecollector/garbage_collector.h"
#include "controllers/job/job_controller.h"
#include "controllers/localpath/local_path_provisioner.h"
#include "controllers/namespace/namespace_controller.h"
#include "controllers/nodelifecycle/node_lifecycle_controller.h"
#include "controllers/persistentvolume/pv_controller.h"
#include "controllers/podgc/pod_gc_controller.h"
#include "controllers/replicaset/replica_set_controller.h"
#include "controllers/resourcequota/resource_quota_controller.h"
#include "controllers/serviceaccount/root_ca_publisher.h"
#include "controllers/serviceaccount/serviceaccounts_controller.h"
#include "controllers/statefulset/statefulset_controller.h"
#include "controllers/ttlafterfinished/ttl_after_finished_controller.h"
#include "controllers/volumeprotection/protection_controllers.h"

namespace shepherd::controllers {

namespace {

int workers(const Flags& flags, const std::string& flag) {
  return std::max(1, flags.getInt(flag));
}

Result<std::chrono::milliseconds> duration(const Flags& flags, const std::string& flag) {
  auto d = clock::parseDuration(flags.get(flag));
  if (!d) return ApiError::badRequest("bad --" + flag);
  return *d;
}

RunningController withEvents(ControllerContext& c, const std::string& component) {
  RunningController r;
  r.events = std::make_unique<client::EventRecorder>(c.client, component);
  return r;
}

// Every resource the server serves, asked again each second until discovery works;
// nullopt when the process is asked to stop meanwhile.
std::optional<client::DiscoveryResult> discoverAll(ControllerContext& c) {
  client::DiscoveryResult found = client::discoverPreferredResources(c.client);
  while (!found.failures.empty()) {
    LOG_WARN("controller-manager: discovery failed (" << found.failures.front() << "); retrying");
    if (!c.wait(std::chrono::seconds(1))) return std::nullopt;
    found = client::discoverPreferredResources(c.client);
  }
  return found;
}

Result<RunningController> garbageCollector(ControllerContext& c) {
  // The collector watches every resource the server serves: discover them first.
  std::optional<client::DiscoveryResult> found = discoverAll(c);
  if (!found) return RunningController{};
  RunningController r;
  auto gc = std::make_unique<GarbageCollector>(c.client, c.informers, found->resources);
  LOG_INFO("controller-manager: garbage collector monitors " << gc->monitored() << " resources");
  r.controller = std::move(gc);
  r.workers = workers(c.flags, "concurrent-gc-syncs");
  return r;
}

Result<RunningController> replicaSet(ControllerContext& c) {
  RunningController r = withEvents(c, "replicaset-controller");
  r.controller = std::make_unique<ReplicaSetController>(c.client, c.informers, *r.events);
  r.workers = workers(c.flags, "concurrent-replicaset-syncs");
  return r;
}

// Upstream's replication manager: the ReplicaSet controller over ReplicationControllers.
Result<RunningController> replicationController(ControllerContext& c) {
  RunningController r = withEvents(c, "replication-controller");
  r.controller =
      std::make_unique<ReplicaSetController>(c.client, c.informers, *r.events, replicationControllerKind());
  r.workers = workers(c.flags, "concurrent-rc-syncs");
  return r;
}

Result<RunningController> jobs(ControllerContext& c) {
  RunningController r = withEvents(c, "job-controller");
  r.controller = std::make_unique<job::JobController>(c.client, c.informers, *r.events);
  r.workers = workers(c.flags, "concurrent-job-syncs");
  return r;
}

Result<RunningController> cronJobs(ControllerContext& c) {
  RunningController r = withEvents(c, "cronjob-controller");
  r.controller = std::make_unique<CronJobController>(c.client, c.informers, *r.events);
  r.workers = workers(c.flags, "concurrent-cron-job-syncs");
  return r;
}

Result<RunningController> ttlAfterFinished(ControllerContext& c) {
  RunningController r;
  r.controller = std::make_unique<TtlAfterFinishedController>(c.client, c.informers);
  r.workers = workers(c.flags, "concurrent-ttl-after-finished-syncs");
  return r;
}

Result<RunningController> daemonSets(ControllerContext& c) {
  RunningController r = withEvents(c, "daemonset-controller");
  r.controller = std::make_unique<daemon::DaemonSetController>(c.client, c.informers, *r.events);
  r.workers = workers(c.flags, "concurrent-daemonset-syncs");
  return r;
}

Result<RunningController> statefulSets(ControllerContext& c) {
  RunningController r = withEvents(c, "statefulset-controller");
  r.controller = std::make_unique<statefulset::StatefulSetController>(c.client, c.informers, *r.events);
  r.workers = workers(c.flags, "concurrent-statefulset-syncs");
  return r;
}

Result<RunningController> disruptionBudgets(ControllerContext& c) {
  RunningController r = withEvents(c, "controllermanager");
  r.controller = std::make_unique<disruption::DisruptionController>(c.client, c.informers, *r.events);
  r.workers = 1;  // upstream runs one worker per queue
  return r;
}

Result<RunningController> persistentVolumeBinder(ControllerContext& c) {
  RunningController r = withEvents(c, "persistentvolume-controller");
  r.controller =
      std::make_unique<persistentvolume::PersistentVolumeController>(c.client, c.informers, *r.events);
  r.workers = 1;  // upstream's claim and volume workers are one each and not reentrant
  return r;
}

Result<RunningController> localPathProvisioner(ControllerContext& c) {
  RunningController r = withEvents(c, localpath::kProvisionerName);
  r.controller = std::make_unique<localpath::LocalPathProvisioner>(c.client, c.informers, *r.events);
  r.workers = 2;
  return r;
}

Result<RunningController> resourceQuota(ControllerContext& c) {
  // Counts of any kind the server serves: discover them (as the garbage collector does).
  std::optional<client::DiscoveryResult> found = discoverAll(c);
  if (!found) return RunningController{};
  auto period = duration(c.flags, "resource-quota-sync-period");
  if (!period) return period.error();
  RunningController r;
  r.controller = std::make_unique<resourcequota::ResourceQuotaController>(c.client, c.informers,
                                                                          found->resources, *period);
  r.workers = workers(c.flags, "concurrent-resource-quota-syncs");
  return r;
}

Result<RunningController> claimProtection(ControllerContext& c) {
  RunningController r;
  r.controller = std::make_unique<volumeprotection::ClaimProtectionController>(c.client, c.informers);
  return r;
}

Result<RunningController> volumeProtection(ControllerContext& c) {
  RunningController r;
  r.controller = std::make_unique<volumeprotection::VolumeProtectionController>(c.client, c.informers);
  return r;
}

Result<RunningController> ephemeralVolumes(ControllerContext& c) {
  RunningController r = withEvents(c, "ephemeral_volume");
  r.controller = std::make_unique<ephemeral::EphemeralVolumeController>(c.client, c.informers, *r.events);
  r.workers = workers(c.flags, "concurrent-ephemeralvolume-syncs");
  return r;
}

Result<RunningController> deployment(ControllerContext& c) {
  RunningController r = withEvents(c, "deployment-controller");
  r.controller = std::make_unique<DeploymentController>(c.client, c.informers, *r.events);
  r.workers = workers(c.flags, "concurrent-deployment-syncs");
  return r;
}

Result<RunningController> endpoints(ControllerContext& c) {
  RunningController r;
  r.controller = std::make_unique<EndpointsController>(c.client, c.informers);
  r.workers = workers(c.flags, "concurrent-endpoint-syncs");
  return r;
}

Result<RunningController> endpointSlices(ControllerContext& c) {
  int per_slice = c.flags.getInt("max-endpoints-per-slice");
  if (per_slice < 1 || per_slice > 1000)
    return ApiError::badRequest("--max-endpoints-per-slice must be between 1 and 1000");
  RunningController r;
  r.controller =
      std::make_unique<EndpointSliceController>(c.client, c.informers, static_cast<size_t>(per_slice));
  r.workers = workers(c.flags, "concurrent-service-endpoint-syncs");
  return r;
}

Result<RunningController> nodeLifecycle(ControllerContext& c) {
  auto period = duration(c.flags, "node-monitor-period");
  auto grace = duration(c.flags, "node-monitor-grace-period");
  if (!period || !grace)
    return ApiError::badRequest("bad --node-monitor-period or --node-monitor-grace-period");
  NodeLifecycleOptions o;
  o.monitor_period = *period;
  o.grace_period = *grace;
  RunningController r = withEvents(c, "node-controller");
  r.controller = std::make_unique<NodeLifecycleController>(c.client, c.informers, *r.events, o);
  r.workers = 2;
  return r;
}

Result<RunningController> podGc(ControllerContext& c) {
  auto period = duration(c.flags, "pod-gc-check-period");
  auto quarantine = duration(c.flags, "pod-gc-quarantine");
  if (!period || !quarantine || period->count() <= 0)
    return ApiError::badRequest("bad --pod-gc-check-period or --pod-gc-quarantine");
  PodGcOptions o;
  o.terminated_threshold = c.flags.getInt("terminated-pod-gc-threshold");
  o.check_period = *period;
  o.quarantine = *quarantine;
  RunningController r;
  r.controller = std::make_unique<PodGcController>(c.client, c.informers, o);
  return r;
}

Result<RunningController> namespaces(ControllerContext& c) {
  RunningController r;
  r.controller = std::make_unique<NamespaceController>(c.client, c.informers);
  r.workers = workers(c.flags, "concurrent-namespace-syncs");
  return r;
}

Result<RunningController> serviceAccounts(ControllerContext& c) {
  RunningController r;
  r.controller = std::make_unique<ServiceAccountsController>(c.client, c.informers);
  r.workers = workers(c.flags, "concurrent-serviceaccount-syncs");
  return r;
}

Result<RunningController> rootCaPublisher(ControllerContext& c) {
  RunningController r;
  r.controller = std::make_unique<RootCaPublisher>(c.client, c.informers, c.root_ca_pem);
  return r;
}

}  // namespace

// In the order they are made (the garbage collector first: its informers cover every
// resource).
const std::vector<ControllerDescriptor>& controllerDescriptors() {
  static const std::vector<ControllerDescriptor> all = {
      {"garbagecollector", garbageCollector},
      {"replicaset", replicaSet},
      {"replicationcontroller", replicationController},
      {"deployment", deployment},
      {"daemonset", daemonSets},
      {"job", jobs},
      {"statefulset", statefulSets},
      {"disruption", disruptionBudgets},
      {"persistentvolume-binder", persistentVolumeBinder},
      {"local-path-provisioner", localPathProvisioner},
      {"resourcequota", resourceQuota},
      {"pvc-protection", claimProtection},
      {"pv-protection", volumeProtection},
      {"ephemeral-volume", ephemeralVolumes},
      {"cronjob", cronJobs},
      {"ttl-after-finished", ttlAfterFinished},
      {"endpoint", endpoints},
      {"endpointslice", endpointSlices},
      {"nodelifecycle", nodeLifecycle},
      {"podgc", podGc},
      {"namespace", namespaces},
      {"serviceaccount", serviceAccounts},
      {"root-ca-cert-publisher", rootCaPublisher},
  };
  return all;
}

void defineControllerFlags(Flags& flags) {
  std::set<std::string> names;
  for (const auto& d : controllerDescriptors()) names.insert(d.name);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  flags.define(
      "controllers", "*",
      "Controllers to run: '*' for all (" + list + "), 'name' to add one, '-name' to leave one out.");
  flags.define("node-monitor-period", "5s", "How often every node's health is checked.");
  flags.define("node-monitor-grace-period", "40s",
               "How long a node may go without a status heartbeat or Lease renewal before it is Unknown.");
  flags.define("concurrent-gc-syncs", "5", "Objects the garbage collector checks at once.");
  flags.define("terminated-pod-gc-threshold", "12500",
               "Terminated pods kept before the pod garbage collector deletes the oldest (<= 0: no limit).");
  flags.define("pod-gc-check-period", "20s",
               "How often the pod garbage collector looks (Shepherd; upstream: 20s).");
  flags.define("pod-gc-quarantine", "40s",
               "How long a pod's node must be missing before the pod garbage collector confirms it gone "
               "(Shepherd; upstream: 40s).");
  flags.define("concurrent-replicaset-syncs", "5", "ReplicaSets synced at once.");
  flags.define("concurrent-rc-syncs", "5", "ReplicationControllers synced at once.");
  flags.define("concurrent-daemonset-syncs", "2", "DaemonSets synced at once.");
  flags.define("concurrent-job-syncs", "5", "Jobs synced at once.");
  flags.define("concurrent-statefulset-syncs", "5", "StatefulSets synced at once.");
  flags.define("concurrent-cron-job-syncs", "5", "CronJobs synced at once.");
  flags.define("concurrent-ttl-after-finished-syncs", "5", "Finished Jobs checked for their TTL at once.");
  flags.define("concurrent-deployment-syncs", "5", "Deployments synced at once.");
  flags.define("concurrent-resource-quota-syncs", "5", "ResourceQuotas recounted at once.");
  flags.define("resource-quota-sync-period", "5m0s", "How often every ResourceQuota is recounted.");
  flags.define("concurrent-ephemeralvolume-syncs", "5", "Pods given their ephemeral volume claims at once.");
  flags.define("concurrent-endpoint-syncs", "5", "Services whose Endpoints are synced at once.");
  flags.define("concurrent-service-endpoint-syncs", "5", "Services whose EndpointSlices are synced at once.");
  flags.define("max-endpoints-per-slice", "100", "Most endpoints one EndpointSlice holds (1 to 1000).");
  flags.define("root-ca-file", "",
               "The cluster CA certificate published as ConfigMap kube-root-ca.crt in every namespace; when "
               "neither it nor FILE.key exists, a placeholder CA is generated there.");
  flags.define("concurrent-namespace-syncs", "10", "Namespaces emptied at once.");
  flags.define("concurrent-serviceaccount-syncs", "5",
               "Namespaces checked for their ServiceAccount at once.");
}

std::set<std::string> enabledControllers(const std::string& spec) {
  std::vector<std::string> items;
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) items.push_back(item);
  std::set<std::string> on;
  for (const auto& i : items)
    if (i == "*")
      for (const auto& d : controllerDescriptors()) on.insert(d.name);
  for (const auto& i : items) {
    if (i == "*") continue;
    if (i[0] == '-')
      on.erase(i.substr(1));
    else
      on.insert(i);
  }
  return on;
}

}  // namespace shepherd::controllers
