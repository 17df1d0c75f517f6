#include "controllers/endpoint/service_pods.h"

namespace shepherd::controllers {

bool serviceSelects(const json::Value& selector, const json::Value* labels) {
  if (!selector.IsObject() || selector.ObjectEmpty()) return false;
  for (auto& kv : selector.GetObject()) {
    const json::Value* have = labels ? json::find(*labels, json::view(kv.name)) : nullptr;
    if (!have || *have != kv.value) return false;
  }
  return true;
}

std::optional<int64_t> resolveTargetPort(const json::Value& service_port, const json::Value& pod) {
  const json::Value* target = json::find(service_port, "targetPort");
  if (!target) return json::getInt(service_port, "port");
  if (target->IsInt64()) return target->GetInt64();
  if (!target->IsString()) return std::nullopt;
  std::string_view name = json::view(*target);
  std::string_view proto = json::getString(service_port, "protocol", "TCP");
  if (const json::Value* cs = json::findPath(pod, {"spec", "containers"}); cs && cs->IsArray())
    for (auto& c : cs->GetArray())
      if (const json::Value* ports = json::find(c, "ports"); ports && ports->IsArray())
        for (auto& p : ports->GetArray())
          if (json::getString(p, "name") == name && json::getString(p, "protocol", "TCP") == proto)
            return json::getInt(p, "containerPort");
  return std::nullopt;
}

json::Value podReference(const json::Value& pod, json::Allocator& a) {
  json::Value ref(rapidjson::kObjectType);
  json::setString(ref, "kind", "Pod", a);
  json::setString(ref, "namespace", json::getStringPath(pod, {"metadata", "namespace"}), a);
  json::setString(ref, "name", json::getStringPath(pod, {"metadata", "name"}), a);
  json::setString(ref, "uid", json::getStringPath(pod, {"metadata", "uid"}), a);
  return ref;
}

json::Value endpointPorts(const json::Value& service, const json::Value& pod, bool always_name,
                          json::Allocator& a) {
  json::Value out(rapidjson::kArrayType);
  const json::Value* ports = json::findPath(service, {"spec", "ports"});
  if (!ports || !ports->IsArray()) return out;
  for (auto& sp : ports->GetArray()) {
    auto port = resolveTargetPort(sp, pod);
    if (!port) continue;
    json::Value p(rapidjson::kObjectType);
    if (std::string_view n = json::getString(sp, "name"); always_name || !n.empty())
      json::setString(p, "name", n, a);
    json::set(p, "port", json::Value(*port), a);
    json::setString(p, "protocol", json::getString(sp, "protocol", "TCP"), a);
    if (std::string_view ap = json::getString(sp, "appProtocol"); !ap.empty())
      json::setString(p, "appProtocol", ap, a);
    out.PushBack(std::move(p), a);
  }
  return out;
}

std::vector<std::string> servicesSelecting(const client::Informer& services, const json::Value* old_pod,
                                           const json::Value& pod) {
  std::vector<std::string> keys;
  std::string_view ns = json::getStringPath(pod, {"metadata", "namespace"});
  for (auto& svc : services.list()) {
    if (json::getStringPath(*svc, {"metadata", "namespace"}) != ns) continue;
    const json::Value* sel = json::findPath(*svc, {"spec", "selector"});
    if (!sel) continue;
    if (serviceSelects(*sel, json::findPath(pod, {"metadata", "labels"})) ||
        (old_pod && serviceSelects(*sel, json::findPath(*old_pod, {"metadata", "labels"}))))
      keys.push_back(client::objectKey(*svc));
  }
  return keys;
}

client::EventHandlers queueSelectingServices(const client::Informer& services, client::WorkQueue& queue) {
  client::EventHandlers h;
  auto enqueue = [&services, &queue](const json::Value* old_pod, const json::Value& pod) {
    for (auto& key : servicesSelecting(services, old_pod, pod)) queue.add(key);
  };
  h.on_add = [enqueue](const client::Object& o) { enqueue(nullptr, *o); };
  h.on_update = [enqueue](const client::Object& old, const client::Object& o) { enqueue(old.get(), *o); };
  h.on_delete = [enqueue](const client::Object& o) { enqueue(nullptr, *o); };
  return h;
}

}  // namespace shepherd::controllers
