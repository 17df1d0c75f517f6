// pods/binding (POST .../pods/{name}/binding) and the legacy POST .../bindings: the only
// way a scheduler assigns a pod to a node. The store does an atomic compare-and-set on an
// empty spec.nodeName, so two schedulers can never bind one pod twice.
#include "apis/catalog.h"
#include "apis/kinds/pod_binding.h"
#include "apis/schema.h"
#include "common/clock.h"
#include "handlers/negotiation.h"
#include "handlers/rest_handler.h"
#include "handlers/status.h"
#include "registry/managed_fields.h"

namespace shepherd::handlers {

void RestHandler::bind(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                       const RequestScope& s) {
  json::Document binding;
  if (auto st = decodeBody(req, binding); !st) return resp->send(errorResponse(st.error()));
  if (!binding.IsObject())
    return resp->send(errorResponse(ApiError::badRequest("the request body must be a Binding")));
  std::string_view kind = json::getString(binding, "kind");
  if (!kind.empty() && kind != "Binding")
    return resp->send(errorResponse(ApiError::badRequest("the kind in the data (" + std::string(kind) +
                                                         ") does not match the expected kind (Binding)")));
  const auto& schemas = apis::SchemaRegistry::instance();
  if (const apis::SchemaNode* root = schemas.definition("io.k8s.api.core.v1.Binding")) {
    std::vector<apis::SchemaFinding> findings;
    schemas.check(binding, root, findings);
    for (const auto& f : findings)
      if (f.kind == apis::SchemaFinding::Kind::TypeMismatch || req.queryValue("fieldValidation") == "Strict")
        return resp->send(errorResponse(
            ApiError::badRequest("Binding in version \"v1\" cannot be handled as a Binding: " + f.message)));
  }
  // The pod is named by the URL (pods/{name}/binding) or by the Binding (legacy).
  std::string name = s.name;
  std::string_view bodyName = json::getStringPath(binding, {"metadata", "name"});
  if (name.empty())
    name = bodyName;
  else if (!bodyName.empty() && bodyName != name)
    return resp->send(
        errorResponse(ApiError::badRequest("the name of the object (" + std::string(bodyName) +
                                           ") does not match the name on the URL (" + name + ")")));
  if (name.empty())
    return resp->send(errorResponse(ApiError::invalid(
        "", "Binding", "",
        {{"FieldValueRequired", "Required value: name or generateName is required", "metadata.name"}})));
  std::string_view bodyNs = json::getStringPath(binding, {"metadata", "namespace"});
  if (!bodyNs.empty() && bodyNs != s.ns)
    return resp->send(errorResponse(ApiError::badRequest(
        "the namespace of the provided object does not match the namespace sent on the request")));
  registry::Store* pods = registry_.store("", "v1", "pods");
  if (!pods) return resp->send(errorResponse(ApiError::internal("no pod store")));
  registry::WriteOptions wo;
  wo.dry_run = req.queryValue("dryRun") == "All";
  wo.field_manager = req.queryValue("fieldManager");
  if (wo.field_manager.empty()) wo.field_manager = registry::defaultManager(req.header("user-agent"));
  RequestScope podScope = s;
  podScope.resource = apis::Catalog::instance().find("", "v1", "pods");
  podScope.subresource = "binding";
  podScope.name = name;
  wo.admission = admissionFor(req, podScope, wo.dry_run);
  if (auto st = apis::kinds::validateBinding(binding, name); !st)
    return resp->send(errorResponse(st.error()));
  std::string now = clock::rfc3339(clock::now());
  auto out = pods->modify(
      s.ns, name, [&](json::Document& pod) { return apis::kinds::assignPod(pod, binding, name, now); }, wo,
      registry::Subresource::Binding);
  if (!out) return resp->send(errorResponse(out.error()));
  http::Response r;
  r.status = 201;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})";
  resp->send(std::move(r));
}

}  // namespace shepherd::handlers
