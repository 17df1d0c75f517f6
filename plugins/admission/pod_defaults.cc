#include "plugins/admission/pod_defaults.h"

namespace shepherd::plugins::admission {

using shepherd::admission::Attributes;
using shepherd::admission::Operation;

namespace {

json::Value* specOf(json::Document& pod) {
  json::Value* spec = json::find(pod, "spec");
  return spec && spec->IsObject() ? spec : nullptr;
}

void setIfMissing(json::Value& obj, std::string_view key, json::Value v, json::Allocator& a) {
  if (!json::find(obj, key)) json::set(obj, key, std::move(v), a);
}

}  // namespace

bool isPod(const Attributes& a) {
  return a.resource && a.resource->group.empty() && a.resource->plural == "pods" && a.subresource.empty();
}

Status DefaultTolerationSeconds::admit(const Attributes& a, json::Document& obj, const json::Value*) const {
  if (!isPod(a) || a.operation == Operation::Delete) return okStatus();
  json::Value* spec = specOf(obj);
  if (!spec) return okStatus();
  auto& al = obj.GetAllocator();
  bool notReady = false, unreachable = false;
  if (const json::Value* ts = json::find(*spec, "tolerations"); ts && ts->IsArray())
    for (auto& t : ts->GetArray()) {
      std::string_view key = json::getString(t, "key"), effect = json::getString(t, "effect");
      bool noExecute = effect.empty() || effect == "NoExecute";
      if (noExecute && (key.empty() || key == "node.kubernetes.io/not-ready")) notReady = true;
      if (noExecute && (key.empty() || key == "node.kubernetes.io/unreachable")) unreachable = true;
    }
  if (notReady && unreachable) return okStatus();
  json::Value* ts = json::find(*spec, "tolerations");
  if (!ts || !ts->IsArray()) {
    json::set(*spec, "tolerations", json::Value(rapidjson::kArrayType), al);
    ts = json::find(*spec, "tolerations");
  }
  auto add = [&](const char* key, int64_t seconds) {
    json::Value t(rapidjson::kObjectType);
    json::setString(t, "key", key, al);
    json::setString(t, "operator", "Exists", al);
    json::setString(t, "effect", "NoExecute", al);
    json::set(t, "tolerationSeconds", json::Value(seconds), al);
    ts->PushBack(std::move(t), al);
  };
  if (!notReady) add("node.kubernetes.io/not-ready", not_ready_);
  if (!unreachable) add("node.kubernetes.io/unreachable", unreachable_);
  return okStatus();
}

Status ServiceAccount::admit(const Attributes& a, json::Document& obj, const json::Value*) const {
  if (!isPod(a) || a.operation == Operation::Delete) return okStatus();
  json::Value* spec = specOf(obj);
  if (!spec) return okStatus();
  std::string sa(json::getString(*spec, "serviceAccountName"));
  if (sa.empty()) sa = json::getString(*spec, "serviceAccount");
  if (sa.empty()) sa = "default";
  setIfMissing(*spec, "serviceAccountName", json::str(sa, obj.GetAllocator()), obj.GetAllocator());
  setIfMissing(*spec, "serviceAccount", json::str(sa, obj.GetAllocator()), obj.GetAllocator());
  return okStatus();
}

}  // namespace shepherd::plugins::admission
