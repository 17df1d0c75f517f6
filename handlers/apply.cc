// Server-side apply: PATCH with Content-Type application/apply-patch+yaml.
#include "apis/schema.h"
#include "handlers/negotiation.h"
#include "handlers/rest_handler.h"
#include "handlers/status.h"

namespace shepherd::handlers {

void RestHandler::apply(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                        const RequestScope& s) {
  const apis::Resource& r = *s.resource;
  if (!s.subresource.empty())
    return resp->send(errorResponse(
        ApiError::unsupportedMediaType("apply patches are only supported on the main resource")));
  std::string manager(req.queryValue("fieldManager"));
  if (manager.empty())
    return resp->send(errorResponse(ApiError::invalid(
        "meta.k8s.io", "PatchOptions", "",
        {{"FieldValueRequired", "Required value: is required for apply patch", "fieldManager"}})));
  json::Document config;
  if (auto st = decodeBody(req, config); !st) return resp->send(errorResponse(st.error()));
  if (!config.IsObject())
    return resp->send(errorResponse(ApiError::badRequest("the applied configuration must be an object")));

  // Unknown fields: Strict is the default for apply, as upstream.
  std::string_view fv = req.queryValue("fieldValidation");
  const auto& schemas = apis::SchemaRegistry::instance();
  std::vector<std::string> warnings;
  if (const apis::SchemaNode* root = schemas.definition(r.schema_name)) {
    std::vector<apis::SchemaFinding> findings;
    schemas.check(config, root, findings);
    std::string prefix = "error decoding patch: ";
    std::string strict;
    for (const auto& f : findings) {
      if (f.kind == apis::SchemaFinding::Kind::TypeMismatch)
        return resp->send(errorResponse(ApiError::badRequest(f.message)));
      if (fv == "Warn")
        warnings.push_back(f.message);
      else if (fv != "Ignore")
        strict += (strict.empty() ? "" : ", ") + f.message;
    }
    if (!strict.empty())
      return resp->send(errorResponse(ApiError::badRequest(".: field not declared in schema: " + strict)));
    if (!findings.empty()) schemas.prune(config, root);
  }
  registry::WriteOptions o;
  o.dry_run = req.queryValue("dryRun") == "All";
  o.field_manager = manager;
  o.force = req.queryBool("force");
  o.admission = admissionFor(req, s, o.dry_run);
  auto out = s.store->apply(s.ns, s.name, config, o);
  if (!out) return resp->send(errorResponse(out.error()));
  auto fmt = negotiateOutput(req, false);
  if (!fmt) return resp->send(errorResponse(fmt.error()));
  http::Response rsp;
  rsp.status = out->created ? 201 : 200;
  rsp.headers.emplace_back("Content-Type", contentTypeOf(*fmt));
  for (const auto& w : warnings) rsp.headers.emplace_back("Warning", "299 - \"" + w + "\"");
  if (fmt->kind == OutputFormat::Kind::Json && !fmt->pretty) {
    rsp.body = out->object->json;
  } else {
    json::Document d;
    d.Parse(out->object->json.data(), out->object->json.size());
    rsp.body = encode(d, *fmt);
  }
  resp->send(std::move(rsp));
}

}  // namespace shepherd::handlers
