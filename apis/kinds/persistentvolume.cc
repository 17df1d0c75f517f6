// PersistentVolume (core/v1, cluster-scoped): a piece of storage of one volume type with a
// capacity, access modes and a reclaim policy, bound to a claim by spec.claimRef. The
// volume source, volume mode and (once set) node affinity never change; status.phase
// records when it last changed (lastPhaseTransitionTime, as upstream since 1.31).
#include "apis/kinds/kinds.h"
#include "apis/kinds/storage_checks.h"
#include "common/clock.h"
#include "meta/quantity.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

// ValidatePersistentVolumeSpec's order of volume types.
constexpr const char* kSources[] = {"hostPath",
                                    "gcePersistentDisk",
                                    "awsElasticBlockStore",
                                    "glusterfs",
                                    "flocker",
                                    "nfs",
                                    "rbd",
                                    "quobyte",
                                    "cephfs",
                                    "iscsi",
                                    "cinder",
                                    "fc",
                                    "flexVolume",
                                    "azureFile",
                                    "vsphereVolume",
                                    "photonPersistentDisk",
                                    "portworxVolume",
                                    "azureDisk",
                                    "scaleIO",
                                    "local",
                                    "storageos",
                                    "csi"};

void requireString(const json::Value& src, const char* key, const std::string& path, FieldErrors& errs) {
  if (json::getString(src, key).empty()) errs.required(path + "." + key);
}

// The fields of the volume types Shepherd's nodes can serve, and the ones every PV
// of any type must have; other types are stored as given.
void validateSource(const char* type, const json::Value& src, const json::Value& spec, FieldErrors& errs) {
  std::string path = std::string("spec.") + type;
  std::string_view t = type;
  if (t == "hostPath") {
    requireString(src, "path", path, errs);
    std::string_view ht = json::getString(src, "type");
    static const std::vector<std::string> kTypes = {
        "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"};
    if (std::find(kTypes.begin(), kTypes.end(), ht) == kTypes.end())
      errs.notSupported(path + ".type", std::string(ht), kTypes);
  } else if (t == "local") {
    requireString(src, "path", path, errs);
    const json::Value* na = json::find(spec, "nodeAffinity");
    if (!na || !na->IsObject() || !json::find(*na, "required"))
      errs.required("spec.nodeAffinity", "Local volume requires node affinity");
  } else if (t == "nfs") {
    requireString(src, "server", path, errs);
    requireString(src, "path", path, errs);
  } else if (t == "csi") {
    requireString(src, "driver", path, errs);
    requireString(src, "volumeHandle", path, errs);
  }
}

void validateSpec(const json::Value& obj, FieldErrors& errs) {
  static const json::Value kEmpty(rapidjson::kObjectType);
  const json::Value* s = json::find(obj, "spec");
  const json::Value& spec = s && s->IsObject() ? *s : kEmpty;
  validateAccessModes(json::find(spec, "accessModes"), "spec.accessModes", "", errs);
  const json::Value* cap = json::find(spec, "capacity");
  if (!cap || !cap->IsObject() || cap->MemberCount() == 0) {
    errs.required("spec.capacity");
  } else {
    if (!json::find(*cap, "storage") || cap->MemberCount() > 1) {
      std::string keys;
      for (const auto& m : cap->GetObject())
        keys += (keys.empty() ? "" : " ") + std::string(json::view(m.name));
      errs.notSupported("spec.capacity", "map[" + keys + "]", {"storage"});
    }
    for (const auto& m : cap->GetObject())
      validateStorageQuantity(m.value, "spec.capacity[" + std::string(json::view(m.name)) + "]", errs);
  }
  if (std::string_view p = json::getString(spec, "persistentVolumeReclaimPolicy");
      !p.empty() && p != "Delete" && p != "Recycle" && p != "Retain")
    errs.notSupported("spec.persistentVolumeReclaimPolicy", std::string(p), {"Delete", "Recycle", "Retain"});
  int types = 0;
  for (const char* type : kSources) {
    const json::Value* src = json::find(spec, type);
    if (!src || src->IsNull()) continue;
    if (types++ > 0) {
      errs.forbidden(std::string("spec.") + type, "may not specify more than 1 volume type");
      continue;
    }
    if (src->IsObject()) validateSource(type, *src, spec, errs);
  }
  if (types == 0) errs.required("spec", "must specify a volume type");
  validateClassName(json::find(spec, "storageClassName"), "spec.storageClassName", errs);
  validateVolumeMode(json::find(spec, "volumeMode"), "spec.volumeMode", errs);
}

// The spec without what may change: capacity, access modes, claimRef, reclaim policy,
// class, mount options, volume mode and node affinity (the last two checked apart).
json::Document volumeSource(const json::Value& obj) {
  json::Document d(rapidjson::kObjectType);
  if (const json::Value* spec = json::find(obj, "spec"); spec && spec->IsObject())
    for (const char* type : kSources)
      if (const json::Value* src = json::find(*spec, type))
        json::set(d, type, json::Value(*src, d.GetAllocator()), d.GetAllocator());
  return d;
}

void setPhaseTime(json::Value& obj, json::Allocator& a) {
  json::Value& st = json::ensureObject(obj, "status", a);
  json::setString(st, "lastPhaseTransitionTime", clock::rfc3339(clock::now()), a);
}

