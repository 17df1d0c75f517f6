#include "controllers/statefulset/stateful_pod.h"

#include <charconv>
#include <set>

#include "controllers/manager/controller_ref.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/revision_history.h"

namespace shepherd::controllers::statefulset {

namespace {

std::string podName(const json::Value& set, int64_t ordinal) {
  return nameOf(set) + "-" + std::to_string(ordinal);
}

std::string claimName(const json::Value& tmpl, const json::Value& set, int64_t ordinal) {
  return std::string(json::getStringPath(tmpl, {"metadata", "name"})) + "-" + nameOf(set) + "-" +
         std::to_string(ordinal);
}

const json::Value* claimTemplates(const json::Value& set) {
  const json::Value* c = json::findPath(set, {"spec", "volumeClaimTemplates"});
  return c && c->IsArray() ? c : nullptr;
}

json::Value controllerRefTo(const std::string& api_version, const std::string& kind, const json::Value& owner,
                            json::Allocator& a) {
  return controllerReference(Owner{&owner, api_version, kind, "", ""}, a);
}

}  // namespace

std::optional<int64_t> ordinalOf(const json::Value& pod) {
  std::string name = nameOf(pod);
  size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash + 1 == name.size()) return std::nullopt;
  int64_t n = 0;
  auto [p, ec] = std::from_chars(name.data() + dash + 1, name.data() + name.size(), n);
  if (ec != std::errc() || p != name.data() + name.size() || n < 0) return std::nullopt;
  return n;
}

std::string parentOf(const json::Value& pod) {
  std::string name = nameOf(pod);
  size_t dash = name.rfind('-');
  return dash == std::string::npos ? "" : name.substr(0, dash);
}

bool isMemberOf(const json::Value& set, const json::Value& pod) {
  return ordinalOf(pod) && parentOf(pod) == nameOf(set);
}

int64_t startOrdinal(const json::Value& set) {
  const json::Value* o = json::findPath(set, {"spec", "ordinals"});
  return o && o->IsObject() ? json::getInt(*o, "start").value_or(0) : 0;
}

json::Document newPod(const json::Value& set, const json::Value& tmpl, const std::string& revision,
                      int64_t ordinal) {
  json::Document pod;
  pod.SetObject();
  auto& a = pod.GetAllocator();
  json::setString(pod, "apiVersion", "v1", a);
  json::setString(pod, "kind", "Pod", a);
  json::Value& md = json::ensureObject(pod, "metadata", a);
  json::setString(md, "name", podName(set, ordinal), a);
  json::setString(md, "generateName", nameOf(set) + "-", a);
  json::setString(md, "namespace", namespaceOf(set), a);
  for (const char* f : {"labels", "annotations", "finalizers"})
    if (const json::Value* v = json::findPath(tmpl, {"metadata", f}); v && !v->IsNull())
      json::set(md, f, json::Value(*v, a), a);
  json::Value refs(rapidjson::kArrayType);
  refs.PushBack(controllerRefTo("apps/v1", "StatefulSet", set, a), a);
  json::set(md, "ownerReferences", std::move(refs), a);
  if (const json::Value* spec = json::find(tmpl, "spec"); spec && spec->IsObject())
    json::set(pod, "spec", json::Value(*spec, a), a);
  else
    json::set(pod, "spec", json::Value(rapidjson::kObjectType), a);
  updateIdentity(set, pod, a);
  updateStorage(set, pod, a);
  json::setString(json::ensureObject(json::ensureObject(pod, "metadata", a), "labels", a), kRevisionHashLabel,
                  revision, a);
  return pod;
}

bool identityMatches(const json::Value& set, const json::Value& pod) {
  auto ordinal = ordinalOf(pod);
  if (!ordinal || parentOf(pod) != nameOf(set) || namespaceOf(pod) != namespaceOf(set)) return false;
  if (json::getStringPath(pod, {"metadata", "labels", kPodNameLabel}) != nameOf(pod)) return false;
  return json::getStringPath(pod, {"metadata", "labels", kPodIndexLabel}) == std::to_string(*ordinal);
}

void updateIdentity(const json::Value& set, json::Value& pod, json::Allocator& a) {
  std::string name = nameOf(pod);
  auto ordinal = ordinalOf(pod);
  json::Value& md = json::ensureObject(pod, "metadata", a);
  json::setString(md, "namespace", namespaceOf(set), a);
  json::Value& labels = json::ensureObject(md, "labels", a);
  json::setString(labels, kPodNameLabel, name, a);
  if (ordinal) json::setString(labels, kPodIndexLabel, std::to_string(*ordinal), a);
  json::Value& spec = json::ensureObject(pod, "spec", a);
  json::setString(spec, "hostname", name, a);
  std::string_view service = json::getStringPath(set, {"spec", "serviceName"});
  if (!service.empty()) json::setString(spec, "subdomain", service, a);
}

bool storageMatches(const json::Value& set, const json::Value& pod) {
  const json::Value* templates = claimTemplates(set);
  if (!templates) return true;
  auto ordinal = ordinalOf(pod);
  if (!ordinal) return false;
  const json::Value* volumes = json::findPath(pod, {"spec", "volumes"});
  for (auto& t : templates->GetArray()) {
    std::string_view vname = json::getStringPath(t, {"metadata", "name"});
    bool found = false;
    if (volumes && volumes->IsArray())
      for (auto& v : volumes->GetArray())
        if (json::getString(v, "name") == vname)
          found =
              json::getStringPath(v, {"persistentVolumeClaim", "claimName"}) == claimName(t, set, *ordinal);
    if (!found) return false;
  }
  return true;
}

