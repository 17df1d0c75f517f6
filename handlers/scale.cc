// The scale subresource of deployments, replicasets, statefulsets and replicationcontrollers: an
// autoscaling/v1 Scale whose spec.replicas reads and writes the parent's spec.replicas.
#include "apis/kinds/podspec.h"
#include "apis/schema.h"
#include "handlers/negotiation.h"
#include "handlers/patch/patch.h"
#include "handlers/rest_handler.h"
#include "handlers/status.h"
#include "registry/managed_fields.h"

namespace shepherd::handlers {

namespace {

json::Document scaleOf(const apis::Resource& r, const json::Value& parent) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  d.AddMember("kind", "Scale", a);
  d.AddMember("apiVersion", "autoscaling/v1", a);
  json::Value meta(rapidjson::kObjectType);
  for (const char* f : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"})
    if (const json::Value* v = json::findPath(parent, {"metadata", f}))
      meta.AddMember(json::str(f, a), json::Value(*v, a), a);
  d.AddMember("metadata", meta, a);
  json::Value spec(rapidjson::kObjectType);
  spec.AddMember("replicas", json::getInt(*json::find(parent, "spec"), "replicas").value_or(0), a);
  d.AddMember("spec", spec, a);
  json::Value status(rapidjson::kObjectType);
  const json::Value* st = json::find(parent, "status");
  status.AddMember("replicas", st ? json::getInt(*st, "replicas").value_or(0) : 0, a);
  const json::Value* sel = json::findPath(parent, {"spec", "selector"});
  std::string selector =
      r.group.empty() ? apis::kinds::formatLabels(sel) : apis::kinds::formatLabelSelector(sel);
  if (selector == "<none>") selector.clear();
  status.AddMember("selector", json::str(selector, a), a);
  d.AddMember("status", status, a);
  return d;
}

http::Response jsonOk(const json::Value& v, const OutputFormat& f) {
  http::Response r;
  r.headers.emplace_back("Content-Type", contentTypeOf(f));
  r.body = encode(v, f);
  return r;
}

}  // namespace

void RestHandler::scale(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                        const RequestScope& s) {
  auto fmt = negotiateOutput(req, false);
  if (!fmt) return resp->send(errorResponse(fmt.error()));
  const apis::Resource& r = *s.resource;
  if (req.method == "GET" || req.method == "HEAD") {
    auto obj = s.store->get(s.ns, s.name);
    if (!obj) return resp->send(errorResponse(obj.error()));
    json::Document parent;
    parent.Parse(obj.value()->json.data(), obj.value()->json.size());
    return resp->send(jsonOk(scaleOf(r, parent), *fmt));
  }
  if (req.method != "PUT" && req.method != "PATCH")
    return resp->send(errorResponse(ApiError::methodNotSupported(r.group, r.plural + "/scale", req.method)));

  json::Document body;
  if (auto st = decodeBody(req, body); !st) return resp->send(errorResponse(st.error()));
  patch::PatchType ptype = patch::PatchType::Merge;
  if (req.method == "PATCH") {
    auto t = patch::patchTypeOf(mediaType(req.header("content-type")));
    if (!t) return resp->send(errorResponse(t.error()));
    if (t.value() == patch::PatchType::Apply)
      return resp->send(
          errorResponse(ApiError::unsupportedMediaType("apply patches are not supported on /scale")));
    ptype = t.value();
  } else if (!body.IsObject()) {
    return resp->send(errorResponse(ApiError::badRequest("the request body must be a Scale object")));
  }
  const apis::SchemaNode* scaleSchema =
      apis::SchemaRegistry::instance().definition("io.k8s.api.autoscaling.v1.Scale");
  registry::WriteOptions wo;
  wo.dry_run = req.queryValue("dryRun") == "All";
  wo.field_manager = req.queryValue("fieldManager");
  if (wo.field_manager.empty()) wo.field_manager = registry::defaultManager(req.header("user-agent"));
  wo.admission = admissionFor(req, s, wo.dry_run);
  auto mutate = [&](json::Document& parent) -> Status {
    json::Document sc = scaleOf(r, parent);
    std::string currentRv(json::getStringPath(sc, {"metadata", "resourceVersion"}));
    if (req.method == "PUT") {
      std::string rv(json::getStringPath(body, {"metadata", "resourceVersion"}));
      if (!rv.empty() && rv != currentRv)
        return ApiError::conflict(
            r.group, r.plural, s.name,
            "the object has been modified; please apply your changes to the latest version and try again");
      sc.CopyFrom(body, sc.GetAllocator());
    } else if (auto st = patch::applyPatch(ptype, sc, body, scaleSchema); !st) {
      return st;
    }
    const json::Value* replicas = json::findPath(sc, {"spec", "replicas"});
    if (!replicas || !replicas->IsInt64())
      return ApiError::badRequest("Scale.spec.replicas must be an integer");
    if (replicas->GetInt64() < 0)
      return ApiError::invalid(
          "autoscaling", "Scale", s.name,
          {{"FieldValueInvalid",
            "Invalid value: " + std::to_string(replicas->GetInt64()) + ": must be greater than or equal to 0",
            "spec.replicas"}});
    auto& a = parent.GetAllocator();
    json::set(json::ensureObject(parent, "spec", a), "replicas", json::Value(replicas->GetInt64()), a);
    return okStatus();
  };
  auto out = s.store->modify(s.ns, s.name, mutate, wo, registry::Subresource::Main);
  if (!out) return resp->send(errorResponse(out.error()));
  json::Document parent;
  parent.Parse(out->object->json.data(), out->object->json.size());
  resp->send(jsonOk(scaleOf(r, parent), *fmt));
}

}  // namespace shepherd::handlers
