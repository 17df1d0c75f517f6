// PersistentVolumeClaim (core/v1): a pod's request for storage of a size and access
// mode, bound to one PersistentVolume by spec.volumeName. Status (phase, capacity) is
// written by the binder through /status; the spec is fixed after creation except a
// first volumeName, and a bound claim's requested size, which may only grow.
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "apis/kinds/storage_checks.h"
#include "meta/quantity.h"

namespace shepherd::apis::kinds {

namespace {

void validateSpec(const json::Value& obj, FieldErrors& errs) {
  const json::Value* spec = json::find(obj, "spec");
  if (!spec || !spec->IsObject()) {
    errs.required("spec.accessModes", "at least 1 access mode is required");
    errs.required("spec.resources[storage]");
    return;
  }
  validateAccessModes(json::find(*spec, "accessModes"), "spec.accessModes",
                      "at least 1 access mode is required", errs);
  if (const json::Value* sel = json::find(*spec, "selector"); sel && sel->IsObject())
    validateLabelSelector(*sel, "spec.selector", errs);
  const json::Value* storage = json::findPath(*spec, {"resources", "requests", "storage"});
  if (!storage || storage->IsNull())
    errs.required("spec.resources[storage]");
  else
    validateStorageQuantity(*storage, "spec.resources[storage]", errs);
  validateClassName(json::find(*spec, "storageClassName"), "spec.storageClassName", errs);
  validateVolumeMode(json::find(*spec, "volumeMode"), "spec.volumeMode", errs);
}

long double requestedStorage(const json::Value& obj) {
  const json::Value* q = json::findPath(obj, {"spec", "resources", "requests", "storage"});
  return q ? meta::quantityValue(*q).value_or(0) : 0;
}

class PersistentVolumeClaimStrategy final : public Strategy {
 public:
  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    json::set(obj, "status", json::Value(rapidjson::kObjectType), obj.GetAllocator());
  }
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    json::Value& spec = json::ensureObject(obj, "spec", a);
    if (json::getString(spec, "volumeMode").empty()) json::setString(spec, "volumeMode", "Filesystem", a);
    json::Value& st = json::ensureObject(obj, "status", a);
    if (json::getString(st, "phase").empty()) json::setString(st, "phase", "Pending", a);
  }
  NameRule nameRule() const override { return NameRule::PathSegment; }
  void validate(const json::Value& obj, FieldErrors& errs) const override { validateSpec(obj, errs); }
  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validateSpec(obj, errs);
    static const json::Value kEmpty(rapidjson::kObjectType);
    const json::Value* ns = json::find(obj, "spec");
    const json::Value* os = json::find(old, "spec");
    json::Document now, before;
    now.CopyFrom(ns ? *ns : kEmpty, now.GetAllocator());
    before.CopyFrom(os ? *os : kEmpty, before.GetAllocator());
    // A claim may be given its volume once.
    if (json::getString(before, "volumeName").empty()) {
      json::remove(now, "volumeName");
      json::remove(before, "volumeName");
    }
    bool bound = json::getStringPath(obj, {"status", "phase"}) == "Bound";
    if (bound) {
      for (auto* d : {&now, &before}) {
        if (json::Value* req = json::findPath(*d, {"resources", "requests"}); req && req->IsObject())
          json::remove(*req, "storage");
        json::remove(*d, "volumeAttributesClassName");
      }
    }
    if (now != before)
      errs.forbidden(
          "spec",
          "spec is immutable after creation except resources.requests and volumeAttributesClassName "
          "for bound claims");
    else if (bound && requestedStorage(obj) < requestedStorage(old))
      errs.forbidden("spec.resources.requests.storage", "field can not be less than previous value");
  }
  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Status", "string", "", "Phase of the claim: Pending, Bound or Lost.", 0},
            {"Volume", "string", "", "The PersistentVolume bound to this claim.", 0},
            {"Capacity", "string", "", "Size of the bound volume.", 0},
            {"Access Modes", "string", "", "Access modes the bound volume offers.", 0},
            {"StorageClass", "string", "", "The class of storage the claim asks for.", 0},
            {"VolumeAttributesClass", "string", "", "The VolumeAttributesClass the claim names.", 0},
            {"Age", "string", "", "Time since the claim was created.", 0},
            {"VolumeMode", "string", "", "Filesystem or Block.", 1}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    std::string_view volume = json::getStringPath(obj, {"spec", "volumeName"});
    std::string capacity, modes;
    if (!volume.empty()) {
      const json::Value* st = json::find(obj, "status");
      modes = accessModesCell(st ? json::find(*st, "accessModes") : nullptr);
      const json::Value* q = st ? json::findPath(*st, {"capacity", "storage"}) : nullptr;
      // A bound claim without a capacity prints the zero quantity.
      capacity = meta::canonicalQuantity(q ? meta::quantityText(*q) : std::string("0"));
    }
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(phaseCell(obj), a), a);
    cells.PushBack(json::str(volume, a), a);
    cells.PushBack(json::str(capacity, a), a);
    cells.PushBack(json::str(modes, a), a);
    cells.PushBack(json::str(storageClassCell(obj), a), a);
    cells.PushBack(json::str(volumeAttributesClassCell(obj), a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    cells.PushBack(json::str(volumeModeCell(obj), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> persistentVolumeClaimStrategy() {
  return std::make_shared<PersistentVolumeClaimStrategy>();
}

}  // namespace shepherd::apis::kinds
