#include "apis/catalog.h"

#include "apis/kinds/kinds.h"
#include "auth/access_review.h"
#include "auth/node_authorizer.h"

namespace shepherd::apis {

namespace {

const std::vector<std::string> kAllVerbs = {"create", "delete", "deletecollection", "get",
                                            "list",   "patch",  "update",           "watch"};

struct Spec {
  std::string group, version, kind, plural, singular;
  std::vector<std::string> short_names;
  bool all_category;
  bool namespaced;
  std::vector<std::string> subresources;
  bool tracks_generation;
  bool return_deleted;
  std::string storage_prefix;
  std::string schema;
  std::shared_ptr<const Strategy> strategy;
};

}  // namespace

Catalog::Catalog() {
  using namespace kinds;
  const std::string core = "io.k8s.api.core.v1.";
  std::vector<std::shared_ptr<Resource>> staged_ephemeral;
  std::vector<std::shared_ptr<Resource>> staged_core;  // create-only core/v1 resources
  // One resource per line reads as a table.
  // clang-format off
  std::vector<Spec> specs = {
      {"", "v1", "Namespace", "namespaces", "namespace", {"ns"}, false, false, {"finalize", "status"}, false, true, "/registry/namespaces/", core + "Namespace", namespaceStrategy()},
      {"", "v1", "Pod", "pods", "pod", {"po"}, true, true, {"attach", "binding", "exec", "log", "portforward", "status"}, true, true, "/registry/pods/", core + "Pod", podStrategy()},
      {"", "v1", "Node", "nodes", "node", {"no"}, false, false, {"status"}, false, false, "/registry/minions/", core + "Node", nodeStrategy()},
      {"", "v1", "Event", "events", "event", {"ev"}, false, true, {}, false, false, "/registry/events/", core + "Event", coreEventStrategy()},
      {"", "v1", "ConfigMap", "configmaps", "configmap", {"cm"}, false, true, {}, false, false, "/registry/configmaps/", core + "ConfigMap", configMapStrategy()},
      {"", "v1", "Secret", "secrets", "secret", {}, false, true, {}, false, false, "/registry/secrets/", core + "Secret", secretStrategy()},
      {"", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", {"sa"}, false, true, {"token"}, false, false, "/registry/serviceaccounts/", core + "ServiceAccount", serviceAccountStrategy()},
      {"", "v1", "PodTemplate", "podtemplates", "podtemplate", {}, false, true, {}, false, false, "/registry/podtemplates/", core + "PodTemplate", podTemplateStrategy()},
      {"", "v1", "Service", "services", "service", {"svc"}, true, true, {"status"}, false, true, "/registry/services/specs/", core + "Service", serviceStrategy()},
      {"", "v1", "Endpoints", "endpoints", "endpoints", {"ep"}, false, true, {}, false, false, "/registry/services/endpoints/", core + "Endpoints", endpointsStrategy()},
      {"", "v1", "ReplicationController", "replicationcontrollers", "replicationcontroller", {"rc"}, true, true, {"scale", "status"}, true, false, "/registry/controllers/", core + "ReplicationController", replicationControllerStrategy()},
      {"apps", "v1", "Deployment", "deployments", "deployment", {"deploy"}, true, true, {"scale", "status"}, true, false, "/registry/deployments/", "io.k8s.api.apps.v1.Deployment", deploymentStrategy()},
      {"apps", "v1", "ReplicaSet", "replicasets", "replicaset", {"rs"}, true, true, {"scale", "status"}, true, false, "/registry/replicasets/", "io.k8s.api.apps.v1.ReplicaSet", replicaSetStrategy()},
      {"coordination.k8s.io", "v1", "Lease", "leases", "lease", {}, false, true, {}, false, false, "/registry/leases/", "io.k8s.api.coordination.v1.Lease", leaseStrategy()},
      {"discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", "endpointslice", {}, false, true, {}, false, false, "/registry/endpointslices/", "io.k8s.api.discovery.v1.EndpointSlice", endpointSliceStrategy()},
      {"rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", "clusterrolebinding", {}, false, false, {}, false, false, "/registry/clusterrolebindings/", "io.k8s.api.rbac.v1.ClusterRoleBinding", clusterRoleBindingStrategy()},
      {"rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", "clusterrole", {}, false, false, {}, false, false, "/registry/clusterroles/", "io.k8s.api.rbac.v1.ClusterRole", clusterRoleStrategy()},
      {"rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", "rolebinding", {}, false, true, {}, false, false, "/registry/rolebindings/", "io.k8s.api.rbac.v1.RoleBinding", roleBindingStrategy()},
      {"rbac.authorization.k8s.io", "v1", "Role", "roles", "role", {}, false, true, {}, false, false, "/registry/roles/", "io.k8s.api.rbac.v1.Role", roleStrategy()},
      {"events.k8s.io", "v1", "Event", "events", "event", {"ev"}, false, true, {}, false, false, "/registry/events/", "io.k8s.api.events.v1.Event", eventsV1EventStrategy()},
  };
  // clang-format on
  // clang-format on
  // authorization.k8s.io/v1: reviews answered at once, never stored.
  {
    auto ssar = std::make_shared<Resource>();
    ssar->group = "authorization.k8s.io";
    ssar->version = "v1";
    ssar->kind = "SelfSubjectAccessReview";
    ssar->plural = "selfsubjectaccessreviews";
    ssar->singular = "selfsubjectaccessreview";
    ssar->namespaced = false;
    ssar->verbs = {"create"};
    ssar->schema_name = "io.k8s.api.authorization.v1.SelfSubjectAccessReview";
    ssar->strategy = std::make_shared<Strategy>();
    ssar->ephemeral_create = [](json::Document& body, const EphemeralContext& ctx) {
      return auth::answerAccessReview(body, ctx.user, ctx.authorizer, true);
    };
    staged_ephemeral.push_back(ssar);
    auto sar = std::make_shared<Resource>(*ssar);
    sar->kind = "SubjectAccessReview";
    sar->plural = "subjectaccessreviews";
    sar->singular = "subjectaccessreview";
    sar->schema_name = "io.k8s.api.authorization.v1.SubjectAccessReview";
    sar->ephemeral_create = [](json::Document& body, const EphemeralContext& ctx) {
      return auth::answerAccessReview(body, ctx.user, ctx.authorizer, false);
    };
    staged_ephemeral.push_back(sar);
    auto ssrr = std::make_shared<Resource>(*ssar);
    ssrr->kind = "SelfSubjectRulesReview";
    ssrr->plural = "selfsubjectrulesreviews";
    ssrr->singular = "selfsubjectrulesreview";
    ssrr->schema_name = "io.k8s.api.authorization.v1.SelfSubjectRulesReview";
    ssrr->ephemeral_create = [](json::Document& body, const EphemeralContext& ctx) {
      // Rules of authorizers other than RBAC (the Node authorizer) are not listed.
      bool others = auth::nodeNameOf(ctx.user) != "";
      return auth::answerRulesReview(body, ctx.user, ctx.rbac_policy, others);
    };
    staged_ephemeral.push_back(ssrr);
  }
  // authentication.k8s.io/v1 SelfSubjectReview: the requester as authenticated (whoami).
  {
    auto ssr = std::make_shared<Resource>();
    ssr->group = "authentication.k8s.io";
    ssr->version = "v1";
    ssr->kind = "SelfSubjectReview";
    ssr->plural = "selfsubjectreviews";
    ssr->singular = "selfsubjectreview";
    ssr->namespaced = false;
    ssr->verbs = {"create"};
    ssr->schema_name = "io.k8s.api.authentication.v1.SelfSubjectReview";
    ssr->strategy = std::make_shared<Strategy>();
    ssr->ephemeral_create = [](json::Document& body, const EphemeralContext& ctx) -> Result<std::string> {
      const auth::UserInfo& user = ctx.user;
      auto& a = body.GetAllocator();
      json::setString(body, "apiVersion", "authentication.k8s.io/v1", a);
      json::setString(body, "kind", "SelfSubjectReview", a);
      json::Value info(rapidjson::kObjectType);
      json::setString(info, "username", user.name, a);
      if (!user.uid.empty()) json::setString(info, "uid", user.uid, a);
      json::Value groups(rapidjson::kArrayType);
      for (auto& g : user.groups) groups.PushBack(json::str(g, a), a);
      if (!groups.Empty()) json::set(info, "groups", std::move(groups), a);
      if (!user.extra.empty()) {
        json::Value extra(rapidjson::kObjectType);
        for (auto& [k, vs] : user.extra) {
          json::Value list(rapidjson::kArrayType);
          for (auto& v : vs) list.PushBack(json::str(v, a), a);
          json::set(extra, k, std::move(list), a);
        }
        json::set(info, "extra", std::move(extra), a);
      }
      json::Value status(rapidjson::kObjectType);
      json::set(status, "userInfo", std::move(info), a);
      json::set(body, "status", std::move(status), a);
      return json::serialize(body);
    };
    staged_ephemeral.push_back(ssr);
  }
  // core/v1 bindings: the legacy way to bind a pod (POST .../namespaces/{ns}/bindings);
  // the REST layer routes it to pods/binding.
  {
    auto b = std::make_shared<Resource>();
    b->version = "v1";
    b->kind = "Binding";
    b->plural = "bindings";
    b->singular = "binding";
    b->namespaced = true;
    b->verbs = {"create"};
    b->schema_name = "io.k8s.api.core.v1.Binding";
    b->strategy = std::make_shared<Strategy>();
    b->ephemeral_create = [](json::Document&, const EphemeralContext&) -> Result<std::string> {
      return ApiError::internal("bindings are handled by pods/binding");
    };
    staged_core.push_back(b);
  }
  for (auto& s : specs) {
    auto r = std::make_shared<Resource>();
    r->group = s.group;
    r->version = s.version;
    r->kind = s.kind;
    r->plural = s.plural;
    r->singular = s.singular;
    r->short_names = s.short_names;
    if (s.all_category) r->categories = {"all"};
    r->namespaced = s.namespaced;
    r->verbs = kAllVerbs;
    r->subresources = s.subresources;
    r->tracks_generation = s.tracks_generation;
    r->return_deleted_object = s.return_deleted;
    r->storage_prefix = s.storage_prefix;
    r->schema_name = s.schema;
    r->strategy = s.strategy;
    resources_.push_back(r);
    bool seen = false;
    for (auto& gv : group_versions_)
      if (gv.group == s.group && gv.version == s.version) seen = true;
    if (!seen) group_versions_.push_back({s.group, s.version});
  }
  // core/v1 create-only resources go right after the other core ones.
  for (auto& r : staged_core) {
    auto pos = resources_.begin();
    while (pos != resources_.end() && (*pos)->group.empty()) ++pos;
    resources_.insert(pos, r);
  }
  for (auto& r : staged_ephemeral) {
    resources_.push_back(r);
    group_versions_.push_back({r->group, r->version});
  }
}

const Catalog& Catalog::instance() {
  static const Catalog c;
  return c;
}

std::vector<std::shared_ptr<const Resource>> Catalog::resourcesOf(const std::string& group,
                                                                  const std::string& version) const {
  std::vector<std::shared_ptr<const Resource>> out;
  for (auto& r : resources_)
    if (r->group == group && r->version == version) out.push_back(r);
  return out;
}

std::shared_ptr<const Resource> Catalog::find(const std::string& group, const std::string& version,
                                              const std::string& plural) const {
  for (auto& r : resources_)
    if (r->group == group && r->version == version && r->plural == plural) return r;
  return nullptr;
}

}  // namespace shepherd::apis
