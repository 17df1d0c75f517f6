#include "scheduler/volume_binding.h"

#include <set>
#include <thread>

#include "meta/persistent_volumes.h"

namespace shepherd::scheduler {

namespace {

constexpr const char* kNodeConflict = "node(s) had volume node affinity conflict";
constexpr const char* kBindConflict = "node(s) didn't find available persistent volumes to bind";
constexpr const char* kVolumeMissing =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";

std::string nameOf(const json::Value& obj) {
  return std::string(json::getStringPath(obj, {"metadata", "name"}));
}

std::string claimPath(const std::string& key) {
  size_t slash = key.find('/');
  return "/api/v1/namespaces/" + client::urlEncode(key.substr(0, slash)) + "/persistentvolumeclaims/" +
         client::urlEncode(key.substr(slash + 1));
}

bool deleting(const json::Value& obj) {
  const json::Value* d = json::findPath(obj, {"metadata", "deletionTimestamp"});
  return d && !d->IsNull();
}

}  // namespace

VolumeBinding::VolumeBinding(client::Client& client)
    : client_(client),
      claims_(client, client::InformerOptions{"", "v1", "persistentvolumeclaims", "", "", "", 500}),
      volumes_(client, client::InformerOptions{"", "v1", "persistentvolumes", "", "", "", 500}),
      classes_(client, client::InformerOptions{"storage.k8s.io", "v1", "storageclasses", "", "", "", 500}) {}

void VolumeBinding::start() {
  claims_.start();
  volumes_.start();
  classes_.start();
}

bool VolumeBinding::waitForSync(int timeout_ms) {
  return claims_.waitForSync(timeout_ms) && volumes_.waitForSync(timeout_ms) &&
         classes_.waitForSync(timeout_ms);
}

void VolumeBinding::stop() {
  claims_.stop();
  volumes_.stop();
  classes_.stop();
}

PodClaims VolumeBinding::preFilter(const json::Value& pod) const {
  PodClaims out;
  const json::Value* vols = json::findPath(pod, {"spec", "volumes"});
  if (!vols || !vols->IsArray()) return out;
  std::string ns(json::getStringPath(pod, {"metadata", "namespace"}));
  std::string pod_name = nameOf(pod);
  for (const auto& v : vols->GetArray()) {
    std::string claim_name;
    bool ephemeral = false;
    if (const json::Value* pvc = json::find(v, "persistentVolumeClaim"); pvc && pvc->IsObject()) {
      claim_name = json::getString(*pvc, "claimName");
    } else if (const json::Value* eph = json::find(v, "ephemeral"); eph && eph->IsObject()) {
      claim_name = pod_name + "-" + std::string(json::getString(v, "name"));
      ephemeral = true;
    } else {
      continue;
    }
    out.any = true;
    out.claim_keys.push_back(ns + "/" + claim_name);
    client::Object claim = claims_.get(ns + "/" + claim_name);
    if (!claim) {
      out.unresolvable =
          ephemeral ? "waiting for ephemeral volume controller to create the persistentvolumeclaim \"" +
                          claim_name + "\""
                    : "persistentvolumeclaim \"" + claim_name + "\" not found";
      return out;
    }
    if (deleting(*claim)) {
      out.unresolvable = "persistentvolumeclaim \"" + claim_name + "\" is being deleted";
      return out;
    }
    std::string volume(json::getStringPath(*claim, {"spec", "volumeName"}));
    if (json::getStringPath(*claim, {"status", "phase"}) == "Lost") {
      out.unresolvable = "persistentvolumeclaim \"" + claim_name +
                         "\" bound to non-existent persistentvolume \"" + volume + "\"";
      return out;
    }
    if (meta::claimFullyBound(*claim)) {
      if (client::Object pv = volumes_.get(volume))
        out.bound_volumes.push_back(pv);
      else
        out.missing_volume = true;
      continue;
    }
    client::Object sc = classes_.get(meta::storageClassOf(*claim));
    if (volume.empty() && sc && json::getString(*sc, "volumeBindingMode") == "WaitForFirstConsumer") {
      out.delayed.push_back(claim);
      continue;
    }
    out.unresolvable = "pod has unbound immediate PersistentVolumeClaims";
    return out;
  }
  return out;
}

std::vector<const json::Value*> VolumeBinding::volumesOfClass(const std::string& cls,
                                                              std::vector<client::Object>& keep) const {
  keep = volumes_.list();
  std::vector<const json::Value*> out;
  for (const auto& v : keep)
    if (meta::storageClassOf(*v) == cls) out.push_back(v.get());
  return out;
}

bool VolumeBinding::canProvision(const json::Value& claim) const {
  client::Object sc = classes_.get(meta::storageClassOf(claim));
  if (!sc) return false;
  std::string_view p = json::getString(*sc, "provisioner");
  return !p.empty() && p != "kubernetes.io/no-provisioner";
}

std::vector<std::string> VolumeBinding::filter(const PodClaims& claims, const json::Value& node) const {
  bool node_conflict = false, bind_conflict = false;
  for (const auto& pv : claims.bound_volumes)
    if (!meta::volumeNodeAffinityMatches(*pv, node)) node_conflict = true;
  std::string node_name = nameOf(node);
  std::set<std::string> chosen;
  for (const auto& claim : claims.delayed) {
    std::string selected = meta::annotation(*claim, meta::kSelectedNode);
    if (!selected.empty()) {
      if (selected != node_name || !canProvision(*claim)) bind_conflict = true;
      continue;
    }
    std::vector<client::Object> keep;
    auto candidates = volumesOfClass(meta::storageClassOf(*claim), keep);
    if (const json::Value* pv = meta::findMatchingVolume(*claim, candidates, true, &node, chosen)) {
      chosen.insert(nameOf(*pv));
      continue;
    }
    if (!canProvision(*claim)) bind_conflict = true;
  }
  std::vector<std::string> out;
  if (node_conflict) out.push_back(kNodeConflict);
  if (bind_conflict) out.push_back(kBindConflict);
  if (claims.missing_volume) out.push_back(kVolumeMissing);
  return out;
}

std::string VolumeBinding::preBind(const PodClaims& claims, const json::Value& node,
                                   std::chrono::seconds timeout, const std::atomic<bool>& stopping) {
  std::string node_name = nameOf(node);
  std::set<std::string> chosen;
  for (const auto& claim : claims.delayed) {
    std::string key = client::objectKey(*claim);
    if (meta::annotation(*claim, meta::kSelectedNode) == node_name) continue;
    std::vector<client::Object> keep;
    auto candidates = volumesOfClass(meta::storageClassOf(*claim), keep);
    if (const json::Value* pv = meta::findMatchingVolume(*claim, candidates, true, &node, chosen)) {
      chosen.insert(nameOf(*pv));
      if (meta::isVolumeBoundToClaim(*pv, *claim)) continue;
      // The pre-bind: the volume's claimRef, as the binder would write it.
      json::Document d;
      d.CopyFrom(*pv, d.GetAllocator());
      json::Allocator& a = d.GetAllocator();
      json::Value ref(rapidjson::kObjectType);
      json::setString(ref, "kind", "PersistentVolumeClaim", a);
      json::setString(ref, "namespace", json::getStringPath(*claim, {"metadata", "namespace"}), a);
      json::setString(ref, "name", nameOf(*claim), a);
      json::setString(ref, "uid", json::getStringPath(*claim, {"metadata", "uid"}), a);
      json::setString(ref, "apiVersion", "v1", a);
      json::setString(ref, "resourceVersion", json::getStringPath(*claim, {"metadata", "resourceVersion"}),
                      a);
      json::set(json::ensureObject(d, "spec", a), "claimRef", std::move(ref), a);
      json::Value& ann = json::ensureObject(json::ensureObject(d, "metadata", a), "annotations", a);
      json::setString(ann, meta::kBoundByController, "yes", a);
      auto r = client_.put("/api/v1/persistentvolumes/" + client::urlEncode(nameOf(*pv)), json::serialize(d));
      if (!r) return "binding volumes: " + r.error().message;
      continue;
    }
    // Provisioning: the provisioner makes the volume on this node.
    std::string patch = R"({"metadata":{"annotations":{")" + std::string(meta::kSelectedNode) + R"(":)" +
                        json::serialize(json::Value(rapidjson::StringRef(node_name.c_str()))) + "}}}";
    auto r = client_.patch(claimPath(key), patch, "application/merge-patch+json");
    if (!r) return "binding volumes: " + r.error().message;
  }
  // Wait until every claim is bound (checked each second, as upstream's PreBind poll).
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    bool all = true;
    for (const auto& key : claims.claim_keys) {
      client::Object claim = claims_.get(key);
      if (!claim)
        return "binding volumes: failed to check provisioning pvc: could not find v1.PersistentVolumeClaim "
               "\"" +
               key + "\"";
      if (!meta::claimFullyBound(*claim)) all = false;
    }
    if (all) return "";
    if (stopping.load()) return "binding volumes: the scheduler is stopping";
    if (std::chrono::steady_clock::now() >= deadline) return "binding volumes: context deadline exceeded";
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

}  // namespace shepherd::scheduler
