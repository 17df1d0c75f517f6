// The generic REST verbs on one resource: get, list, watch, create, update, patch,
// delete, deletecollection, and the status/finalize subresources.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "admission/admission.h"
#include "apis/resource.h"
#include "auth/authorizer.h"
#include "auth/rbac_policy.h"
#include "auth/service_account_token.h"
#include "handlers/watch_registry.h"
#include "net/http/message.h"
#include "registry/registry.h"
#include "registry/store.h"

namespace boost::asio::ssl {
class context;
}

namespace shepherd::handlers {

// How the API server reaches kubelets over HTTPS: its client certificate and, optionally,
// the CA the kubelets' serving certificates must chain to (unset: not verified, as upstream).
struct KubeletClientTls {
  std::string cert_file, key_file, ca_file;
};
// The TLS context for KubeletClientTls; null with `error` set when the files do not load.
std::shared_ptr<boost::asio::ssl::context> kubeletClientTls(const KubeletClientTls& o, std::string& error);

struct RequestScope {
  std::shared_ptr<const apis::Resource> resource;
  registry::Store* store = nullptr;
  std::string ns;            // from the URL ("" for cluster scope or all namespaces)
  std::string name;          // "" for the collection
  std::string subresource;   // "", "status", "finalize"
  bool force_watch = false;  // a legacy {prefix}/watch/... path: a watch whatever ?watch says
};

// Thread-safety: stateless apart from the shared watch registry; called concurrently.
class RestHandler {
 public:
  RestHandler(WatchRegistry& watches, registry::Registry& registry);
  // Access reviews ask it (null: everything is allowed). Set before serving.
  void setAuthorizer(const auth::Authorizer* a) { authorizer_ = a; }
  // serviceaccounts/token issues with it (null: the subresource is not served). Set before serving.
  void setServiceAccountTokens(const auth::ServiceAccountTokens* t) { service_account_tokens_ = t; }
  // Reviews of rules read it (null: RBAC is not in use). Set before serving.
  void setRbacPolicy(std::shared_ptr<const auth::PolicySource> p) { rbac_policy_ = std::move(p); }
  // Every write passes through it (null: no admission). Set before serving.
  void setAdmission(const admission::Chain* chain) { admission_ = chain; }
  // Logs are fetched from kubelets over HTTPS with this context (null: plain HTTP).
  void setKubeletTls(std::shared_ptr<boost::asio::ssl::context> c) { kubelet_tls_ = std::move(c); }
  // Exec, attach and port-forward sessions idle this long are closed (0: never). Set before serving.
  void setStreamingIdleTimeout(int seconds) { streaming_idle_timeout_seconds_ = seconds; }
  void handle(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& scope);

  // What answers the verbs of one subresource with a handler of its own (pods/binding,
  // pods/log, deployments/scale, ...; status and finalize are the store's generic parts),
  // or of a create-only resource (subresource ""). Registered before serving.
  using SubresourceHandler =
      std::function<void(http::Request&, const std::shared_ptr<http::Responder>&, const RequestScope&)>;
  void addSubresource(const std::string& group, const std::string& plural, const std::string& subresource,
                      SubresourceHandler fn);
  const SubresourceHandler* subresourceHandler(const apis::Resource& r, const std::string& subresource) const;

 private:
  void get(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  void list(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  void watch(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  void create(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  void createEphemeral(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                       const RequestScope& s);
  void update(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  void patch(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  void remove(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  void removeCollection(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                        const RequestScope& s);
  // Server-side apply (apply.cc).
  void apply(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  // The scale subresource (scale.cc): an autoscaling/v1 Scale view of spec.replicas.
  void scale(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);

  // pods/binding and the legacy core/v1 bindings (binding.cc).
  void bind(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  void evict(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  // The admission of one write of `s` by the request's user.
  admission::Request admissionFor(const http::Request& req, const RequestScope& s, bool dry_run) const;
  // serviceaccounts/token: TokenRequest (token_request.cc).
  void createToken(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  void podLog(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);
  // pods/exec, pods/attach, pods/portforward (pod_stream.cc).
  void podStream(http::Request& req, const std::shared_ptr<http::Responder>& resp, const RequestScope& s);

  WatchRegistry& watches_;
  registry::Registry& registry_;
  const auth::Authorizer* authorizer_ = nullptr;
  const auth::ServiceAccountTokens* service_account_tokens_ = nullptr;
  std::shared_ptr<const auth::PolicySource> rbac_policy_;
  const admission::Chain* admission_ = nullptr;
  std::shared_ptr<boost::asio::ssl::context> kubelet_tls_;
  int streaming_idle_timeout_seconds_ = 4 * 3600;
  std::map<std::string, SubresourceHandler> subresources_;  // "group/plural/subresource"
};

}  // namespace shepherd::handlers
