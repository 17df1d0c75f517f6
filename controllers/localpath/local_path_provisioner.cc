#include "controllers/localpath/local_path_provisioner.h"

#include "common/log.h"
#include "controllers/manager/object_meta.h"
#include "meta/persistent_volumes.h"

namespace shepherd::controllers::localpath {

namespace {

using meta::annotation;
using meta::kProvisionedBy;
using meta::kSelectedNode;
using meta::kStorageProvisioner;
using meta::storageClassOf;

constexpr const char* kClaimPrefix = "claim/";
constexpr const char* kVolumePrefix = "volume/";
constexpr std::chrono::milliseconds kPoll{1000};
constexpr std::chrono::milliseconds kRetry{15000};

bool hasPrefix(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}

std::string str(const std::string& s) {
  return json::serialize(json::Value(rapidjson::StringRef(s.data(), s.size())));
}

std::string parentOf(const std::string& dir) {
  size_t slash = dir.find_last_of('/');
  return slash == std::string::npos || slash == 0 ? "/" : dir.substr(0, slash);
}

// The node a volume's kubernetes.io/hostname affinity names.
std::string affinityHost(const json::Value& pv) {
  const json::Value* terms = json::findPath(pv, {"spec", "nodeAffinity", "required", "nodeSelectorTerms"});
  if (!terms || !terms->IsArray()) return "";
  for (const auto& t : terms->GetArray()) {
    const json::Value* exprs = json::find(t, "matchExpressions");
    if (!exprs || !exprs->IsArray()) continue;
    for (const auto& e : exprs->GetArray()) {
      const json::Value* values = json::find(e, "values");
      if (json::getString(e, "key") == "kubernetes.io/hostname" && json::getString(e, "operator") == "In" &&
          values && values->IsArray() && values->Size() == 1 && (*values)[0].IsString())
        return std::string(json::view((*values)[0]));
    }
  }
  return "";
}

}  // namespace

LocalPathProvisioner::LocalPathProvisioner(client::Client& c, client::SharedInformers& informers,
                                           client::EventRecorder& events, const clock::Clock& clk)
    : Controller("local-path-provisioner"),
      client_(c),
      claims_(informers.get(client::allObjects("", "v1", "persistentvolumeclaims"))),
      volumes_(informers.get(client::allObjects("", "v1", "persistentvolumes"))),
      nodes_(informers.get(client::allObjects("", "v1", "nodes"))),
      classes_(informers.get(client::allObjects("storage.k8s.io", "v1", "storageclasses"))),
      events_(events),
      clock_(clk) {
  client::EventHandlers ch;
  auto onClaim = [this](const client::Object& o) {
    if (annotation(*o, kStorageProvisioner) == kProvisionerName)
      queue_.add(kClaimPrefix + client::objectKey(*o));
  };
  ch.on_add = onClaim;
  ch.on_update = [onClaim](const client::Object&, const client::Object& o) { onClaim(o); };
  claims_.addHandlers(std::move(ch));
  client::EventHandlers vh;
  auto onVolume = [this](const client::Object& o) {
    if (annotation(*o, kProvisionedBy) == kProvisionerName) queue_.add(kVolumePrefix + nameOf(*o));
  };
  vh.on_add = onVolume;
  vh.on_update = [onVolume](const client::Object&, const client::Object& o) { onVolume(o); };
  volumes_.addHandlers(std::move(vh));
  queue_.add("class");
}

Result<SyncResult> LocalPathProvisioner::sync(const std::string& key) {
  if (key == "class") {
    if (auto st = ensureClass(); !st) return st.error();
    return SyncResult{};
  }
  if (hasPrefix(key, kClaimPrefix)) {
    client::Object claim = claims_.get(key.substr(std::string_view(kClaimPrefix).size()));
    return claim ? provision(*claim) : SyncResult{};
  }
  if (hasPrefix(key, kVolumePrefix)) {
    client::Object volume = volumes_.get(key.substr(std::string_view(kVolumePrefix).size()));
    return volume ? remove(*volume) : SyncResult{};
  }
  return SyncResult{};
}

Status LocalPathProvisioner::ensureClass() {
  if (classes_.get(kClassName)) return okStatus();
  std::string body =
      std::string(R"({"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":")") +
      kClassName +
      R"(","annotations":{"storageclass.kubernetes.io/is-default-class":"true",)"
      R"("defaultVolumeType":"local"}},"provisioner":")" +
      kProvisionerName + R"(","volumeBindingMode":"WaitForFirstConsumer","reclaimPolicy":"Delete"})";
  auto r = client_.post("/apis/storage.k8s.io/v1/storageclasses", body);
  if (!r && r.error().code != 409) return r.error();
  if (r) LOG_INFO("local-path-provisioner: created the default StorageClass " << kClassName);
  return okStatus();
}

