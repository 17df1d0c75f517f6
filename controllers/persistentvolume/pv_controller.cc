#include "controllers/persistentvolume/pv_controller.h"

#include "common/log.h"
#include "controllers/manager/object_meta.h"
#include "meta/persistent_volumes.h"

namespace shepherd::controllers::persistentvolume {

namespace {

using namespace meta;

constexpr const char* kClaimPrefix = "claim/";
constexpr const char* kVolumePrefix = "volume/";

std::string claimPath(const std::string& ns, const std::string& name) {
  return "/api/v1/namespaces/" + client::urlEncode(ns) + "/persistentvolumeclaims/" + client::urlEncode(name);
}

std::string claimPath(const json::Value& c) {
  return claimPath(namespaceOf(c), nameOf(c));
}

std::string volumePath(const json::Value& v) {
  return "/api/v1/persistentvolumes/" + client::urlEncode(nameOf(v));
}

json::Document copyOf(const json::Value& v) {
  json::Document d;
  d.CopyFrom(v, d.GetAllocator());
  return d;
}

void setAnnotation(json::Document& d, const char* key, const std::string& value) {
  json::Value& meta = json::ensureObject(d, "metadata", d.GetAllocator());
  json::Value& ann = json::ensureObject(meta, "annotations", d.GetAllocator());
  json::setString(ann, key, value, d.GetAllocator());
}

void removeAnnotation(json::Document& d, const char* key) {
  if (json::Value* ann = json::findPath(d, {"metadata", "annotations"}); ann && ann->IsObject())
    json::remove(*ann, key);
}

bool hasPrefix(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}

std::string phaseOf(const json::Value& obj) {
  return std::string(json::getStringPath(obj, {"status", "phase"}));
}

// IsDelayBindingMode: the claim's class exists and waits for the first consumer.
bool delayBinding(const client::Object& cls) {
  return cls && json::getString(*cls, "volumeBindingMode") == "WaitForFirstConsumer";
}

}  // namespace

PersistentVolumeController::PersistentVolumeController(client::Client& c, client::SharedInformers& informers,
                                                       client::EventRecorder& events)
    : Controller("persistentvolume-binder"),
      client_(c),
      claims_(informers.get(client::allObjects("", "v1", "persistentvolumeclaims"))),
      volumes_(informers.get(client::allObjects("", "v1", "persistentvolumes"))),
      classes_(informers.get(client::allObjects("storage.k8s.io", "v1", "storageclasses"))),
      events_(events) {
  client::EventHandlers ch;
  auto onClaim = [this](const client::Object& o) { queue_.add(kClaimPrefix + client::objectKey(*o)); };
  ch.on_add = onClaim;
  ch.on_update = [onClaim](const client::Object&, const client::Object& o) { onClaim(o); };
  ch.on_delete = [this](const client::Object& o) {
    {
      MutexLock g(mu_);
      std::string uid = uidOf(*o);
      events_sent_.erase(events_sent_.lower_bound(uid + "/"), events_sent_.lower_bound(uid + "0"));
    }
    // The volume bound to a deleted claim is released.
    std::string_view volume = json::getStringPath(*o, {"spec", "volumeName"});
    if (!volume.empty()) queue_.add(kVolumePrefix + std::string(volume));
  };
  claims_.addHandlers(std::move(ch));
  client::EventHandlers vh;
  auto onVolume = [this](const client::Object& o) {
    queue_.add(kVolumePrefix + nameOf(*o));
    // A volume made for (or pre-bound to) a claim binds it without waiting for a resync.
    if (const json::Value* ref = json::findPath(*o, {"spec", "claimRef"}); ref && ref->IsObject())
      queue_.add(kClaimPrefix + std::string(json::getString(*ref, "namespace")) + "/" +
                 std::string(json::getString(*ref, "name")));
  };
  vh.on_add = onVolume;
  vh.on_update = [onVolume](const client::Object&, const client::Object& o) { onVolume(o); };
  vh.on_delete = onVolume;
  volumes_.addHandlers(std::move(vh));
}

Result<SyncResult> PersistentVolumeController::sync(const std::string& key) {
  if (hasPrefix(key, kClaimPrefix)) {
    client::Object claim = claims_.get(key.substr(std::string_view(kClaimPrefix).size()));
    if (!claim) return SyncResult{};
    return syncClaim(*claim);
  }
  if (hasPrefix(key, kVolumePrefix)) {
    client::Object volume = volumes_.get(key.substr(std::string_view(kVolumePrefix).size()));
    if (!volume) return SyncResult{};
    return syncVolume(*volume);
  }
  return SyncResult{};
}

Result<SyncResult> PersistentVolumeController::syncClaim(const json::Value& claim) {
  if (!hasAnnotation(claim, kBindCompleted)) return syncUnboundClaim(claim);
  return syncBoundClaim(claim);
}

Result<SyncResult> PersistentVolumeController::syncUnboundClaim(const json::Value& claim) {
  const SyncResult again{std::chrono::duration_cast<std::chrono::milliseconds>(kResync)};
  std::string cls = storageClassOf(claim);
  client::Object sc = cls.empty() ? nullptr : classes_.get(cls);
  std::string volume_name(json::getStringPath(claim, {"spec", "volumeName"}));
  if (volume_name.empty()) {
    bool delay = delayBinding(sc);
    std::vector<client::Object> all = volumes_.list();
    std::vector<const json::Value*> candidates;
    for (const auto& v : all) candidates.push_back(v.get());
    if (const json::Value* pv = findMatchingVolume(claim, candidates, delay)) {
      if (auto st = bind(*pv, claim); !st) return st.error();
      return SyncResult{};
    }
    // A claim that names no class at all gets the default one, if any (retroactively).
    if (!claimHasClass(claim)) {
      if (client::Object def = defaultClass()) {
        json::Document d = copyOf(claim);
        json::setString(json::ensureObject(d, "spec", d.GetAllocator()), "storageClassName", nameOf(*def),
                        d.GetAllocator());
        if (auto r = client_.put(claimPath(claim), json::serialize(d)); !r) return r.error();
        return SyncResult{};
      }
    }
    if (delay && annotation(claim, kSelectedNode).empty()) {
      if (firstTime(claim, "WaitForFirstConsumer"))
        claimEvent(claim, "Normal", "WaitForFirstConsumer",
                   "waiting for first consumer to be created before binding");
    } else if (!cls.empty()) {
      static const json::Value kMissing;
      return provision(claim, sc ? static_cast<const json::Value&>(*sc) : kMissing);
    } else {
      if (firstTime(claim, "FailedBinding"))
        claimEvent(claim, "Normal", "FailedBinding",
                   "no persistent volumes available for this claim and no storage class is set");
    }
    if (auto st = setClaimPhase(claim, "Pending"); !st) return st.error();
    return again;
  }
  // The claim names its volume.
  client::Object pv = volumes_.get(volume_name);
  if (!pv) {
    if (auto st = setClaimPhase(claim, "Pending"); !st) return st.error();
    return again;
  }
  const json::Value* ref = json::findPath(*pv, {"spec", "claimRef"});
  if (!ref || !ref->IsObject()) {
    if (auto why = volumeMismatch(*pv, claim)) {
      if (firstTime(claim, "VolumeMismatch"))
        claimEvent(claim, "Warning", "VolumeMismatch",
                   "Cannot bind to requested volume \"" + volume_name + "\": " + *why);
      if (auto st = setClaimPhase(claim, "Pending"); !st) return st.error();
      return again;
    }
  } else if (!isVolumeBoundToClaim(*pv, claim)) {
    if (firstTime(claim, "FailedBinding"))
      claimEvent(claim, "Warning", "FailedBinding",
                 "volume \"" + volume_name + "\" already bound to a different claim.");
    if (auto st = setClaimPhase(claim, "Pending"); !st) return st.error();
    return again;
  }
  if (auto st = bind(*pv, claim); !st) return st.error();
  return SyncResult{};
}

Result<SyncResult> PersistentVolumeController::syncBoundClaim(const json::Value& claim) {
  std::string volume_name(json::getStringPath(claim, {"spec", "volumeName"}));
  auto lost = [&](const std::string& reason, const std::string& message) -> Result<SyncResult> {
    if (phaseOf(claim) != "Lost") claimEvent(claim, "Warning", reason, message);
    if (auto st = setClaimPhase(claim, "Lost"); !st) return st.error();
    return SyncResult{};
  };
  if (volume_name.empty())
    return lost("ClaimLost",
                "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!");
  client::Object pv = volumes_.get(volume_name);
  if (!pv) return lost("ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!");
  const json::Value* ref = json::findPath(*pv, {"spec", "claimRef"});
  if (!ref || !ref->IsObject() || json::getString(*ref, "uid") == uidOf(claim)) {
    if (auto st = bind(*pv, claim); !st) return st.error();
    return SyncResult{};
  }
  return lost("ClaimMisbound", "Two claims are bound to the same volume, this one is bound incorrectly");
}

Result<SyncResult> PersistentVolumeController::syncVolume(const json::Value& volume) {
  const json::Value* ref = json::findPath(volume, {"spec", "claimRef"});
  if (!ref || !ref->IsObject() || json::getString(*ref, "uid").empty()) {
    if (auto st = setVolumePhase(volume, "Available"); !st) return st.error();
    return SyncResult{};
  }
  auto claim = claimOf(volume);
  if (!claim) return claim.error();
  if (!*claim) {
    std::string phase = phaseOf(volume);
    if (phase != "Released" && phase != "Failed") {
      auto released = releaseVolume(volume);
      if (!released) return released.error();
      if (auto st = reclaim(*released); !st) return st.error();
      return SyncResult{};
    }
    if (auto st = reclaim(volume); !st) return st.error();
    return SyncResult{};
  }
  std::string_view bound_to = json::getStringPath(**claim, {"spec", "volumeName"});
  if (bound_to.empty()) {
    queue_.add(kClaimPrefix + client::objectKey(**claim));
    return SyncResult{};
  }
  if (bound_to == nameOf(volume)) {
    if (auto st = setVolumePhase(volume, "Bound"); !st) return st.error();
    return SyncResult{};
  }
  // The claim is bound to another volume.
  if (hasAnnotation(volume, kProvisionedBy) &&
      json::getStringPath(volume, {"spec", "persistentVolumeReclaimPolicy"}) == "Delete") {
    if (phaseOf(volume) != "Released") {
      auto released = releaseVolume(volume);
      if (!released) return released.error();
      if (auto st = reclaim(*released); !st) return st.error();
      return SyncResult{};
    }
    if (auto st = reclaim(volume); !st) return st.error();
    return SyncResult{};
  }
  if (auto st = unbindVolume(volume); !st) return st.error();
  return SyncResult{};
}

Result<client::Object> PersistentVolumeController::claimOf(const json::Value& volume) {
  const json::Value& ref = *json::findPath(volume, {"spec", "claimRef"});
  std::string ns(json::getString(ref, "namespace")), name(json::getString(ref, "name"));
  std::string uid(json::getString(ref, "uid"));
  client::Object claim = claims_.get(ns + "/" + name);
  if (claim && uidOf(*claim) == uid) return claim;
  // Not in the informer (yet), or another claim of that name: ask the server.
  auto r = client_.get(claimPath(ns, name));
  if (!r) {
    if (r.error().code == 404) return client::Object();
    return r.error();
  }
  if (uidOf(*r) != uid) return client::Object();
  return client::Object(std::make_shared<const json::Document>(std::move(*r)));
}

Status PersistentVolumeController::bind(const json::Value& volume, const json::Value& claim) {
  // 1. The volume's claimRef (and bound-by-controller when the controller made the link).
  json::Document pv = copyOf(volume);
  const json::Value* ref = json::findPath(volume, {"spec", "claimRef"});
  bool refOk = ref && ref->IsObject() && json::getString(*ref, "name") == nameOf(claim) &&
               json::getString(*ref, "namespace") == namespaceOf(claim) &&
               json::getString(*ref, "uid") == uidOf(claim);
  if (!refOk) {
    bool prebound = isVolumeBoundToClaim(volume, claim);
    json::Allocator& a = pv.GetAllocator();
    json::Value r(rapidjson::kObjectType);
    json::setString(r, "kind", "PersistentVolumeClaim", a);
    json::setString(r, "namespace", namespaceOf(claim), a);
    json::setString(r, "name", nameOf(claim), a);
    json::setString(r, "uid", uidOf(claim), a);
    json::setString(r, "apiVersion", "v1", a);
    json::setString(r, "resourceVersion", json::getStringPath(claim, {"metadata", "resourceVersion"}), a);
    json::set(json::ensureObject(pv, "spec", a), "claimRef", std::move(r), a);
    if (!prebound) setAnnotation(pv, kBoundByController, "yes");
    auto w = client_.put(volumePath(volume), json::serialize(pv));
    if (!w) return w.error();
    pv = std::move(*w);
  }
  // 2. The volume's phase.
  if (phaseOf(pv) != "Bound" || !json::getStringPath(pv, {"status", "message"}).empty()) {
    json::Allocator& a = pv.GetAllocator();
    json::Value& st = json::ensureObject(pv, "status", a);
    json::setString(st, "phase", "Bound", a);
    json::remove(st, "message");
    auto w = client_.put(volumePath(pv) + "/status", json::serialize(pv));
    if (!w) return w.error();
    pv = std::move(*w);
  }
  // 3. The claim's volumeName and bind annotations.
  json::Document pvc = copyOf(claim);
  bool changed = false;
  if (json::getStringPath(claim, {"spec", "volumeName"}) != nameOf(pv)) {
    json::setString(json::ensureObject(pvc, "spec", pvc.GetAllocator()), "volumeName", nameOf(pv),
                    pvc.GetAllocator());
    if (!hasAnnotation(claim, kBoundByController)) setAnnotation(pvc, kBoundByController, "yes");
    changed = true;
  }
  if (!hasAnnotation(claim, kBindCompleted)) {
    setAnnotation(pvc, kBindCompleted, "yes");
    changed = true;
  }
  if (changed) {
    auto w = client_.put(claimPath(claim), json::serialize(pvc));
    if (!w) return w.error();
    pvc = std::move(*w);
  }
  // 4. The claim's status: Bound, the volume's access modes, and its capacity once.
  json::Document want = copyOf(pvc);
  json::Allocator& a = want.GetAllocator();
  json::Value& st = json::ensureObject(want, "status", a);
  json::setString(st, "phase", "Bound", a);
  if (const json::Value* modes = json::findPath(pv, {"spec", "accessModes"}))
    json::set(st, "accessModes", json::Value(*modes, a), a);
  if (phaseOf(pvc) != "Bound" || !json::find(st, "capacity"))
    if (const json::Value* cap = json::findPath(pv, {"spec", "capacity"}))
      json::set(st, "capacity", json::Value(*cap, a), a);
  const json::Value* before = json::find(pvc, "status");
  if (!before || *before != st)
    if (auto w = client_.put(claimPath(pvc) + "/status", json::serialize(want)); !w) return w.error();
  return okStatus();
}

Status PersistentVolumeController::setClaimPhase(const json::Value& claim, const std::string& phase) {
  if (phaseOf(claim) == phase && (phase == "Lost" || (!json::findPath(claim, {"status", "accessModes"}) &&
                                                      !json::findPath(claim, {"status", "capacity"}))))
    return okStatus();
  json::Document d = copyOf(claim);
  json::Value& st = json::ensureObject(d, "status", d.GetAllocator());
  json::setString(st, "phase", phase, d.GetAllocator());
  if (phase == "Pending") {
    json::remove(st, "accessModes");
    json::remove(st, "capacity");
  }
  auto w = client_.put(claimPath(claim) + "/status", json::serialize(d));
  if (!w) return w.error();
  return okStatus();
}

Status PersistentVolumeController::setVolumePhase(const json::Value& volume, const std::string& phase,
                                                  const std::string& message) {
  if (phaseOf(volume) == phase && json::getStringPath(volume, {"status", "message"}) == message)
    return okStatus();
  json::Document d = copyOf(volume);
  json::Value& st = json::ensureObject(d, "status", d.GetAllocator());
  json::setString(st, "phase", phase, d.GetAllocator());
  if (message.empty())
    json::remove(st, "message");
  else
    json::setString(st, "message", message, d.GetAllocator());
  auto w = client_.put(volumePath(volume) + "/status", json::serialize(d));
  if (!w) return w.error();
  return okStatus();
}

Result<json::Document> PersistentVolumeController::releaseVolume(const json::Value& volume) {
  json::Document d = copyOf(volume);
  json::Value& st = json::ensureObject(d, "status", d.GetAllocator());
  json::setString(st, "phase", "Released", d.GetAllocator());
  json::remove(st, "message");
  return client_.put(volumePath(volume) + "/status", json::serialize(d));
}

Status PersistentVolumeController::unbindVolume(const json::Value& volume) {
  json::Document d = copyOf(volume);
  if (hasAnnotation(volume, kBoundByController)) {
    json::remove(*json::find(d, "spec"), "claimRef");
    removeAnnotation(d, kBoundByController);
  } else if (json::Value* ref = json::findPath(d, {"spec", "claimRef"}); ref && ref->IsObject()) {
    json::remove(*ref, "uid");  // pre-bound by the user: it stays meant for that claim name
  }
  auto w = client_.put(volumePath(volume), json::serialize(d));
  if (!w) return w.error();
  return setVolumePhase(*w, "Available");
}

Status PersistentVolumeController::reclaim(const json::Value& volume) {
  std::string policy(json::getStringPath(volume, {"spec", "persistentVolumeReclaimPolicy"}));
  if (policy == "Retain") return okStatus();
  std::string provisioner = annotation(volume, kProvisionedBy);
  if (policy == "Delete") {
    // A volume an external provisioner made is its provisioner's to delete.
    if (!provisioner.empty() && !hasPrefix(provisioner, "kubernetes.io/")) return okStatus();
    if (phaseOf(volume) != "Failed") {
      std::string msg = "error getting deleter volume plugin for volume \"" + nameOf(volume) +
                        "\": no deletable volume plugin matched";
      volumeEvent(volume, "Warning", "VolumeFailedDelete", msg);
      return setVolumePhase(volume, "Failed", msg);
    }
    return okStatus();
  }
  if (policy == "Recycle") {
    if (phaseOf(volume) != "Failed") {
      volumeEvent(volume, "Warning", "VolumeFailedRecycle", "No recycler plugin found for the volume!");
      return setVolumePhase(volume, "Failed", "No recycler plugin found for the volume!");
    }
    return okStatus();
  }
  if (phaseOf(volume) != "Failed") {
    volumeEvent(volume, "Warning", "VolumeUnknownReclaimPolicy",
                "Volume has unrecognized PersistentVolumeReclaimPolicy");
    return setVolumePhase(volume, "Failed", "Volume has unrecognized PersistentVolumeReclaimPolicy");
  }
  return okStatus();
}

Result<SyncResult> PersistentVolumeController::provision(const json::Value& claim, const json::Value& sc) {
  const SyncResult again{std::chrono::duration_cast<std::chrono::milliseconds>(kResync)};
  if (!sc.IsObject()) {
    if (firstTime(claim, "ProvisioningFailed"))
      claimEvent(claim, "Warning", "ProvisioningFailed",
                 "storageclass.storage.k8s.io \"" + storageClassOf(claim) + "\" not found");
    if (auto st = setClaimPhase(claim, "Pending"); !st) return st.error();
    return again;
  }
  std::string provisioner(json::getString(sc, "provisioner"));
  if (provisioner == "kubernetes.io/no-provisioner") {
    if (auto st = setClaimPhase(claim, "Pending"); !st) return st.error();
    return again;
  }
  if (annotation(claim, kStorageProvisioner) != provisioner) {
    json::Document d = copyOf(claim);
    setAnnotation(d, kStorageProvisioner, provisioner);
    setAnnotation(d, kBetaStorageProvisioner, provisioner);
    if (auto w = client_.put(claimPath(claim), json::serialize(d)); !w) return w.error();
  }
  if (firstTime(claim, "ExternalProvisioning"))
    claimEvent(claim, "Normal", "ExternalProvisioning",
               "Waiting for a volume to be created either by the external provisioner '" + provisioner +
                   "' or manually by the system administrator. If volume creation is delayed, please verify "
                   "that the provisioner is running and correctly registered.");
  return again;
}

client::Object PersistentVolumeController::defaultClass() const {
  // GetDefaultClass: the newest default class; on a tie the first name.
  client::Object best;
  for (const auto& sc : classes_.list()) {
    bool def = false;
    for (const char* key :
         {"storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"})
      def = def || annotation(*sc, key) == "true";
    if (!def) continue;
    std::string_view created = json::getStringPath(*sc, {"metadata", "creationTimestamp"});
    if (!best) {
      best = sc;
      continue;
    }
    std::string_view best_created = json::getStringPath(*best, {"metadata", "creationTimestamp"});
    if (created > best_created || (created == best_created && nameOf(*sc) < nameOf(*best))) best = sc;
  }
  return best;
}

bool PersistentVolumeController::firstTime(const json::Value& obj, const std::string& reason) {
  MutexLock g(mu_);
  return events_sent_.insert(uidOf(obj) + "/" + reason).second;
}

void PersistentVolumeController::claimEvent(const json::Value& claim, const std::string& type,
                                            const std::string& reason, const std::string& message) {
  events_.event(claim, "v1", "PersistentVolumeClaim", type, reason, message);
}

void PersistentVolumeController::volumeEvent(const json::Value& volume, const std::string& type,
                                             const std::string& reason, const std::string& message) {
  events_.event(volume, "v1", "PersistentVolume", type, reason, message);
}

}  // namespace shepherd::controllers::persistentvolume
