#include "controllers/disruption/pod_controllers.h"

#include <map>

#include "controllers/manager/object_meta.h"
#include "controllers/manager/pod_state.h"

namespace shepherd::controllers::disruption {

namespace {

// verifyGroupKind: the reference's kind, and its apiVersion's group one of `groups`.
bool isKind(const json::Value& ref, std::string_view kind, std::initializer_list<std::string_view> groups) {
  if (json::getString(ref, "kind") != kind) return false;
  std::string_view api = json::getString(ref, "apiVersion");
  size_t slash = api.find('/');
  std::string_view group = slash == std::string_view::npos ? std::string_view() : api.substr(0, slash);
  for (auto g : groups)
    if (g == group) return true;
  return false;
}

int64_t replicasOf(const json::Value& obj) {
  const json::Value* spec = json::find(obj, "spec");
  return spec ? json::getInt(*spec, "replicas").value_or(1) : 1;
}

// The cached object the reference names, if its UID matches.
client::Object resolve(client::Informer& informer, const json::Value& ref, const std::string& ns) {
  client::Object o = informer.get(ns + "/" + std::string(json::getString(ref, "name")));
  if (!o || uidOf(*o) != json::getString(ref, "uid")) return nullptr;
  return o;
}

}  // namespace

Result<std::optional<PodControllers::Scale>> PodControllers::replicationController(const json::Value& ref,
                                                                                   const std::string& ns) {
  if (!isKind(ref, "ReplicationController", {""})) return std::optional<Scale>();
  client::Object rc = resolve(rcs_, ref, ns);
  if (!rc) return std::optional<Scale>();
  return std::optional<Scale>(Scale{uidOf(*rc), replicasOf(*rc)});
}

Result<std::optional<PodControllers::Scale>> PodControllers::deployment(const json::Value& ref,
                                                                        const std::string& ns) {
  if (!isKind(ref, "ReplicaSet", {"apps", "extensions"})) return std::optional<Scale>();
  client::Object rs = resolve(replica_sets_, ref, ns);
  if (!rs) return std::optional<Scale>();
  const json::Value* owner = controllerRef(*rs);
  if (!owner || !isKind(*owner, "Deployment", {"apps", "extensions"})) return std::optional<Scale>();
  client::Object d = resolve(deployments_, *owner, ns);
  if (!d) return std::optional<Scale>();
  return std::optional<Scale>(Scale{uidOf(*d), replicasOf(*d)});
}

Result<std::optional<PodControllers::Scale>> PodControllers::replicaSet(const json::Value& ref,
                                                                        const std::string& ns) {
  if (!isKind(ref, "ReplicaSet", {"apps", "extensions"})) return std::optional<Scale>();
  client::Object rs = resolve(replica_sets_, ref, ns);
  if (!rs) return std::optional<Scale>();
  // A Deployment's ReplicaSet counts through its Deployment.
  if (const json::Value* owner = controllerRef(*rs); owner && json::getString(*owner, "kind") == "Deployment")
    return std::optional<Scale>();
  return std::optional<Scale>(Scale{uidOf(*rs), replicasOf(*rs)});
}

Result<std::optional<PodControllers::Scale>> PodControllers::statefulSet(const json::Value& ref,
                                                                         const std::string& ns) {
  if (!isKind(ref, "StatefulSet", {"apps"})) return std::optional<Scale>();
  client::Object set = resolve(sets_, ref, ns);
  if (!set) return std::optional<Scale>();
  return std::optional<Scale>(Scale{uidOf(*set), replicasOf(*set)});
}

Result<std::optional<PodControllers::Scale>> PodControllers::scaleSubresource(const json::Value& ref,
                                                                              const std::string& ns) {
  std::string api(json::getString(ref, "apiVersion"));
  std::string kind(json::getString(ref, "kind"));
  size_t slash = api.find('/');
  std::string group = slash == std::string::npos ? "" : api.substr(0, slash);
  std::string version = slash == std::string::npos ? api : api.substr(slash + 1);
  // The REST mapping of the kind, from discovery.
  std::string base = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  auto resources = client_.get(base);
  if (!resources && resources.error().code != 404) return resources.error();
  std::string plural;
  bool scalable = false;
  if (resources)
    if (const json::Value* list = json::find(resources.value(), "resources"); list && list->IsArray()) {
      for (const auto& r : list->GetArray())
        if (json::getString(r, "kind") == kind &&
            json::getString(r, "name").find('/') == std::string_view::npos)
          plural = json::getString(r, "name");
      for (const auto& r : list->GetArray())
        if (!plural.empty() && json::getString(r, "name") == plural + "/scale" &&
            json::getString(r, "kind") == "Scale")
          scalable = true;
    }
  if (plural.empty())
    return ApiError::make(404, "NotFound", "no matches for kind \"" + kind + "\" in version \"" + api + "\"");
  auto scale = client_.get(base + "/namespaces/" + client::urlEncode(ns) + "/" + plural + "/" +
                           client::urlEncode(std::string(json::getString(ref, "name"))) + "/scale");
  if (!scale) {
    if (scale.error().code != 404) return scale.error();
    if (!scalable)
      return ApiError::internal(plural + (group.empty() ? "" : "." + group) +
                                " does not implement the scale subresource");
    return std::optional<Scale>();
  }
  if (uidOf(scale.value()) != json::getString(ref, "uid")) return std::optional<Scale>();
  return std::optional<Scale>(Scale{uidOf(scale.value()), replicasOf(scale.value())});
}

Result<ExpectedScale> PodControllers::expectedScale(const std::vector<client::Object>& pods) {
  ExpectedScale out;
  std::map<std::string, int64_t> scales;  // controller UID -> replicas
  for (const auto& pod : pods) {
    const json::Value* ref = controllerRef(*pod);
    if (!ref) {
      out.unmanaged.push_back(nameOf(*pod));
      continue;
    }
    if (scales.count(std::string(json::getString(*ref, "uid")))) continue;
    std::string ns = namespaceOf(*pod);
    bool found = false;
    for (auto finder :
         {&PodControllers::replicationController, &PodControllers::deployment, &PodControllers::replicaSet,
          &PodControllers::statefulSet, &PodControllers::scaleSubresource}) {
      auto s = (this->*finder)(*ref, ns);
      if (!s) return s.error();
      if (s.value()) {
        scales[s.value()->uid] = s.value()->replicas;
        found = true;
        break;
      }
    }
    if (!found) return ApiError::internal("found no controllers for pod \"" + nameOf(*pod) + "\"");
  }
  for (const auto& [uid, n] : scales) out.expected += n;
  return out;
}

}  // namespace shepherd::controllers::disruption
