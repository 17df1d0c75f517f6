#include "controllers/serviceaccount/serviceaccounts_controller.h"

#include "controllers/serviceaccount/namespace_objects.h"

namespace shepherd::controllers {

namespace {
client::InformerOptions accountsOptions() {
  client::InformerOptions o;
  o.plural = "serviceaccounts";
  o.field_selector = "metadata.name=default";
  return o;
}
}  // namespace

ServiceAccountsController::ServiceAccountsController(client::Client& c, client::SharedInformers& informers)
    : Controller("serviceaccount"),
      client_(c),
      namespaces_(informers.get(client::allObjects("", "v1", "namespaces"))),
      accounts_(informers.get(accountsOptions())) {
  queueNamespaceOf(namespaces_, accounts_, queue_);
}

Result<SyncResult> ServiceAccountsController::sync(const std::string& ns) {
  if (!namespaceActive(namespaces_, ns)) return SyncResult{};
  if (accounts_.get(ns + "/default")) return SyncResult{};
  std::string body = R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}})";
  auto r = client_.post("/api/v1/namespaces/" + client::urlEncode(ns) + "/serviceaccounts", body);
  // AlreadyExists: the cache was behind. Forbidden/NotFound: the namespace is going away.
  if (!r && r.error().code != 409 && r.error().code != 403 && r.error().code != 404) return r.error();
  return SyncResult{};
}

}  // namespace shepherd::controllers
