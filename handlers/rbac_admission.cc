// RBAC writes go through upstream's escalation checks (auth/rbac_escalation): the hook runs
// in the store on the final object, so creates, updates, patches and applies are all
// covered. An update that changes nothing but garbage-collection metadata is let through,
// as upstream.
#include "auth/rbac_escalation.h"
#include "handlers/request_user.h"
#include "handlers/rest_handler.h"

namespace shepherd::handlers {

namespace {

// The object without the metadata the garbage collector (and the store) may change.
json::Document withoutGcFields(const json::Value& obj) {
  json::Document d;
  d.CopyFrom(obj, d.GetAllocator());
  if (json::Value* m = json::find(d, "metadata"))
    for (const char* f :
         {"ownerReferences", "finalizers", "managedFields", "resourceVersion", "generation", "selfLink"})
      json::remove(*m, f);
  return d;
}

}  // namespace

void RestHandler::admitWrite(registry::WriteOptions& opts, const http::Request& req,
                             const RequestScope& s) const {
  if (!rbac_policy_ || !authorizer_ || s.resource->group != "rbac.authorization.k8s.io" ||
      !s.subresource.empty())
    return;
  meta::UserInfo user = requestUser(req);
  std::string kind = s.resource->kind;
  std::string ns = s.ns;
  const auth::Authorizer* authorizer = authorizer_;
  std::shared_ptr<const auth::PolicySource> source = rbac_policy_;
  opts.admit = [user, kind, ns, authorizer, source](const json::Value& obj,
                                                    const json::Value* old) -> Status {
    if (old && withoutGcFields(obj) == withoutGcFields(*old)) return okStatus();
    auto policy = source->current();
    if (!policy) return ApiError::internal("RBAC: the policy is not loaded yet");
    auth::RbacWrite w;
    w.kind = kind;
    w.namespace_ = ns;
    w.name = json::getStringPath(obj, {"metadata", "name"});
    if (kind == "Role" || kind == "ClusterRole") {
      w.rules = auth::parseRules(json::find(obj, "rules"));
      auto aggregates = [](const json::Value* o) {
        const json::Value* a = o ? json::find(*o, "aggregationRule") : nullptr;
        return a && a->IsObject() && a->MemberCount() > 0;
      };
      w.aggregation = kind == "ClusterRole" && (aggregates(&obj) || aggregates(old));
    } else {
      w.role_kind = json::getStringPath(obj, {"roleRef", "kind"});
      w.role_name = json::getStringPath(obj, {"roleRef", "name"});
    }
    return auth::confirmNoEscalation(w, user, *authorizer, *policy);
  };
}

}  // namespace shepherd::handlers
