#include "meta/persistent_volumes.h"

#include <map>
#include <set>

#include "meta/quantity.h"
#include "meta/scheduling.h"
#include "meta/selectors.h"

namespace shepherd::meta {

namespace {

long double storageOf(const json::Value* q) {
  return q ? quantityValue(*q).value_or(0) : 0;
}

std::set<std::string> accessModes(const json::Value& obj) {
  std::set<std::string> out;
  if (const json::Value* m = json::findPath(obj, {"spec", "accessModes"}); m && m->IsArray())
    for (const auto& v : m->GetArray())
      if (v.IsString()) out.insert(std::string(json::view(v)));
  return out;
}

std::string volumeModeOf(const json::Value& obj) {
  std::string_view m = json::getStringPath(obj, {"spec", "volumeMode"});
  return m.empty() ? "Filesystem" : std::string(m);
}

bool deleting(const json::Value& obj) {
  const json::Value* d = json::findPath(obj, {"metadata", "deletionTimestamp"});
  return d && !d->IsNull();
}

bool selectorMatches(const json::Value& claim, const json::Value& volume) {
  const json::Value* sel = json::findPath(claim, {"spec", "selector"});
  if (!sel || !sel->IsObject()) return true;
  auto s = LabelSelector::fromJson(*sel);
  if (!s) return false;
  return s->matchesLabels(json::findPath(volume, {"metadata", "labels"}));
}

}  // namespace

bool hasAnnotation(const json::Value& obj, const char* key) {
  const json::Value* ann = json::findPath(obj, {"metadata", "annotations"});
  return ann && ann->IsObject() && json::find(*ann, key);
}

std::string annotation(const json::Value& obj, const char* key) {
  const json::Value* ann = json::findPath(obj, {"metadata", "annotations"});
  return ann && ann->IsObject() ? std::string(json::getString(*ann, key)) : std::string();
}

std::string storageClassOf(const json::Value& obj) {
  if (hasAnnotation(obj, kBetaStorageClass)) return annotation(obj, kBetaStorageClass);
  return std::string(json::getStringPath(obj, {"spec", "storageClassName"}));
}

bool claimHasClass(const json::Value& claim) {
  if (hasAnnotation(claim, kBetaStorageClass)) return true;
  const json::Value* c = json::findPath(claim, {"spec", "storageClassName"});
  return c && c->IsString();
}

bool isVolumeBoundToClaim(const json::Value& volume, const json::Value& claim) {
  const json::Value* ref = json::findPath(volume, {"spec", "claimRef"});
  if (!ref || !ref->IsObject()) return false;
  if (json::getString(*ref, "name") != json::getStringPath(claim, {"metadata", "name"}) ||
      json::getString(*ref, "namespace") != json::getStringPath(claim, {"metadata", "namespace"}))
    return false;
  std::string_view uid = json::getString(*ref, "uid");
  return uid.empty() || uid == json::getStringPath(claim, {"metadata", "uid"});
}

std::optional<std::string> volumeMismatch(const json::Value& volume, const json::Value& claim) {
  if (deleting(volume))
    return "the volume is marked for deletion \"" +
           std::string(json::getStringPath(volume, {"metadata", "name"})) + "\"";
  if (storageOf(json::findPath(volume, {"spec", "capacity", "storage"})) <
      storageOf(json::findPath(claim, {"spec", "resources", "requests", "storage"})))
    return std::string("requested PV is too small");
  if (storageClassOf(volume) != storageClassOf(claim)) return std::string("storageClassName does not match");
  if (volumeModeOf(volume) != volumeModeOf(claim)) return std::string("incompatible volumeMode");
  std::set<std::string> have = accessModes(volume);
  for (const auto& m : accessModes(claim))
    if (!have.count(m)) return std::string("incompatible accessMode");
  return std::nullopt;
}

bool volumeNodeAffinityMatches(const json::Value& volume, const json::Value& node) {
  const json::Value* required = json::findPath(volume, {"spec", "nodeAffinity", "required"});
  if (!required || !required->IsObject()) return true;
  // The pod-spec form of a required node affinity, judged as for a pod.
  json::Document spec(rapidjson::kObjectType);
  json::Allocator& a = spec.GetAllocator();
  json::Value& aff = json::ensureObject(spec, "affinity", a);
  json::Value& na = json::ensureObject(aff, "nodeAffinity", a);
  json::set(na, "requiredDuringSchedulingIgnoredDuringExecution", json::Value(*required, a), a);
  return requiredNodeAffinityMatches(spec, node);
}

bool claimFullyBound(const json::Value& claim) {
  return !json::getStringPath(claim, {"spec", "volumeName"}).empty() && hasAnnotation(claim, kBindCompleted);
}

const json::Value* findMatchingVolume(const json::Value& claim,
                                      const std::vector<const json::Value*>& volumes, bool delay_binding,
                                      const json::Value* node, const std::set<std::string>& excluded) {
  long double requested = storageOf(json::findPath(claim, {"spec", "resources", "requests", "storage"}));
  std::set<std::string> wanted = accessModes(claim);
  std::string cls = storageClassOf(claim);
  // The candidates grouped by their access-mode count (fewest first), as upstream's
  // index tries each set of modes containing the claim's in turn.
  std::map<size_t, const json::Value*> best;
  for (const json::Value* v : volumes) {
    const json::Value& pv = *v;
    if (excluded.count(std::string(json::getStringPath(pv, {"metadata", "name"})))) continue;
    const json::Value* ref = json::findPath(pv, {"spec", "claimRef"});
    bool bound = ref && ref->IsObject();
    if (bound && !isVolumeBoundToClaim(pv, claim)) continue;
    if (storageOf(json::findPath(pv, {"spec", "capacity", "storage"})) < requested) continue;
    if (volumeModeOf(pv) != volumeModeOf(claim)) continue;
    if (deleting(pv)) continue;
    if (node && !volumeNodeAffinityMatches(pv, *node)) {
      if (bound) return nullptr;  // pre-bound elsewhere: no volume on this node
      continue;
    }
    if (bound) return v;  // pre-bound to this claim
    if (delay_binding && !node) continue;
    if (json::getStringPath(pv, {"status", "phase"}) != "Available") continue;
    if (!selectorMatches(claim, pv) || storageClassOf(pv) != cls) continue;
    std::set<std::string> have = accessModes(pv);
    bool all = true;
    for (const auto& m : wanted) all = all && have.count(m);
    if (!all) continue;
    const json::Value*& slot = best[have.size()];
    if (!slot || storageOf(json::findPath(pv, {"spec", "capacity", "storage"})) <
                     storageOf(json::findPath(*slot, {"spec", "capacity", "storage"})))
      slot = v;
  }
  return best.empty() ? nullptr : best.begin()->second;
}

}  // namespace shepherd::meta
