// The objects every cluster starts with: system namespaces, default/kubernetes and the
// system priority classes.
#include "apis/kinds/kinds.h"
#include "auth/bootstrap_policy.h"
#include "common/log.h"
#include "registry/registry.h"

namespace shepherd::registry {

namespace {

Status ensureCreated(Store* store, const std::string& ns, const std::string& body) {
  json::Document d;
  d.Parse(body.data(), body.size());
  if (store->get(ns, std::string(json::getStringPath(d, {"metadata", "name"}))).ok()) return okStatus();
  auto r = store->create(ns, d, WriteOptions{});
  if (!r && r.error().reason != "AlreadyExists") return r.error();
  return okStatus();
}

}  // namespace

// The default RBAC roles and bindings: created when missing; ones still annotated
// autoupdate=true get back any default rule or subject they lost, as upstream reconciles.
Status Registry::bootstrapPolicy() {
  static const std::map<std::string, std::string> plurals = {{"ClusterRole", "clusterroles"},
                                                             {"ClusterRoleBinding", "clusterrolebindings"},
                                                             {"Role", "roles"},
                                                             {"RoleBinding", "rolebindings"}};
  for (const auth::BootstrapObject& o : auth::bootstrapPolicy()) {
    Store* s = store("rbac.authorization.k8s.io", "v1", plurals.at(o.kind));
    if (!s) continue;
    json::Document want;
    want.Parse(o.json.data(), o.json.size());
    std::string name(json::getStringPath(want, {"metadata", "name"}));
    auto existing = s->get(o.namespace_, name);
    if (!existing.ok()) {
      if (auto st = ensureCreated(s, o.namespace_, o.json); !st) return st;
      continue;
    }
    json::Document have;
    have.Parse((*existing)->json.data(), (*existing)->json.size());
    if (json::getStringPath(
            have, {"metadata", "annotations", "rbac.authorization.kubernetes.io/autoupdate"}) != "true")
      continue;
    bool changed = false;
    for (const char* field : {"rules", "subjects"}) {
      const json::Value* wanted = json::find(want, field);
      if (!wanted || !wanted->IsArray()) continue;
      json::Value* list = json::find(have, field);
      if (!list || !list->IsArray()) {
        json::set(have, field, json::Value(rapidjson::kArrayType), have.GetAllocator());
        list = json::find(have, field);
      }
      for (auto& w : wanted->GetArray()) {
        bool present = false;
        for (auto& h : list->GetArray()) present = present || h == w;
        if (!present) {
          list->PushBack(json::Value(w, have.GetAllocator()), have.GetAllocator());
          changed = true;
        }
      }
    }
    if (!changed) continue;
    auto r = s->update(o.namespace_, name, have, WriteOptions{}, Subresource::Main);
    if (!r && r.error().code != 409) return r.error();
  }
  return okStatus();
}

Status Registry::bootstrap(int port) {
  Store* namespaces = store("", "v1", "namespaces");
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    std::string body =
        std::string(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")") + ns + "\"}}";
    if (auto st = ensureCreated(namespaces, "", body); !st) return st;
  }
  std::string ip = allocator_->firstAddress();
  std::string svc =
      R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"kubernetes","namespace":"default",)"
      R"("labels":{"component":"apiserver","provider":"kubernetes"}},)"
      R"("spec":{"type":"ClusterIP","clusterIP":")" +
      ip + R"(","ports":[{"name":"https","port":443,"protocol":"TCP","targetPort":)" + std::to_string(port) +
      R"(}],"sessionAffinity":"None"}})";
  if (auto st = ensureCreated(store("", "v1", "services"), "default", svc); !st) return st;

  if (Store* classes = store("scheduling.k8s.io", "v1", "priorityclasses"))
    for (const auto& pc : apis::kinds::systemPriorityClasses()) {
      json::Document d;
      d.SetObject();
      auto& a = d.GetAllocator();
      d.AddMember("apiVersion", "scheduling.k8s.io/v1", a);
      d.AddMember("kind", "PriorityClass", a);
      json::Value m(rapidjson::kObjectType);
      m.AddMember("name", json::str(pc.name, a), a);
      d.AddMember("metadata", m, a);
      d.AddMember("value", json::Value(pc.value), a);
      d.AddMember("description", json::str(pc.description, a), a);
      if (auto st = ensureCreated(classes, "", json::serialize(d)); !st) return st;
    }
  if (auto st = bootstrapPolicy(); !st) return st;
  LOG_INFO("bootstrap: namespaces, the default/kubernetes Service ("
           << ip << ") and the system priority classes in place");
  return okStatus();
}

}  // namespace shepherd::registry