Result<SyncResult> LocalPathProvisioner::provision(const json::Value& claim) {
  if (annotation(claim, kStorageProvisioner) != kProvisionerName) return SyncResult{};
  if (!json::getStringPath(claim, {"spec", "volumeName"}).empty()) return SyncResult{};
  if (const json::Value* d = json::findPath(claim, {"metadata", "deletionTimestamp"}); d && !d->IsNull())
    return SyncResult{};
  std::string cls = storageClassOf(claim);
  client::Object sc = classes_.get(cls);
  std::string node = annotation(claim, kSelectedNode);
  if (sc && json::getString(*sc, "volumeBindingMode") == "WaitForFirstConsumer" && node.empty())
    return SyncResult{};
  std::string pv_name = "pvc-" + uidOf(claim);
  if (volumes_.get(pv_name)) return SyncResult{};
  auto failed = [&](const std::string& why) -> Result<SyncResult> {
    events_.event(claim, "v1", "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
                  "failed to provision volume with StorageClass \"" + cls + "\": " + why);
    return SyncResult{kRetry};
  };
  if (const json::Value* sel = json::findPath(claim, {"spec", "selector"}); sel && !sel->IsNull())
    return failed("claim.Spec.Selector is not supported");
  if (const json::Value* modes = json::findPath(claim, {"spec", "accessModes"}); modes && modes->IsArray())
    for (const auto& m : modes->GetArray())
      if (!m.IsString() || (json::view(m) != "ReadWriteOnce" && json::view(m) != "ReadWriteOncePod"))
        return failed("NodePath only supports ReadWriteOnce and ReadWriteOncePod (1.22+) access modes");
  if (node.empty()) return failed("configuration error, no node was specified");
  client::Object n = nodes_.get(node);
  if (!n) return failed("node \"" + node + "\" not found");
  std::string base = annotation(*n, kStoragePathAnnotation);
  if (base.empty())
    return failed("configuration error, node \"" + node + "\" has no " + kStoragePathAnnotation +
                  " annotation");
  std::string dir = base + "/" + pv_name + "_" + namespaceOf(claim) + "_" + nameOf(claim);
  bool started = false;
  auto done = runHelper("helper-pod-create-" + pv_name, node, dir,
                        R"(set -eu; mkdir -m 0777 -p "$VOL_DIR"; chmod 700 "$VOL_DIR/..")", &started);
  if (!done) return done.error();
  if (started)
    events_.event(claim, "v1", "PersistentVolumeClaim", "Normal", "Provisioning",
                  "External provisioner is provisioning volume for claim \"" + namespaceOf(claim) + "/" +
                      nameOf(claim) + "\"");
  if (!*done) return SyncResult{kPoll};
  if (!**done) return failed("failed to create volume " + pv_name + ": " + (*done)->error().message);
  std::string host;
  if (const json::Value* labels = json::findPath(*n, {"metadata", "labels"}); labels && labels->IsObject())
    host = std::string(json::getString(*labels, "kubernetes.io/hostname"));
  if (host.empty()) host = node;
  const json::Value* modes = json::findPath(claim, {"spec", "accessModes"});
  const json::Value* size = json::findPath(claim, {"spec", "resources", "requests", "storage"});
  std::string body =
      R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":)" + str(pv_name) +
      R"(,"annotations":{"local.path.provisioner/selected-node":)" + str(node) + R"(,")" + kProvisionedBy +
      R"(":")" + kProvisionerName + R"("}},"spec":{"persistentVolumeReclaimPolicy":)" +
      str(sc ? std::string(json::getString(*sc, "reclaimPolicy", "Delete")) : std::string("Delete")) +
      R"(,"accessModes":)" + (modes ? json::serialize(*modes) : std::string(R"(["ReadWriteOnce"])")) +
      R"(,"volumeMode":"Filesystem","capacity":{"storage":)" +
      (size ? json::serialize(*size) : std::string(R"("0")")) + R"(},"local":{"path":)" + str(dir) +
      R"(},"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname",)"
      R"("operator":"In","values":[)" +
      str(host) + R"(]}]}]}},"claimRef":{"kind":"PersistentVolumeClaim","namespace":)" +
      str(namespaceOf(claim)) + R"(,"name":)" + str(nameOf(claim)) + R"(,"uid":)" + str(uidOf(claim)) +
      R"(,"apiVersion":"v1","resourceVersion":)" +
      str(std::string(json::getStringPath(claim, {"metadata", "resourceVersion"}))) +
      R"(},"storageClassName":)" + str(cls) + "}}";
  auto r = client_.post("/api/v1/persistentvolumes", body);
  if (!r && r.error().code != 409) return r.error();
  events_.event(claim, "v1", "PersistentVolumeClaim", "Normal", "ProvisioningSucceeded",
                "Successfully provisioned volume " + pv_name);
  return SyncResult{};
}