void updateStorage(const json::Value& set, json::Value& pod, json::Allocator& a) {
  const json::Value* templates = claimTemplates(set);
  auto ordinal = ordinalOf(pod);
  if (!templates || templates->Empty() || !ordinal) return;
  json::Value& spec = json::ensureObject(pod, "spec", a);
  json::Value volumes(rapidjson::kArrayType);
  std::set<std::string> claimed;
  for (auto& t : templates->GetArray()) {
    std::string vname(json::getStringPath(t, {"metadata", "name"}));
    claimed.insert(vname);
    json::Value v(rapidjson::kObjectType), pvc(rapidjson::kObjectType);
    json::setString(v, "name", vname, a);
    json::setString(pvc, "claimName", claimName(t, set, *ordinal), a);
    json::set(v, "persistentVolumeClaim", std::move(pvc), a);
    volumes.PushBack(std::move(v), a);
  }
  // The claims' volumes replace the template's volumes of the same name, and come first.
  if (const json::Value* old = json::find(spec, "volumes"); old && old->IsArray())
    for (auto& v : old->GetArray())
      if (!claimed.count(std::string(json::getString(v, "name")))) volumes.PushBack(json::Value(v, a), a);
  json::set(spec, "volumes", std::move(volumes), a);
}

std::vector<Claim> claimsFor(const json::Value& set, int64_t ordinal) {
  std::vector<Claim> out;
  const json::Value* templates = claimTemplates(set);
  if (!templates) return out;
  const json::Value* matchLabels = json::findPath(set, {"spec", "selector", "matchLabels"});
  for (auto& t : templates->GetArray()) {
    Claim c;
    c.name = claimName(t, set, ordinal);
    auto& a = c.object.GetAllocator();
    c.object.SetObject();
    json::setString(c.object, "apiVersion", "v1", a);
    json::setString(c.object, "kind", "PersistentVolumeClaim", a);
    json::Value& md = json::ensureObject(c.object, "metadata", a);
    json::setString(md, "name", c.name, a);
    json::setString(md, "namespace", namespaceOf(set), a);
    json::Value labels(rapidjson::kObjectType);
    if (const json::Value* l = json::findPath(t, {"metadata", "labels"}); l && l->IsObject())
      labels.CopyFrom(*l, a);
    if (matchLabels && matchLabels->IsObject())
      for (auto& m : matchLabels->GetObject())
        json::set(labels, json::view(m.name), json::Value(m.value, a), a);
    json::set(md, "labels", std::move(labels), a);
    if (const json::Value* ann = json::findPath(t, {"metadata", "annotations"}); ann && ann->IsObject())
      json::set(md, "annotations", json::Value(*ann, a), a);
    if (const json::Value* spec = json::find(t, "spec"); spec && spec->IsObject())
      json::set(c.object, "spec", json::Value(*spec, a), a);
    out.push_back(std::move(c));
  }
  return out;
}

ClaimOwners wantedOwners(const json::Value& set, bool condemned) {
  bool deleteWithSet =
      json::getStringPath(set, {"spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted"}) == "Delete";
  bool deleteWhenScaled =
      json::getStringPath(set, {"spec", "persistentVolumeClaimRetentionPolicy", "whenScaled"}) == "Delete";
  if (condemned && deleteWhenScaled) return ClaimOwners{false, true};
  return ClaimOwners{deleteWithSet, false};
}

namespace {

bool refersTo(const json::Value& ref, const char* kind, const json::Value& owner) {
  return json::getString(ref, "kind") == kind && json::getString(ref, "name") == nameOf(owner);
}

}  // namespace

bool claimOwnersUpToDate(const json::Value& set, const json::Value& pod, const json::Value& claim,
                         bool condemned) {
  ClaimOwners want = wantedOwners(set, condemned);
  bool hasSet = false, hasPod = false;
  const json::Value* refs = json::findPath(claim, {"metadata", "ownerReferences"});
  if (refs && refs->IsArray())
    for (auto& r : refs->GetArray()) {
      bool ourSet = refersTo(r, "StatefulSet", set), ourPod = refersTo(r, "Pod", pod);
      // A reference to an earlier object of the same name: leave the claim alone.
      if ((ourSet && json::getString(r, "uid") != uidOf(set)) ||
          (ourPod && json::getString(r, "uid") != uidOf(pod)))
        return true;
      if (!ourSet && !ourPod && json::getBool(r, "controller") && (want.set || want.pod))
        return true;  // another controller's claim: the policy is ignored for it
      hasSet = hasSet || ourSet;
      hasPod = hasPod || ourPod;
    }
  return hasSet == want.set && hasPod == want.pod;
}

json::Value claimOwnerRefs(const json::Value& set, const json::Value& pod, const json::Value& claim,
                           bool condemned, json::Allocator& a) {
  ClaimOwners want = wantedOwners(set, condemned);
  json::Value out(rapidjson::kArrayType);
  if (const json::Value* refs = json::findPath(claim, {"metadata", "ownerReferences"});
      refs && refs->IsArray())
    for (auto& r : refs->GetArray())
      if (!refersTo(r, "StatefulSet", set) && !refersTo(r, "Pod", pod)) out.PushBack(json::Value(r, a), a);
  if (want.set) out.PushBack(controllerRefTo("apps/v1", "StatefulSet", set, a), a);
  if (want.pod) out.PushBack(controllerRefTo("v1", "Pod", pod, a), a);
  return out;
}

}  // namespace shepherd::controllers::statefulset
