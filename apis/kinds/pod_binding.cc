#include "apis/kinds/pod_binding.h"

namespace shepherd::apis::kinds {

Status validateBinding(const json::Value& binding, const std::string& name) {
  std::string_view node = json::getStringPath(binding, {"target", "name"});
  std::string_view kind = json::getStringPath(binding, {"target", "kind"});
  if (node.empty())
    return ApiError::invalid("", "Binding", name, {{"FieldValueRequired", "Required value", "target.name"}});
  if (!kind.empty() && kind != "Node")
    return ApiError::invalid(
        "", "Binding", name,
        {{"FieldValueNotSupported",
          "Unsupported value: \"" + std::string(kind) + "\": supported values: \"Node\"", "target.kind"}});
  return okStatus();
}

Status assignPod(json::Document& pod, const json::Value& binding, const std::string& name,
                 const std::string& now) {
  std::string node(json::getStringPath(binding, {"target", "name"}));
  std::string wantUid(json::getStringPath(binding, {"metadata", "uid"}));
  std::string wantRv(json::getStringPath(binding, {"metadata", "resourceVersion"}));
  const json::Value* annotations = json::findPath(binding, {"metadata", "annotations"});
  auto& a = pod.GetAllocator();
  json::Value& meta = json::ensureObject(pod, "metadata", a);
  if (!wantUid.empty() && wantUid != json::getString(meta, "uid"))
    return ApiError::conflict("", "pods/binding", name,
                              "Precondition failed: UID in precondition: " + wantUid +
                                  ", UID in object meta: " + std::string(json::getString(meta, "uid")));
  if (!wantRv.empty() && wantRv != json::getString(meta, "resourceVersion"))
    return ApiError::conflict(
        "", "pods/binding", name,
        "the object has been modified; please apply your changes to the latest version and try again");
  if (json::find(meta, "deletionTimestamp"))
    return ApiError::conflict("", "pods/binding", name,
                              "pod " + name + " is being deleted, cannot be assigned to a host");
  std::string_view current = json::getStringPath(pod, {"spec", "nodeName"});
  if (!current.empty())
    return ApiError::conflict(
        "", "pods/binding", name,
        "pod " + name + " is already assigned to node \"" + std::string(current) + "\"");
  json::setString(json::ensureObject(pod, "spec", a), "nodeName", node, a);
  if (annotations && annotations->IsObject()) {
    json::Value& ann = json::ensureObject(meta, "annotations", a);
    for (auto& m : annotations->GetObject()) json::set(ann, json::view(m.name), json::Value(m.value, a), a);
  }
  // PodScheduled=True (replacing an Unschedulable condition the scheduler set earlier).
  json::Value& status = json::ensureObject(pod, "status", a);
  json::Value* conds = json::find(status, "conditions");
  if (!conds || !conds->IsArray()) {
    json::set(status, "conditions", json::Value(rapidjson::kArrayType), a);
    conds = json::find(status, "conditions");
  }
  json::Value cond(rapidjson::kObjectType);
  cond.AddMember("type", "PodScheduled", a);
  cond.AddMember("status", "True", a);
  cond.AddMember("lastProbeTime", json::Value(), a);
  cond.AddMember("lastTransitionTime", json::str(now, a), a);
  for (auto& c : conds->GetArray())
    if (json::getString(c, "type") == "PodScheduled") {
      c = std::move(cond);
      return okStatus();
    }
  conds->PushBack(cond, a);
  return okStatus();
}

}  // namespace shepherd::apis::kinds
