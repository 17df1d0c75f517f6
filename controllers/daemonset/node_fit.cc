#include "controllers/daemonset/node_fit.h"

#include "meta/scheduling.h"

namespace shepherd::controllers::daemon {

namespace {

void addToleration(json::Value& spec, const char* key, const char* effect, json::Allocator& a) {
  json::Value* tols = json::find(spec, "tolerations");
  if (!tols || !tols->IsArray()) {
    json::set(spec, "tolerations", json::Value(rapidjson::kArrayType), a);
    tols = json::find(spec, "tolerations");
  }
  json::Value t(rapidjson::kObjectType);
  json::setString(t, "key", key, a);
  json::setString(t, "operator", "Exists", a);
  json::setString(t, "effect", effect, a);
  // AddOrUpdateTolerationInPodSpec: one with the same key and effect is replaced.
  for (auto& have : tols->GetArray())
    if (json::getString(have, "key") == key && json::getString(have, "effect") == effect) {
      have = std::move(t);
      return;
    }
  tols->PushBack(std::move(t), a);
}

}  // namespace

void addDaemonTolerations(json::Value& spec, json::Allocator& a) {
  // Node problems must not evict daemon pods, nor keep new ones away.
  addToleration(spec, "node.kubernetes.io/not-ready", "NoExecute", a);
  addToleration(spec, "node.kubernetes.io/unreachable", "NoExecute", a);
  addToleration(spec, "node.kubernetes.io/disk-pressure", "NoSchedule", a);
  addToleration(spec, "node.kubernetes.io/memory-pressure", "NoSchedule", a);
  addToleration(spec, "node.kubernetes.io/pid-pressure", "NoSchedule", a);
  addToleration(spec, "node.kubernetes.io/unschedulable", "NoSchedule", a);
  if (json::getBool(spec, "hostNetwork"))
    addToleration(spec, "node.kubernetes.io/network-unavailable", "NoSchedule", a);
}

void pinToNode(json::Value& spec, const std::string& node, json::Allocator& a) {
  json::Value req(rapidjson::kObjectType);
  json::setString(req, "key", "metadata.name", a);
  json::setString(req, "operator", "In", a);
  json::Value values(rapidjson::kArrayType);
  values.PushBack(json::str(node, a), a);
  json::set(req, "values", std::move(values), a);
  json::Value fields(rapidjson::kArrayType);
  fields.PushBack(std::move(req), a);
  json::Value term(rapidjson::kObjectType);
  json::set(term, "matchFields", std::move(fields), a);
  json::Value terms(rapidjson::kArrayType);
  terms.PushBack(std::move(term), a);
  json::Value& affinity = json::ensureObject(spec, "affinity", a);
  json::Value& nodeAffinity = json::ensureObject(affinity, "nodeAffinity", a);
  json::Value& required =
      json::ensureObject(nodeAffinity, "requiredDuringSchedulingIgnoredDuringExecution", a);
  json::set(required, "nodeSelectorTerms", std::move(terms), a);
}

std::string targetNode(const json::Value& pod) {
  std::string_view name = json::getStringPath(pod, {"spec", "nodeName"});
  if (!name.empty()) return std::string(name);
  const json::Value* terms =
      json::findPath(pod, {"spec", "affinity", "nodeAffinity",
                           "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
  if (!terms || !terms->IsArray()) return "";
  for (auto& t : terms->GetArray())
    if (const json::Value* fields = json::find(t, "matchFields"); fields && fields->IsArray())
      for (auto& r : fields->GetArray()) {
        const json::Value* values = json::find(r, "values");
        if (json::getString(r, "key") == "metadata.name" && json::getString(r, "operator") == "In" &&
            values && values->IsArray() && values->Size() == 1 && (*values)[0].IsString())
          return std::string(json::view((*values)[0]));
      }
  return "";
}

Fit nodeShouldRunDaemonPod(const json::Value& node, const json::Value& ds) {
  Fit fit;
  std::string name(json::getStringPath(node, {"metadata", "name"}));
  // The pod the DaemonSet would put on this node.
  json::Document spec;
  if (const json::Value* s = json::findPath(ds, {"spec", "template", "spec"}); s && s->IsObject())
    spec.CopyFrom(*s, spec.GetAllocator());
  else
    spec.SetObject();
  std::string_view wanted = json::getString(spec, "nodeName");
  if (!wanted.empty() && wanted != name) return fit;
  addDaemonTolerations(spec, spec.GetAllocator());
  if (!meta::requiredNodeAffinityMatches(spec, node)) return fit;
  const json::Value* taints = json::findPath(node, {"spec", "taints"});
  const json::Value* tols = json::find(spec, "tolerations");
  auto effect = [](const json::Value& t) { return json::getString(t, "effect"); };
  bool blocked = meta::untoleratedTaint(taints, tols, [&](const json::Value& t) {
    return effect(t) == "NoSchedule" || effect(t) == "NoExecute";
  });
  if (!blocked) return Fit{true, true};
  // A pod already here stays unless a NoExecute taint it does not tolerate says go.
  fit.should_continue =
      !meta::untoleratedTaint(taints, tols, [&](const json::Value& t) { return effect(t) == "NoExecute"; });
  return fit;
}

}  // namespace shepherd::controllers::daemon