class PersistentVolumeStrategy final : public Strategy {
 public:
  void prepareForCreate(json::Document& obj, const StrategyContext& ctx) const override {
    json::Allocator& a = obj.GetAllocator();
    json::set(obj, "status", json::Value(rapidjson::kObjectType), a);
    json::Value& st = json::ensureObject(obj, "status", a);
    json::setString(st, "phase", "Pending", a);
    json::setString(st, "lastPhaseTransitionTime", ctx.now, a);
  }
  // A phase change the writer did not time gets the time of the write.
  void prepareForStatusUpdate(json::Document& obj, const json::Value& old) const override {
    std::string_view now_phase = json::getStringPath(obj, {"status", "phase"});
    std::string_view old_phase = json::getStringPath(old, {"status", "phase"});
    std::string_view now_time = json::getStringPath(obj, {"status", "lastPhaseTransitionTime"});
    std::string_view old_time = json::getStringPath(old, {"status", "lastPhaseTransitionTime"});
    json::Allocator& a = obj.GetAllocator();
    if (now_phase == old_phase && now_time.empty() && !old_time.empty())
      json::setString(json::ensureObject(obj, "status", a), "lastPhaseTransitionTime", std::string(old_time),
                      a);
    else if (now_phase != old_phase && (now_time.empty() || now_time == old_time))
      setPhaseTime(obj, a);
  }
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    json::Value& spec = json::ensureObject(obj, "spec", a);
    if (json::getString(spec, "persistentVolumeReclaimPolicy").empty())
      json::setString(spec, "persistentVolumeReclaimPolicy", "Retain", a);
    if (json::getString(spec, "volumeMode").empty()) json::setString(spec, "volumeMode", "Filesystem", a);
    json::Value& st = json::ensureObject(obj, "status", a);
    if (json::getString(st, "phase").empty()) json::setString(st, "phase", "Pending", a);
  }
  NameRule nameRule() const override { return NameRule::PathSegment; }
  void validate(const json::Value& obj, FieldErrors& errs) const override { validateSpec(obj, errs); }
  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validateSpec(obj, errs);
    if (volumeSource(obj) != volumeSource(old))
      errs.forbidden("spec.persistentvolumesource",
                     "spec.persistentvolumesource is immutable after creation");
    if (json::getStringPath(obj, {"spec", "volumeMode"}) != json::getStringPath(old, {"spec", "volumeMode"}))
      errs.invalid("volumeMode", meta::validation::quote(json::getStringPath(obj, {"spec", "volumeMode"})),
                   "field is immutable");
    const json::Value* was = json::findPath(old, {"spec", "nodeAffinity"});
    const json::Value* is = json::findPath(obj, {"spec", "nodeAffinity"});
    if (was && !was->IsNull() && (!is || *is != *was))
      errs.invalidOmitValue("nodeAffinity", "field is immutable");
  }
  std::vector<TableColumn> tableColumns() const override {
    return {
        {"Name", "string", "name", "Name must be unique within a namespace.", 0},
        {"Capacity", "string", "", "Size of the volume.", 0},
        {"Access Modes", "string", "", "How the volume may be mounted.", 0},
        {"Reclaim Policy", "string", "", "What happens to the volume when its claim goes.", 0},
        {"Status", "string", "", "Phase of the volume: Pending, Available, Bound, Released or Failed.", 0},
        {"Claim", "string", "", "The claim bound to the volume, as namespace/name.", 0},
        {"StorageClass", "string", "", "The class of storage the volume belongs to.", 0},
        {"VolumeAttributesClass", "string", "", "The VolumeAttributesClass the volume names.", 0},
        {"Reason", "string", "", "Why the volume is in its phase.", 0},
        {"Age", "string", "", "Time since the volume was created.", 0},
        {"VolumeMode", "string", "", "Filesystem or Block.", 1}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    std::string claim;
    if (const json::Value* ref = json::findPath(obj, {"spec", "claimRef"}); ref && ref->IsObject())
      claim =
          std::string(json::getString(*ref, "namespace")) + "/" + std::string(json::getString(*ref, "name"));
    std::string capacity = "0";
    if (const json::Value* q = json::findPath(obj, {"spec", "capacity", "storage"}))
      capacity = meta::canonicalQuantity(meta::quantityText(*q));
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(capacity, a), a);
    cells.PushBack(json::str(accessModesCell(json::findPath(obj, {"spec", "accessModes"})), a), a);
    cells.PushBack(json::str(json::getStringPath(obj, {"spec", "persistentVolumeReclaimPolicy"}), a), a);
    cells.PushBack(json::str(phaseCell(obj), a), a);
    cells.PushBack(json::str(claim, a), a);
    cells.PushBack(json::str(storageClassCell(obj), a), a);
    cells.PushBack(json::str(volumeAttributesClassCell(obj), a), a);
    cells.PushBack(json::str(json::getStringPath(obj, {"status", "reason"}), a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    cells.PushBack(json::str(volumeModeCell(obj), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> persistentVolumeStrategy() {
  return std::make_shared<PersistentVolumeStrategy>();
}

}  // namespace shepherd::apis::kinds
