#include "controllers/serviceaccount/namespace_objects.h"

#include "common/json.h"

namespace shepherd::controllers {

bool namespaceActive(const client::Informer& namespaces, const std::string& ns) {
  client::Object obj = namespaces.get(ns);
  return obj && !json::findPath(*obj, {"metadata", "deletionTimestamp"}) &&
         json::getStringPath(*obj, {"status", "phase"}) != "Terminating";
}

void queueNamespaceOf(client::Informer& namespaces, client::Informer& objects, client::WorkQueue& queue) {
  client::EventHandlers nh;
  nh.on_add = [&queue](const client::Object& o) {
    queue.add(std::string(json::getStringPath(*o, {"metadata", "name"})));
  };
  nh.on_update = [&queue](const client::Object&, const client::Object& o) {
    queue.add(std::string(json::getStringPath(*o, {"metadata", "name"})));
  };
  namespaces.addHandlers(std::move(nh));
  client::EventHandlers oh;
  auto byNamespace = [&queue](const client::Object& o) {
    queue.add(std::string(json::getStringPath(*o, {"metadata", "namespace"})));
  };
  oh.on_update = [byNamespace](const client::Object&, const client::Object& o) { byNamespace(o); };
  oh.on_delete = byNamespace;
  objects.addHandlers(std::move(oh));
}

}  // namespace shepherd::controllers
