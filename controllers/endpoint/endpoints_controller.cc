#include "controllers/endpoint/endpoints_controller.h"

#include <map>

#include "controllers/endpoint/service_pods.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/pod_state.h"

namespace shepherd::controllers {

json::Value endpointSubsets(const json::Value& service, const std::vector<client::Object>& pods,
                            json::Allocator& a) {
  const json::Value* spec = json::find(service, "spec");
  const json::Value* selector = spec ? json::find(*spec, "selector") : nullptr;
  bool publishNotReady = spec && json::getBool(*spec, "publishNotReadyAddresses");
  bool headless = spec && json::getString(*spec, "clusterIP") == "None";
  const json::Value* svcPorts = spec ? json::find(*spec, "ports") : nullptr;
  // port set (as JSON) -> (ports, ready addresses by IP, not-ready addresses by IP)
  struct Subset {
    std::string ports;
    std::map<std::string, std::string> ready, notReady;
  };
  std::map<std::string, Subset> subsets;
  for (auto& p : pods) {
    const json::Value& pod = *p;
    if (!selector || !serviceSelects(*selector, json::findPath(pod, {"metadata", "labels"}))) continue;
    std::string ip(json::getStringPath(pod, {"status", "podIP"}));
    if (ip.empty() || !podActive(pod)) continue;
    json::Document addr;
    addr.SetObject();
    auto& aa = addr.GetAllocator();
    json::setString(addr, "ip", ip, aa);
    if (std::string_view node = json::getStringPath(pod, {"spec", "nodeName"}); !node.empty())
      json::setString(addr, "nodeName", node, aa);
    json::set(addr, "targetRef", podReference(pod, aa), aa);
    json::Document ports;
    json::Value resolved = endpointPorts(service, pod, false, ports.GetAllocator());
    static_cast<json::Value&>(ports).Swap(resolved);
    // No resolvable port: only a headless Service without ports lists the pod.
    if (ports.Empty() && !(headless && (!svcPorts || !svcPorts->IsArray() || svcPorts->Empty()))) continue;
    std::string key = json::serialize(ports);
    Subset& s = subsets[key];
    s.ports = key;
    (podReady(pod) || publishNotReady ? s.ready : s.notReady)[ip] = json::serialize(addr);
  }
  json::Value out(rapidjson::kArrayType);
  for (auto& [key, s] : subsets) {
    json::Value subset(rapidjson::kObjectType);
    for (auto [field, addrs] :
         {std::pair<const char*, const std::map<std::string, std::string>*>{"addresses", &s.ready},
          {"notReadyAddresses", &s.notReady}}) {
      if (addrs->empty()) continue;
      json::Value list(rapidjson::kArrayType);
      for (auto& [ip, text] : *addrs) {
        json::Document d;
        d.Parse(text.data(), text.size());
        list.PushBack(json::Value(d, a), a);
      }
      json::set(subset, field, std::move(list), a);
    }
    json::Document ports;
    ports.Parse(s.ports.data(), s.ports.size());
    if (!ports.Empty()) json::set(subset, "ports", json::Value(ports, a), a);
    out.PushBack(std::move(subset), a);
  }
  return out;
}

EndpointsController::EndpointsController(client::Client& c, client::SharedInformers& informers)
    : Controller("endpoint"),
      client_(c),
      services_(informers.get(client::allObjects("", "v1", "services"))),
      pods_(informers.get(client::allObjects("", "v1", "pods"))),
      endpoints_(informers.get(client::allObjects("", "v1", "endpoints"))) {
  indexByNamespace(pods_);
  services_.addHandlers(enqueueKeys());
  pods_.addHandlers(queueSelectingServices(services_, queue_));
  // Someone edited or deleted an Endpoints object we manage: put it right.
  client::EventHandlers eh;
  eh.on_update = [this](const client::Object&, const client::Object& o) {
    if (services_.get(client::objectKey(*o))) queue_.add(client::objectKey(*o));
  };
  eh.on_delete = [this](const client::Object& o) {
    if (services_.get(client::objectKey(*o))) queue_.add(client::objectKey(*o));
  };
  endpoints_.addHandlers(std::move(eh));
}

Result<SyncResult> EndpointsController::sync(const std::string& key) {
  size_t slash = key.find('/');
  std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  std::string path = "/api/v1/namespaces/" + client::urlEncode(ns) + "/endpoints";
  client::Object svc = services_.get(key);
  client::Object current = endpoints_.get(key);
  if (!svc) {
    if (current) {
      auto r = client_.del(path + "/" + client::urlEncode(name));
      if (!r && r.error().code != 404) return r.error();
    }
    return SyncResult{};
  }
  const json::Value* sel = json::findPath(*svc, {"spec", "selector"});
  if (!sel || !sel->IsObject() || sel->ObjectEmpty()) return SyncResult{};  // managed by someone else
  json::Document ep;
  ep.SetObject();
  auto& a = ep.GetAllocator();
  json::setString(ep, "apiVersion", "v1", a);
  json::setString(ep, "kind", "Endpoints", a);
  json::Value& md = json::ensureObject(ep, "metadata", a);
  json::setString(md, "name", name, a);
  json::setString(md, "namespace", ns, a);
  json::Value labels(rapidjson::kObjectType);
  if (const json::Value* l = json::findPath(*svc, {"metadata", "labels"}); l && l->IsObject())
    labels.CopyFrom(*l, a);
  if (json::getStringPath(*svc, {"spec", "clusterIP"}) == "None")
    json::setString(labels, "service.kubernetes.io/headless", "", a);
  if (!labels.ObjectEmpty()) json::set(md, "labels", std::move(labels), a);
  json::Value subsets = endpointSubsets(*svc, pods_.byIndex(kNamespaceIndex, ns), a);
  if (!subsets.Empty()) json::set(ep, "subsets", std::move(subsets), a);
  if (current) {
    const json::Value* curSubsets = json::find(*current, "subsets");
    const json::Value* curLabels = json::findPath(*current, {"metadata", "labels"});
    const json::Value* newSubsets = json::find(ep, "subsets");
    const json::Value* newLabels = json::findPath(ep, {"metadata", "labels"});
    bool sameSubsets =
        (!curSubsets || curSubsets->Empty()) ? !newSubsets : (newSubsets && *curSubsets == *newSubsets);
    bool sameLabels =
        (!curLabels || curLabels->ObjectEmpty()) ? !newLabels : (newLabels && *curLabels == *newLabels);
    if (sameSubsets && sameLabels) return SyncResult{};
    json::setString(md, "resourceVersion", json::getStringPath(*current, {"metadata", "resourceVersion"}), a);
    auto r = client_.put(path + "/" + client::urlEncode(name), json::serialize(ep));
    if (!r) return r.error();
    return SyncResult{};
  }
  auto r = client_.post(path, json::serialize(ep));
  if (!r && r.error().code != 409 && r.error().code != 403) return r.error();
  if (!r && r.error().code == 409) return r.error();  // our cache was behind: try again on fresh state
  return SyncResult{};
}

}  // namespace shepherd::controllers
