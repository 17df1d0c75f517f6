#include "controllers/endpointslice/endpointslice_controller.h"

#include "controllers/endpoint/service_pods.h"
#include "controllers/endpointslice/endpointslice_reconciler.h"
#include "controllers/manager/object_meta.h"

namespace shepherd::controllers {

namespace {

constexpr const char* kServiceIndex = "service";

// "ns/service" for a slice this controller manages, else "".
std::string managedServiceKey(const json::Value& slice) {
  const json::Value* labels = json::findPath(slice, {"metadata", "labels"});
  if (!labels || json::getString(*labels, kManagedByLabel) != kManagedByValue) return "";
  std::string_view svc = json::getString(*labels, kServiceNameLabel);
  return svc.empty() ? "" : namespaceOf(slice) + "/" + std::string(svc);
}

}  // namespace

EndpointSliceController::EndpointSliceController(client::Client& c, client::SharedInformers& informers,
                                                 size_t max_per_slice)
    : Controller("endpointslice"),
      client_(c),
      services_(informers.get(client::allObjects("", "v1", "services"))),
      pods_(informers.get(client::allObjects("", "v1", "pods"))),
      slices_(informers.get(client::allObjects("discovery.k8s.io", "v1", "endpointslices"))),
      max_per_slice_(max_per_slice) {
  indexByNamespace(pods_);
  slices_.addIndex(kServiceIndex, [](const json::Value& s) {
    std::string key = managedServiceKey(s);
    return key.empty() ? std::vector<std::string>{} : std::vector<std::string>{key};
  });
  services_.addHandlers(enqueueKeys());
  pods_.addHandlers(queueSelectingServices(services_, queue_));
  // Someone else changed or removed one of our slices: put it right.
  client::EventHandlers eh;
  eh.on_add = [this](const client::Object& o) { onSlice(*o); };
  eh.on_update = [this](const client::Object&, const client::Object& o) { onSlice(*o); };
  eh.on_delete = [this](const client::Object& o) {
    tracker_.observedDeleted(client::objectKey(*o));
    onSlice(*o);
  };
  slices_.addHandlers(std::move(eh));
}

void EndpointSliceController::onSlice(const json::Value& slice) {
  std::string key = managedServiceKey(slice);
  if (!key.empty()) queue_.add(key);
}

Result<SyncResult> EndpointSliceController::sync(const std::string& key) {
  size_t slash = key.find('/');
  std::string ns = key.substr(0, slash);
  std::string path = "/apis/discovery.k8s.io/v1/namespaces/" + client::urlEncode(ns) + "/endpointslices";
  client::Object svc = services_.get(key);
  std::vector<client::Object> existing = slices_.byIndex(kServiceIndex, key);
  if (!svc) {
    // The garbage collector removes owned slices too; deleting here keeps a Service's
    // slices from outliving it when garbage collection is turned off.
    tracker_.forget(key);
    for (auto& s : existing) {
      auto r = client_.del(path + "/" + client::urlEncode(nameOf(*s)));
      if (!r && r.error().code != 404) return r.error();
    }
    return SyncResult{};
  }
  const json::Value* sel = json::findPath(*svc, {"spec", "selector"});
  if (!sel || !sel->IsObject() || sel->ObjectEmpty()) return SyncResult{};  // not ours to fill
  if (tracker_.stale(key, [this](const std::string& k) { return slices_.get(k); }))
    return SyncResult{std::chrono::milliseconds(100)};

  SlicePlan plan = planEndpointSlices(*svc, pods_.byIndex(kNamespaceIndex, ns), existing, max_per_slice_);
  // Creates first, deletes last, so readers never see a Service lose endpoints mid-sync.
  for (auto& obj : plan.create) {
    auto r = client_.post(path, json::serialize(obj));
    // A namespace being deleted takes no new objects; its Services go with it.
    if (!r && r.error().code == 403 && r.error().message.find("is being terminated") != std::string::npos)
      return SyncResult{};
    if (!r) return r.error();
    tracker_.expectWritten(key, ns + "/" + nameOf(*r),
                           std::string(json::getStringPath(*r, {"metadata", "resourceVersion"})));
  }
  for (auto& obj : plan.update) {
    std::string name = nameOf(obj);
    auto r = client_.put(path + "/" + client::urlEncode(name), json::serialize(obj));
    if (!r) return r.error();  // a conflict retries on a fresher cache
    tracker_.expectWritten(key, ns + "/" + name,
                           std::string(json::getStringPath(*r, {"metadata", "resourceVersion"})));
  }
  for (auto& name : plan.remove) {
    auto r = client_.del(path + "/" + client::urlEncode(name));
    if (!r && r.error().code != 404) return r.error();
    tracker_.expectDeleted(key, ns + "/" + name);
  }
  return SyncResult{};
}

}  // namespace shepherd::controllers
