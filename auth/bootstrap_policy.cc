#include "auth/bootstrap_policy.h"

#include <initializer_list>

namespace shepherd::auth {

namespace {

using Strings = std::vector<std::string>;

const Strings kRead = {"get", "list", "watch"};
const Strings kWrite = {"create", "update", "patch", "delete", "deletecollection"};
const Strings kReadWrite = {"get",    "list",  "watch",  "create",
                            "update", "patch", "delete", "deletecollection"};

PolicyRule res(Strings verbs, Strings groups, Strings resources, Strings names = {}) {
  return PolicyRule{std::move(verbs), std::move(groups), std::move(resources), std::move(names), {}};
}
PolicyRule urls(Strings verbs, Strings u) {
  return PolicyRule{std::move(verbs), {}, {}, {}, std::move(u)};
}
PolicyRule eventsRule() {
  return res({"create", "patch", "update"}, {"", "events.k8s.io"}, {"events"});
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string list(const Strings& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + quoted(v[i]);
  return out + "]";
}

std::string ruleJson(const PolicyRule& r) {
  std::string out = "{\"verbs\":" + list(r.verbs);
  if (!r.non_resource_urls.empty()) return out + ",\"nonResourceURLs\":" + list(r.non_resource_urls) + "}";
  out += ",\"apiGroups\":" + list(r.api_groups) + ",\"resources\":" + list(r.resources);
  if (!r.resource_names.empty()) out += ",\"resourceNames\":" + list(r.resource_names);
  return out + "}";
}

std::string metadata(const std::string& name, const std::string& ns) {
  return "\"metadata\":{\"name\":" + quoted(name) + (ns.empty() ? "" : ",\"namespace\":" + quoted(ns)) +
         ",\"labels\":{\"kubernetes.io/bootstrapping\":\"rbac-defaults\"},"
         "\"annotations\":{\"rbac.authorization.kubernetes.io/autoupdate\":\"true\"}}";
}

BootstrapObject role(const std::string& kind, const std::string& name, const std::string& ns,
                     const std::vector<PolicyRule>& rules) {
  std::string rs = "[";
  for (size_t i = 0; i < rules.size(); ++i) rs += (i ? "," : "") + ruleJson(rules[i]);
  rs += "]";
  return {kind, ns,
          "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"" + kind + "\"," + metadata(name, ns) +
              ",\"rules\":" + rs + "}"};
}

// Subjects as "User:name", "Group:name" or "ServiceAccount:ns/name".
BootstrapObject binding(const std::string& kind, const std::string& name, const std::string& ns,
                        const std::string& role_kind, const std::string& role_name, const Strings& subjects) {
  std::string ss = "[";
  for (size_t i = 0; i < subjects.size(); ++i) {
    const std::string& s = subjects[i];
    size_t colon = s.find(':');
    std::string skind = s.substr(0, colon), rest = s.substr(colon + 1);
    ss += i ? "," : "";
    if (skind == "ServiceAccount") {
      size_t slash = rest.find('/');
      ss += "{\"kind\":\"ServiceAccount\",\"name\":" + quoted(rest.substr(slash + 1)) +
            ",\"namespace\":" + quoted(rest.substr(0, slash)) + "}";
    } else {
      ss += "{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"" + skind +
            "\",\"name\":" + quoted(rest) + "}";
    }
  }
  ss += "]";
  return {kind, ns,
          "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"" + kind + "\"," + metadata(name, ns) +
              ",\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"" + role_kind +
              "\",\"name\":" + quoted(role_name) + "},\"subjects\":" + ss + "}"};
}

std::vector<PolicyRule> viewRules() {
  return {
      res(kRead, {""},
          {"configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
           "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
           "services/status"}),
      res(kRead, {""},
          {"bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
           "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"}),
      res(kRead, {""}, {"namespaces"}),
      res(kRead, {"discovery.k8s.io"}, {"endpointslices"}),
      res(kRead, {"apps"},
          {"controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
           "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets",
           "statefulsets/scale", "statefulsets/status"}),
      res(kRead, {"autoscaling"}, {"horizontalpodautoscalers", "horizontalpodautoscalers/status"}),
      res(kRead, {"batch"}, {"cronjobs", "cronjobs/status", "jobs", "jobs/status"}),
      res(kRead, {"policy"}, {"poddisruptionbudgets", "poddisruptionbudgets/status"}),
      res(kRead, {"networking.k8s.io"}, {"ingresses", "ingresses/status", "networkpolicies"}),
  };
}

std::vector<PolicyRule> editOnlyRules() {
  return {
      res(kRead, {""},
          {"pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"}),
      res({"impersonate"}, {""}, {"serviceaccounts"}),
      res(kWrite, {""}, {"pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"}),
      res({"create"}, {""}, {"pods/eviction"}),
      res(kWrite, {""},
          {"configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
           "replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"}),
      res({"create"}, {""}, {"serviceaccounts/token"}),
      res(kWrite, {"apps"},
          {"daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets",
           "replicasets/scale", "statefulsets", "statefulsets/scale"}),
      res(kWrite, {"autoscaling"}, {"horizontalpodautoscalers"}),
      res(kWrite, {"batch"}, {"cronjobs", "jobs"}),
      res(kWrite, {"policy"}, {"poddisruptionbudgets"}),
      res(kWrite, {"networking.k8s.io"}, {"ingresses", "networkpolicies"}),
      res(kReadWrite, {"coordination.k8s.io"}, {"leases"}),
  };
}

std::vector<PolicyRule> concat(std::initializer_list<std::vector<PolicyRule>> parts) {
  std::vector<PolicyRule> out;
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Controller roles: system:controller:<name>.
std::vector<std::pair<std::string, std::vector<PolicyRule>>> controllerRoles() {
  return {
      {"deployment-controller",
       {res({"get", "list", "update", "watch"}, {"apps", "extensions"}, {"deployments"}),
        res({"update"}, {"apps", "extensions"}, {"deployments/status"}),
        res({"update"}, {"apps", "extensions"}, {"deployments/finalizers"}),
        res({"create", "delete", "get", "list", "patch", "update", "watch"}, {"apps", "extensions"},
            {"replicasets"}),
        res({"get", "list", "update", "watch"}, {""}, {"pods"}), eventsRule()}},
      {"replicaset-controller",
       {res({"get", "list", "update", "watch"}, {"apps", "extensions"}, {"replicasets"}),
        res({"update"}, {"apps", "extensions"}, {"replicasets/status"}),
        res({"update"}, {"apps", "extensions"}, {"replicasets/finalizers"}),
        res({"create", "delete", "list", "patch", "watch"}, {""}, {"pods"}), eventsRule()}},
      {"replication-controller",
       {res({"get", "list", "update", "watch"}, {""}, {"replicationcontrollers"}),
        res({"update"}, {""}, {"replicationcontrollers/status"}),
        res({"update"}, {""}, {"replicationcontrollers/finalizers"}),
        res({"create", "delete", "list", "patch", "watch"}, {""}, {"pods"}), eventsRule()}},
      {"job-controller",
       {res({"get", "list", "patch", "update", "watch"}, {"batch"}, {"jobs"}),
        res({"update"}, {"batch"}, {"jobs/status"}), res({"update"}, {"batch"}, {"jobs/finalizers"}),
        res({"create", "delete", "list", "patch", "watch"}, {""}, {"pods"}), eventsRule()}},
      {"cronjob-controller",
       {res({"get", "list", "update", "watch"}, {"batch"}, {"cronjobs"}),
        res({"create", "delete", "get", "list", "patch", "update", "watch"}, {"batch"}, {"jobs"}),
        res({"update"}, {"batch"}, {"cronjobs/status"}), res({"update"}, {"batch"}, {"cronjobs/finalizers"}),
        res({"delete", "list"}, {""}, {"pods"}), eventsRule()}},
      {"ttl-after-finished-controller",
       {res({"delete", "get", "list", "watch"}, {"batch"}, {"jobs"}), eventsRule()}},
      {"daemon-set-controller",
       {res({"get", "list", "watch"}, {"apps", "extensions"}, {"daemonsets"}),
        res({"update"}, {"apps", "extensions"}, {"daemonsets/status"}),
        res({"update"}, {"apps", "extensions"}, {"daemonsets/finalizers"}), res(kRead, {""}, {"nodes"}),
        res({"create", "delete", "list", "patch", "watch"}, {""}, {"pods"}),
        res({"create"}, {""}, {"pods/binding"}),
        res({"create", "delete", "list", "patch", "update", "watch"}, {"apps"}, {"controllerrevisions"}),
        eventsRule()}},
      {"disruption-controller",
       {res({"get", "list", "watch"}, {"apps", "extensions"}, {"deployments"}),
        res({"get", "list", "watch"}, {"apps", "extensions"}, {"replicasets"}),
        res({"get", "list", "watch"}, {""}, {"replicationcontrollers"}),
        res({"get", "list", "watch"}, {"policy"}, {"poddisruptionbudgets"}),
        res({"get", "list", "watch"}, {"apps"}, {"statefulsets"}),
        res({"update"}, {"policy"}, {"poddisruptionbudgets/status"}), res({"get"}, {"*"}, {"*/scale"}),
        res({"patch", "update"}, {""}, {"pods/status"}), eventsRule()}},
      {"statefulset-controller",
       {res({"create", "delete", "get", "list", "patch", "update", "watch"}, {""}, {"pods"}),
        res({"get", "list", "watch"}, {"apps"}, {"statefulsets"}),
        res({"update"}, {"apps"}, {"statefulsets/status"}),
        res({"update"}, {"apps"}, {"statefulsets/finalizers"}),
        res({"create", "delete", "get", "list", "patch", "update", "watch"}, {"apps"},
            {"controllerrevisions"}),
        res({"create", "delete", "get", "update"}, {""}, {"persistentvolumeclaims"}), eventsRule()}},
      {"persistent-volume-binder",
       {res({"create", "delete", "get", "list", "update", "watch"}, {""}, {"persistentvolumes"}),
        res({"update"}, {""}, {"persistentvolumes/status"}),
        res({"get", "list", "update", "watch"}, {""}, {"persistentvolumeclaims"}),
        res({"update"}, {""}, {"persistentvolumeclaims/status"}),
        res({"create", "delete", "get", "list", "watch"}, {""}, {"pods"}),
        res({"get", "list", "watch"}, {"storage.k8s.io"}, {"storageclasses"}),
        res({"get", "list"}, {""}, {"nodes"}), eventsRule()}},
      {"pvc-protection-controller",
       {res({"get", "list", "update", "watch"}, {""}, {"persistentvolumeclaims"}),
        res({"get", "list", "watch"}, {""}, {"pods"}), eventsRule()}},
      {"pv-protection-controller",
       {res({"get", "list", "update", "watch"}, {""}, {"persistentvolumes"}), eventsRule()}},
      {"ephemeral-volume-controller",
       {res({"get", "list", "watch"}, {""}, {"pods"}), res({"update"}, {""}, {"pods/finalizers"}),
        res({"create", "get", "list", "watch"}, {""}, {"persistentvolumeclaims"}), eventsRule()}},
      {"resourcequota-controller",
       {res({"list", "watch"}, {"*"}, {"*"}), res({"update"}, {""}, {"resourcequotas/status"}),
        eventsRule()}},
      {"endpoint-controller",
       {res(kRead, {""}, {"pods", "services"}),
        res({"create", "delete", "get", "list", "update", "watch"}, {""}, {"endpoints"}),
        res({"create"}, {""}, {"endpoints/restricted"}), eventsRule()}},
      {"endpointslice-controller",
       {res(kRead, {""}, {"nodes", "pods", "services"}), res({"update"}, {""}, {"services/finalizers"}),
        res({"create", "delete", "get", "list", "update", "watch"}, {"discovery.k8s.io"}, {"endpointslices"}),
        eventsRule()}},
      {"namespace-controller",
       {res({"delete", "get", "list", "watch"}, {""}, {"namespaces"}),
        res({"update"}, {""}, {"namespaces/finalize", "namespaces/status"}),
        res({"delete", "deletecollection", "get", "list", "watch"}, {"*"}, {"*"})}},
      {"generic-garbage-collector",
       {res({"delete", "get", "list", "patch", "update", "watch"}, {"*"}, {"*"}), eventsRule()}},
      {"node-controller",
       {res({"delete", "get", "list", "patch", "update", "watch"}, {""}, {"nodes"}),
        res({"patch", "update"}, {""}, {"nodes/status"}), res({"patch", "update"}, {""}, {"pods/status"}),
        res({"delete", "get", "list", "watch"}, {""}, {"pods"}), eventsRule()}},
      {"pod-garbage-collector",
       {res({"delete", "list", "watch"}, {""}, {"pods"}), res({"get", "list"}, {""}, {"nodes"}),
        res({"patch"}, {""}, {"pods/status"})}},
      {"service-account-controller", {res({"create"}, {""}, {"serviceaccounts"}), eventsRule()}},
      {"root-ca-cert-publisher", {res({"create", "update"}, {""}, {"configmaps"}), eventsRule()}},
  };
}

std::vector<PolicyRule> schedulerRules() {
  return {
      eventsRule(),
      res({"create"}, {"coordination.k8s.io"}, {"leases"}),
      res({"get", "update"}, {"coordination.k8s.io"}, {"leases"}, {"kube-scheduler"}),
      res(kRead, {""}, {"nodes"}),
      res({"delete", "get", "list", "watch"}, {""}, {"pods"}),
      res({"create"}, {""}, {"bindings", "pods/binding"}),
      res({"patch", "update"}, {""}, {"pods/status"}),
      res(kRead, {""}, {"replicationcontrollers", "services"}),
      res(kRead, {"apps", "extensions"}, {"replicasets"}),
      res(kRead, {"apps"}, {"statefulsets"}),
      res(kRead, {"policy"}, {"poddisruptionbudgets"}),
      res(kRead, {""}, {"persistentvolumeclaims", "persistentvolumes"}),
      // system:volume-scheduler, which upstream binds to the scheduler apart.
      res({"get", "list", "patch", "update", "watch"}, {""}, {"persistentvolumeclaims", "persistentvolumes"}),
      res(kRead, {"storage.k8s.io"}, {"storageclasses"}),
      res({"create"}, {"authentication.k8s.io"}, {"tokenreviews"}),
      res({"create"}, {"authorization.k8s.io"}, {"subjectaccessreviews"}),
      res(kRead, {"storage.k8s.io"}, {"csinodes"}),
      res(kRead, {""}, {"namespaces"}),
      res(kRead, {"storage.k8s.io"}, {"csidrivers", "csistoragecapacities"}),
  };
}

std::vector<PolicyRule> controllerManagerRules() {
  return {
      eventsRule(),
      res({"create"}, {"coordination.k8s.io"}, {"leases"}),
      res({"get", "update"}, {"coordination.k8s.io"}, {"leases"}, {"kube-controller-manager"}),
      res({"create"}, {""}, {"secrets", "serviceaccounts"}),
      res({"delete"}, {""}, {"secrets"}),
      res({"get"}, {""}, {"configmaps", "namespaces", "secrets", "serviceaccounts"}),
      res({"update"}, {""}, {"secrets", "serviceaccounts"}),
      res({"create"}, {"authentication.k8s.io"}, {"tokenreviews"}),
      res({"create"}, {"authorization.k8s.io"}, {"subjectaccessreviews"}),
      res({"list", "watch"}, {"*"}, {"*"}),
      res({"create"}, {""}, {"serviceaccounts/token"}),
  };
}

}  // namespace

const std::vector<PolicyRule>& nodeRules() {
  static const std::vector<PolicyRule> rules = {
      res({"create"}, {"authentication.k8s.io"}, {"tokenreviews"}),
      res({"create"}, {"authorization.k8s.io"}, {"localsubjectaccessreviews", "subjectaccessreviews"}),
      res(kRead, {""}, {"services"}),
      res({"create", "get", "list", "watch"}, {""}, {"nodes"}),
      res({"patch", "update"}, {""}, {"nodes/status"}),
      res({"patch", "update"}, {""}, {"nodes"}),
      res({"create", "patch", "update"}, {""}, {"events"}),
      res(kRead, {""}, {"pods"}),
      res({"create", "delete"}, {""}, {"pods"}),
      res({"patch", "update"}, {""}, {"pods/status"}),
      res({"create"}, {""}, {"pods/eviction"}),
      res(kRead, {""}, {"configmaps", "secrets"}),
      res({"get"}, {""}, {"persistentvolumeclaims", "persistentvolumes"}),
      res({"get"}, {""}, {"endpoints"}),
      res({"create", "get", "list", "watch"}, {"certificates.k8s.io"}, {"certificatesigningrequests"}),
      res({"create", "delete", "get", "patch", "update"}, {"coordination.k8s.io"}, {"leases"}),
      res({"get"}, {"storage.k8s.io"}, {"volumeattachments"}),
      res({"create"}, {""}, {"serviceaccounts/token"}),
      res({"get", "patch", "update"}, {""}, {"persistentvolumeclaims/status"}),
      res(kRead, {"storage.k8s.io"}, {"csidrivers"}),
      res({"create", "delete", "get", "patch", "update"}, {"storage.k8s.io"}, {"csinodes"}),
      res(kRead, {"node.k8s.io"}, {"runtimeclasses"}),
  };
  return rules;
}

const std::vector<BootstrapObject>& bootstrapPolicy() {
  static const std::vector<BootstrapObject> objects = [] {
    std::vector<BootstrapObject> o;
    const std::string CR = "ClusterRole", CRB = "ClusterRoleBinding";
    o.push_back(role(CR, "cluster-admin", "", {res({"*"}, {"*"}, {"*"}), urls({"*"}, {"*"})}));
    o.push_back(role(CR, "system:discovery", "",
                     {urls({"get"}, {"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                                     "/openapi/*", "/readyz", "/version", "/version/"})}));
    o.push_back(role(CR, "system:public-info-viewer", "",
                     {urls({"get"}, {"/healthz", "/livez", "/readyz", "/version", "/version/"})}));
    o.push_back(role(
        CR, "system:basic-user", "",
        {res({"create"}, {"authorization.k8s.io"}, {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}),
         res({"create"}, {"authentication.k8s.io"}, {"selfsubjectreviews"})}));
    o.push_back(role(CR, "system:monitoring", "",
                     {urls({"get"}, {"/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics",
                                     "/metrics/slis", "/readyz", "/readyz/*"})}));
    o.push_back(role(CR, "system:auth-delegator", "",
                     {res({"create"}, {"authentication.k8s.io"}, {"tokenreviews"}),
                      res({"create"}, {"authorization.k8s.io"}, {"subjectaccessreviews"})}));
    o.push_back(role(CR, "system:kube-scheduler", "", schedulerRules()));
    o.push_back(role(CR, "system:kube-controller-manager", "", controllerManagerRules()));
    o.push_back(role(CR, "system:node", "", nodeRules()));
    o.push_back(role(CR, "view", "", viewRules()));
    o.push_back(role(CR, "edit", "", concat({editOnlyRules(), viewRules()})));
    o.push_back(role(CR, "admin", "",
                     concat({{res({"create"}, {"authorization.k8s.io"}, {"localsubjectaccessreviews"}),
                              res(kReadWrite, {"rbac.authorization.k8s.io"}, {"roles", "rolebindings"})},
                             editOnlyRules(),
                             viewRules()})));
    o.push_back(binding(CRB, "cluster-admin", "", CR, "cluster-admin", {"Group:system:masters"}));
    o.push_back(binding(CRB, "system:discovery", "", CR, "system:discovery", {"Group:system:authenticated"}));
    o.push_back(
        binding(CRB, "system:basic-user", "", CR, "system:basic-user", {"Group:system:authenticated"}));
    o.push_back(binding(CRB, "system:public-info-viewer", "", CR, "system:public-info-viewer",
                        {"Group:system:authenticated", "Group:system:unauthenticated"}));
    o.push_back(binding(CRB, "system:monitoring", "", CR, "system:monitoring", {"Group:system:monitoring"}));
    o.push_back(binding(CRB, "system:kube-scheduler", "", CR, "system:kube-scheduler",
                        {"User:system:kube-scheduler"}));
    o.push_back(binding(CRB, "system:kube-controller-manager", "", CR, "system:kube-controller-manager",
                        {"User:system:kube-controller-manager"}));
    o.push_back(binding(CRB, "system:node", "", CR, "system:node", {}));
    for (auto& [name, rules] : controllerRoles()) {
      std::string full = "system:controller:" + name;
      o.push_back(role(CR, full, "", rules));
      o.push_back(binding(CRB, full, "", CR, full,
                          {"ServiceAccount:kube-system/" + name, "User:system:kube-controller-manager"}));
    }
    return o;
  }();
  return objects;
}

}  // namespace shepherd::auth