Result<SyncResult> LocalPathProvisioner::remove(const json::Value& volume) {
  if (annotation(volume, kProvisionedBy) != kProvisionerName) return SyncResult{};
  if (json::getStringPath(volume, {"status", "phase"}) != "Released") return SyncResult{};
  if (json::getStringPath(volume, {"spec", "persistentVolumeReclaimPolicy"}) != "Delete") return SyncResult{};
  if (const json::Value* d = json::findPath(volume, {"metadata", "deletionTimestamp"}); d && !d->IsNull())
    return SyncResult{};
  auto failed = [&](const std::string& why) -> Result<SyncResult> {
    events_.event(volume, "v1", "PersistentVolume", "Warning", "VolumeFailedDelete", why);
    return SyncResult{kRetry};
  };
  std::string dir(json::getStringPath(volume, {"spec", "local", "path"}));
  if (dir.empty()) dir = json::getStringPath(volume, {"spec", "hostPath", "path"});
  std::string host = affinityHost(volume);
  if (host.empty()) return failed("no NodeAffinity set");
  std::string node;
  for (const auto& n : nodes_.list()) {
    const json::Value* labels = json::findPath(*n, {"metadata", "labels"});
    std::string h =
        labels && labels->IsObject() ? std::string(json::getString(*labels, "kubernetes.io/hostname")) : "";
    if (h == host || (h.empty() && nameOf(*n) == host)) node = nameOf(*n);
  }
  if (node.empty()) return failed("cannot find affinited node");
  auto done = runHelper("helper-pod-delete-" + nameOf(volume), node, dir, R"(set -eu; rm -rf "$VOL_DIR")");
  if (!done) return done.error();
  if (!*done) return SyncResult{kPoll};
  if (!**done) return failed("failed to delete volume " + nameOf(volume) + ": " + (*done)->error().message);
  auto r = client_.del("/api/v1/persistentvolumes/" + client::urlEncode(nameOf(volume)));
  if (!r && r.error().code != 404) return r.error();
  LOG_INFO("local-path-provisioner: deleted volume " << nameOf(volume) << " (" << dir << " on " << node
                                                     << ")");
  return SyncResult{};
}

Result<std::optional<Status>> LocalPathProvisioner::runHelper(const std::string& name,
                                                              const std::string& node, const std::string& dir,
                                                              const std::string& script, bool* started) {
  std::string path =
      "/api/v1/namespaces/" + std::string(kHelperNamespace) + "/pods/" + client::urlEncode(name);
  auto pod = client_.get(path);
  if (!pod) {
    if (pod.error().code != 404) return pod.error();
    std::string parent = parentOf(dir);
    std::string body =
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":)" + str(name) + R"(,"namespace":")" +
        kHelperNamespace + R"("},"spec":{"nodeName":)" + str(node) +
        R"(,"restartPolicy":"Never","tolerations":[{"operator":"Exists"}],"containers":[{"name":"helper-pod","image":")" +
        kHelperImage + R"(","imagePullPolicy":"IfNotPresent","command":["/bin/sh","-c",)" + str(script) +
        R"(],"env":[{"name":"VOL_DIR","value":)" + str(dir) +
        R"(}],"volumeMounts":[{"name":"data","mountPath":)" + str(parent) +
        R"(}]}],"volumes":[{"name":"data","hostPath":{"path":)" + str(parent) +
        R"(,"type":"DirectoryOrCreate"}}]}})";
    auto r = client_.post("/api/v1/namespaces/" + std::string(kHelperNamespace) + "/pods", body);
    if (!r && r.error().code != 409) return r.error();
    if (r && started) *started = true;
    return std::optional<Status>();
  }
  std::string_view phase = json::getStringPath(*pod, {"status", "phase"});
  auto created = clock::parseRfc3339(json::getStringPath(*pod, {"metadata", "creationTimestamp"}));
  bool timedOut = created && clock_.now() - *created > kHelperTimeout;
  if (phase != "Succeeded" && phase != "Failed" && !timedOut) return std::optional<Status>();
  (void)client_.del(path + "?gracePeriodSeconds=0");
  if (phase == "Succeeded") return std::optional<Status>(okStatus());
  if (phase == "Failed") return std::optional<Status>(ApiError::internal("helper pod " + name + " failed"));
  return std::optional<Status>(ApiError::internal("create process timeout after " +
                                                  std::to_string(kHelperTimeout.count()) + " seconds"));
}

}  // namespace shepherd::controllers::localpath
