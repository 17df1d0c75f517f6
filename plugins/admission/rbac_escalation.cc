#include "plugins/admission/rbac_escalation.h"

#include "auth/rbac_escalation.h"

namespace shepherd::plugins::admission {

using shepherd::admission::Operation;

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

Status RbacEscalation::validate(const shepherd::admission::Attributes& a, const json::Value& obj,
                                const json::Value* old) const {
  if (a.operation == Operation::Delete || a.resource->group != "rbac.authorization.k8s.io" ||
      !a.subresource.empty())
    return okStatus();
  if (old && withoutGcFields(obj) == withoutGcFields(*old)) return okStatus();
  auto policy = policy_->current();
  if (!policy) return ApiError::internal("RBAC: the policy is not loaded yet");
  const std::string& kind = a.resource->kind;
  auth::RbacWrite w;
  w.kind = kind;
  w.namespace_ = a.ns;
  w.name = json::getStringPath(obj, {"metadata", "name"});
  if (kind == "Role" || kind == "ClusterRole") {
    w.rules = auth::parseRules(json::find(obj, "rules"));
    auto aggregates = [](const json::Value* o) {
      const json::Value* agg = o ? json::find(*o, "aggregationRule") : nullptr;
      return agg && agg->IsObject() && agg->MemberCount() > 0;
    };
    w.aggregation = kind == "ClusterRole" && (aggregates(&obj) || aggregates(old));
  } else {
    w.role_kind = json::getStringPath(obj, {"roleRef", "kind"});
    w.role_name = json::getStringPath(obj, {"roleRef", "name"});
  }
  return auth::confirmNoEscalation(w, a.user, authorizer_, *policy);
}

}  // namespace shepherd::plugins::admission
