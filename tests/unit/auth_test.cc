// Authentication and the cluster PKI: the token file format, the authenticator's order
// and outcomes, issued certificates, and HTTPS serving with client certificates (the
// server as kubectl meets it: libcurl with a CA and a client certificate).
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdlib>

#include "auth/access_review.h"
#include "auth/authenticator.h"
#include "auth/bootstrap_policy.h"
#include "auth/node_authorizer.h"
#include "auth/rbac_authorizer.h"
#include "auth/rbac_escalation.h"
#include "auth/request_info.h"
#include "auth/service_account_token.h"
#include "client/kubeconfig.h"
#include "common/base64.h"
#include "net/http/server.h"
#include "pki/certificates.h"
#include "pki/cluster_pki.h"
#include "pki/jwt.h"
#include "pki/openssl_util.h"
#include "test_util.h"

using namespace shepherd;

namespace {

// Every directory a test makes goes when the test binary ends.
std::string tempDir() {
  static std::vector<std::unique_ptr<testutil::TempDir>> dirs;
  dirs.push_back(std::make_unique<testutil::TempDir>());
  return dirs.back()->path();
}

http::Request withCert(bool verified, const std::string& cn, std::vector<std::string> orgs) {
  http::Request r;
  auto c = std::make_shared<http::Request::ClientCertificate>();
  c->verified = verified;
  c->common_name = cn;
  c->organizations = std::move(orgs);
  r.client_certificate = c;
  return r;
}

http::Request withToken(const std::string& token) {
  http::Request r;
  r.headers.emplace_back("authorization", "Bearer " + token);
  return r;
}

std::unique_ptr<auth::Authenticator> authenticator(bool anonymous, const std::string& tokens) {
  std::string dir = tempDir();
  std::string path = dir + "/tokens.csv";
  EXPECT_TRUE(pki::writeFileAtomically(path, tokens, 0600));
  auto a = auth::Authenticator::create({anonymous, path});
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message);
  return std::move(*a);
}

}  // namespace

TEST(TokenFile, ParsesUpstreamCsv) {
  auto tf =
      auth::TokenFile::parse("t1,alice,uid-1,\"devs,ops\"\n\nt2,bob,uid-2\r\nt3,\"carol, jr\",uid-3,\n");
  ASSERT_TRUE(tf.ok()) << tf.error().message;
  EXPECT_EQ(tf->size(), 3u);
  const meta::UserInfo* a = tf->find("t1");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->name, "alice");
  EXPECT_EQ(a->uid, "uid-1");
  EXPECT_EQ(a->groups, (std::vector<std::string>{"devs", "ops"}));
  EXPECT_TRUE(tf->find("t2")->groups.empty());
  EXPECT_EQ(tf->find("t3")->name, "carol, jr");
  EXPECT_EQ(tf->find("nope"), nullptr);
  EXPECT_FALSE(auth::TokenFile::parse("t1,alice\n").ok());
  EXPECT_FALSE(auth::TokenFile::parse("t1,\"alice,uid\n").ok());
  EXPECT_FALSE(auth::TokenFile::parse(",alice,uid\n").ok());
}

TEST(Authenticator, CertificateThenTokenThenAnonymous) {
  auto a = authenticator(true, "secret,alice,uid-1,devs\n");
  auto u = a->authenticate(withCert(true, "system:node:n1", {"system:nodes"}));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->name, "system:node:n1");
  EXPECT_EQ(u->groups, (std::vector<std::string>{"system:nodes", "system:authenticated"}));

  u = a->authenticate(withToken("secret"));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->name, "alice");
  EXPECT_EQ(u->uid, "uid-1");
  EXPECT_EQ(u->groups, (std::vector<std::string>{"devs", "system:authenticated"}));

  auto bad = a->authenticate(withToken("wrong"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, 401);
  EXPECT_EQ(bad.error().reason, "Unauthorized");

  // A certificate that does not verify is refused, unless a token holds.
  EXPECT_EQ(a->authenticate(withCert(false, "mallory", {"system:masters"})).error().code, 401);
  http::Request both = withCert(false, "mallory", {"system:masters"});
  both.headers.emplace_back("authorization", "bearer secret");
  EXPECT_EQ(a->authenticate(both)->name, "alice");

  u = a->authenticate(http::Request{});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->name, "system:anonymous");
  EXPECT_EQ(u->groups, (std::vector<std::string>{"system:unauthenticated"}));

  auto strict = authenticator(false, "secret,alice,uid-1\n");
  EXPECT_EQ(strict->authenticate(http::Request{}).error().code, 401);
  http::Request basic;
  basic.headers.emplace_back("authorization", "Basic YWxpY2U6eA==");
  EXPECT_EQ(strict->authenticate(basic).error().code, 401);

  strict->addTokenAuthenticator([](const std::string& t) -> std::optional<meta::UserInfo> {
    if (t != "jwt") return std::nullopt;
    return meta::UserInfo{"system:serviceaccount:ns:sa", "", {"system:serviceaccounts"}, {}};
  });
  EXPECT_EQ(strict->authenticate(withToken("jwt"))->groups,
            (std::vector<std::string>{"system:serviceaccounts", "system:authenticated"}));
}

TEST(ClusterPki, IssuesChainedCertificatesAndKubeconfigsOnce) {
  std::string dir = tempDir() + "/pki";
  ASSERT_TRUE(
      pki::ensureClusterPki({dir, "https://127.0.0.1:6443", {"n1"}, {"192.0.2.7", "api.example"}}).ok());
  auto ca = pki::readCert(*pki::readFile(dir + "/ca.crt"));
  ASSERT_TRUE(ca);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca.get());
  auto verifies = [&](const std::string& file) {
    auto cert = pki::readCert(*pki::readFile(file));
    X509_STORE_CTX* ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, store, cert.get(), nullptr);
    bool ok = X509_verify_cert(ctx) == 1;
    X509_STORE_CTX_free(ctx);
    return ok;
  };
  for (auto base :
       {"apiserver", "admin", "scheduler", "controller-manager", "node-n1", "apiserver-kubelet-client"}) {
    EXPECT_TRUE(verifies(dir + "/" + base + ".crt")) << base;
    struct stat st;
    ASSERT_EQ(::stat((dir + "/" + base + ".key").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << base;
  }
  // The node's subject: CN system:node:n1, O system:nodes.
  auto node = pki::readCert(*pki::readFile(dir + "/node-n1.crt"));
  char cn[256] = {0}, org[256] = {0};
  X509_NAME_get_text_by_NID(X509_get_subject_name(node.get()), NID_commonName, cn, sizeof cn);
  X509_NAME_get_text_by_NID(X509_get_subject_name(node.get()), NID_organizationName, org, sizeof org);
  EXPECT_STREQ(cn, "system:node:n1");
  EXPECT_STREQ(org, "system:nodes");
  // The serving certificate names loopback, the in-cluster names and the extra SANs.
  auto serving = pki::readCert(*pki::readFile(dir + "/apiserver.crt"));
  EXPECT_EQ(X509_check_ip_asc(serving.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(serving.get(), "192.0.2.7", 0), 1);
  EXPECT_EQ(X509_check_host(serving.get(), "kubernetes.default.svc", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(serving.get(), "api.example", 0, 0, nullptr), 1);
  EXPECT_NE(X509_check_host(serving.get(), "example.org", 0, 0, nullptr), 1);
  X509_STORE_free(store);
  // The kubeconfig carries the CA and the client certificate.
  auto kc = client::loadKubeconfig(dir + "/scheduler.kubeconfig");
  ASSERT_TRUE(kc.ok()) << kc.error().message;
  EXPECT_EQ(kc->servers.front(), "https://127.0.0.1:6443");
  EXPECT_EQ(kc->ca_data, *pki::readFile(dir + "/ca.crt"));
  EXPECT_EQ(kc->cert_data, *pki::readFile(dir + "/scheduler.crt"));
  // A second run keeps what exists.
  std::string before = *pki::readFile(dir + "/admin.crt");
  ASSERT_TRUE(pki::ensureClusterPki({dir, "https://127.0.0.1:7443", {"n1"}, {}}).ok());
  EXPECT_EQ(*pki::readFile(dir + "/admin.crt"), before);
  EXPECT_EQ(client::loadKubeconfig(dir + "/admin.kubeconfig")->servers.front(), "https://127.0.0.1:7443");
}

namespace {

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// GET https://127.0.0.1:port/ with the CA and an optional client certificate.
std::pair<long, std::string> get(int port, const std::string& ca, const std::string& cert,
                                 const std::string& key) {
  CURL* c = curl_easy_init();
  std::string body, url = "https://127.0.0.1:" + std::to_string(port) + "/";
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CAINFO, ca.c_str());
  if (!cert.empty()) {
    curl_easy_setopt(c, CURLOPT_SSLCERT, cert.c_str());
    curl_easy_setopt(c, CURLOPT_SSLKEY, key.c_str());
  }
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
  long code = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_cleanup(c);
  return {code, body};
}

}  // namespace

TEST(HttpsServer, ReportsVerifiedAndUnverifiedClientCertificates) {
  std::string dir = tempDir();
  ASSERT_TRUE(pki::ensureClusterPki({dir + "/pki", "", {}, {}}).ok());
  ASSERT_TRUE(pki::ensureClusterPki({dir + "/other", "", {}, {}}).ok());  // another CA
  http::ServerOptions o;
  o.tls = http::TlsOptions{dir + "/pki/apiserver.crt", dir + "/pki/apiserver.key", dir + "/pki/ca.crt"};
  http::Server server(o, [](http::Request& req, std::shared_ptr<http::Responder> resp) {
    std::string who = "none";
    if (req.client_certificate)
      who = (req.client_certificate->verified ? "verified:" : "unverified:") +
            req.client_certificate->common_name;
    resp->send(http::Response{200, {}, who + (req.tls ? " tls" : " plain")});
  });
  auto port = server.start();
  ASSERT_TRUE(port.ok());
  std::string ca = dir + "/pki/ca.crt";
  EXPECT_EQ(get(*port, ca, dir + "/pki/admin.crt", dir + "/pki/admin.key"),
            (std::pair<long, std::string>{200, "verified:kubernetes-admin tls"}));
  EXPECT_EQ(get(*port, ca, "", ""), (std::pair<long, std::string>{200, "none tls"}));
  EXPECT_EQ(get(*port, ca, dir + "/other/admin.crt", dir + "/other/admin.key"),
            (std::pair<long, std::string>{200, "unverified:kubernetes-admin tls"}));
  // A client that does not trust the server's CA gets no answer.
  EXPECT_EQ(get(*port, dir + "/other/ca.crt", "", "").first, 0);
  server.stop(1);
}

namespace {

auth::RequestInfo info(const std::string& method, const std::string& target) {
  http::Request r;
  r.method = method;
  r.target = target;
  auto q = target.find('?');
  r.path = target.substr(0, q);
  if (q != std::string::npos) {
    std::string qs = target.substr(q + 1);
    size_t start = 0;
    while (start < qs.size()) {
      size_t amp = qs.find('&', start);
      if (amp == std::string::npos) amp = qs.size();
      std::string part = qs.substr(start, amp - start);
      size_t eq = part.find('=');
      r.query.emplace_back(part.substr(0, eq), eq == std::string::npos ? "" : part.substr(eq + 1));
      start = amp + 1;
    }
  }
  return auth::requestInfo(r);
}

std::string describe(const auth::RequestInfo& i) {
  if (!i.resource_request) return "nonresource " + i.verb + " " + i.path;
  return i.verb + " " + i.api_group + "/" + i.api_version + " ns=" + i.namespace_ + " " + i.resource +
         (i.subresource.empty() ? "" : "/" + i.subresource) + " name=" + i.name;
}

}  // namespace

TEST(RequestInfo, AsUpstreamDerivesIt) {
  EXPECT_EQ(describe(info("GET", "/api/v1/namespaces/ns/pods")), "list /v1 ns=ns pods name=");
  EXPECT_EQ(describe(info("GET", "/api/v1/namespaces/ns/pods?watch=true")), "watch /v1 ns=ns pods name=");
  EXPECT_EQ(describe(info("GET", "/api/v1/watch/namespaces/ns/pods")), "watch /v1 ns=ns pods name=");
  EXPECT_EQ(describe(info("GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name=x")),
            "list /v1 ns=ns pods name=x");
  EXPECT_EQ(describe(info("GET", "/api/v1/namespaces/ns/pods/p/log")), "get /v1 ns=ns pods/log name=p");
  EXPECT_EQ(describe(info("POST", "/api/v1/namespaces/ns/pods/p/binding")),
            "create /v1 ns=ns pods/binding name=p");
  EXPECT_EQ(describe(info("PATCH", "/api/v1/namespaces/ns/pods/p/status")),
            "patch /v1 ns=ns pods/status name=p");
  EXPECT_EQ(describe(info("DELETE", "/api/v1/namespaces/ns/configmaps")),
            "deletecollection /v1 ns=ns configmaps name=");
  EXPECT_EQ(describe(info("PUT", "/apis/apps/v1/namespaces/ns/deployments/d/scale")),
            "update apps/v1 ns=ns deployments/scale name=d");
  EXPECT_EQ(describe(info("GET", "/api/v1/nodes/n1")), "get /v1 ns= nodes name=n1");
  EXPECT_EQ(describe(info("GET", "/api/v1/namespaces")), "list /v1 ns= namespaces name=");
  // A namespace itself: upstream sets the namespace to its own name.
  EXPECT_EQ(describe(info("GET", "/api/v1/namespaces/ns")), "get /v1 ns=ns namespaces name=ns");
  EXPECT_EQ(describe(info("PUT", "/api/v1/namespaces/ns/finalize")),
            "update /v1 ns=ns namespaces/finalize name=ns");
  EXPECT_EQ(describe(info("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews")),
            "create authentication.k8s.io/v1 ns= selfsubjectreviews name=");
  EXPECT_EQ(describe(info("GET", "/healthz")), "nonresource get /healthz");
  EXPECT_EQ(describe(info("GET", "/apis/apps/v1")), "nonresource get /apis/apps/v1");
  EXPECT_EQ(describe(info("GET", "/apis/apps")), "nonresource get /apis/apps");
  EXPECT_EQ(describe(info("GET", "/api")), "nonresource get /api");
  EXPECT_EQ(describe(info("POST", "/version")), "nonresource post /version");
}

namespace {

using auth::resourceRequest;

auth::RequestInfo pathRequest(std::string verb, std::string path) {
  auth::RequestInfo r;
  r.verb = std::move(verb);
  r.path = std::move(path);
  return r;
}

class FixedPolicy final : public auth::PolicySource {
 public:
  explicit FixedPolicy(std::shared_ptr<const auth::PolicySnapshot> p) : p_(std::move(p)) {}
  std::shared_ptr<const auth::PolicySnapshot> current() const override { return p_; }

 private:
  std::shared_ptr<const auth::PolicySnapshot> p_;
};

// The bootstrap policy plus `extra` objects (JSON with apiVersion/kind).
std::shared_ptr<auth::RbacAuthorizer> rbacWith(const std::vector<std::string>& extra) {
  auto snap = std::make_shared<auth::PolicySnapshot>();
  for (auto& o : auth::bootstrapPolicy()) {
    json::Document d;
    d.Parse(o.json.data(), o.json.size());
    snap->add(o.kind, d);
  }
  for (auto& text : extra) {
    json::Document d;
    d.Parse(text.data(), text.size());
    snap->add(std::string(json::getString(d, "kind")), d);
  }
  return std::make_shared<auth::RbacAuthorizer>(std::make_shared<FixedPolicy>(snap));
}

meta::UserInfo user(std::string name, std::vector<std::string> groups = {}) {
  groups.push_back("system:authenticated");
  return meta::UserInfo{std::move(name), "", std::move(groups), {}};
}

}  // namespace

TEST(Rbac, RuleMatchingAsUpstream) {
  auth::PolicyRule pods{{"get", "list"}, {""}, {"pods"}, {}, {}};
  EXPECT_TRUE(auth::ruleAllows(pods, resourceRequest("get", "", "pods", "ns", "p")));
  EXPECT_FALSE(
      auth::ruleAllows(pods, resourceRequest("get", "", "pods", "ns", "p", "log")));  // not subresources
  EXPECT_FALSE(auth::ruleAllows(pods, resourceRequest("delete", "", "pods", "ns", "p")));
  EXPECT_FALSE(auth::ruleAllows(pods, resourceRequest("get", "apps", "pods", "ns", "p")));
  auth::PolicyRule scale{{"*"}, {"*"}, {"*/scale"}, {}, {}};
  EXPECT_TRUE(auth::ruleAllows(scale, resourceRequest("update", "apps", "deployments", "ns", "d", "scale")));
  EXPECT_FALSE(auth::ruleAllows(scale, resourceRequest("update", "apps", "deployments", "ns", "d")));
  auth::PolicyRule named{{"get"}, {""}, {"configmaps"}, {"one"}, {}};
  EXPECT_TRUE(auth::ruleAllows(named, resourceRequest("get", "", "configmaps", "ns", "one")));
  EXPECT_FALSE(auth::ruleAllows(named, resourceRequest("get", "", "configmaps", "ns", "two")));
  EXPECT_FALSE(auth::ruleAllows(named, resourceRequest("get", "", "configmaps", "ns", "")));
  auth::PolicyRule urls{{"get"}, {}, {}, {}, {"/healthz/*", "/version"}};
  EXPECT_TRUE(auth::ruleAllows(urls, pathRequest("get", "/healthz/ping")));
  EXPECT_FALSE(auth::ruleAllows(urls, pathRequest("get", "/healthz")));
  EXPECT_TRUE(auth::ruleAllows(urls, pathRequest("get", "/version")));
  EXPECT_FALSE(auth::ruleAllows(urls, pathRequest("post", "/version")));
  EXPECT_FALSE(auth::ruleAllows(urls, resourceRequest("get", "", "pods")));

  auth::Subject sa{"ServiceAccount", "builder", ""};
  EXPECT_TRUE(auth::subjectApplies(sa, user("system:serviceaccount:ci:builder"), "ci"));
  EXPECT_FALSE(auth::subjectApplies(sa, user("system:serviceaccount:ci:builder"), ""));  // a cluster binding
  EXPECT_EQ(auth::describeSubject(sa, "ci"), "ServiceAccount \"builder/ci\"");
}

TEST(Rbac, BootstrapPolicyAndBindingsDecide) {
  auto rbac = rbacWith({
      R"({"kind":"Role","metadata":{"name":"reader","namespace":"team"},
          "rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]}]})",
      R"({"kind":"RoleBinding","metadata":{"name":"alice-reads","namespace":"team"},
          "roleRef":{"kind":"Role","name":"reader"},"subjects":[{"kind":"User","name":"alice"}]})",
      R"({"kind":"RoleBinding","metadata":{"name":"bob-views","namespace":"team"},
          "roleRef":{"kind":"ClusterRole","name":"view"},"subjects":[{"kind":"Group","name":"qa"}]})",
      R"({"kind":"ClusterRoleBinding","metadata":{"name":"dangling"},
          "roleRef":{"kind":"ClusterRole","name":"gone"},"subjects":[{"kind":"User","name":"carol"}]})"});
  auto d = rbac->authorize(user("alice"), resourceRequest("list", "", "pods", "team"));
  EXPECT_TRUE(d.allowed());
  EXPECT_EQ(d.reason,
            "RBAC: allowed by RoleBinding \"alice-reads/team\" of Role \"reader\" to User \"alice\"");
  EXPECT_FALSE(rbac->authorize(user("alice"), resourceRequest("list", "", "pods", "other")).allowed());
  EXPECT_FALSE(rbac->authorize(user("alice"), resourceRequest("delete", "", "pods", "team", "p")).allowed());
  // A RoleBinding of a ClusterRole grants it inside the namespace only.
  EXPECT_TRUE(rbac->authorize(user("bob", {"qa"}), resourceRequest("get", "apps", "deployments", "team", "d"))
                  .allowed());
  EXPECT_FALSE(rbac->authorize(user("bob", {"qa"}), resourceRequest("get", "apps", "deployments", "x", "d"))
                   .allowed());
  // The bootstrap roles.
  EXPECT_TRUE(rbac->authorize(user("x", {"system:masters"}), resourceRequest("delete", "", "nodes", "", "n"))
                  .allowed());
  EXPECT_TRUE(rbac->authorize(user("alice"), pathRequest("get", "/apis")).allowed());  // system:discovery
  meta::UserInfo anon{"system:anonymous", "", {"system:unauthenticated"}, {}};
  EXPECT_TRUE(rbac->authorize(anon, pathRequest("get", "/healthz")).allowed());
  EXPECT_FALSE(rbac->authorize(anon, pathRequest("get", "/apis")).allowed());
  meta::UserInfo sched = user("system:kube-scheduler");
  EXPECT_TRUE(rbac->authorize(sched, resourceRequest("create", "", "pods", "ns", "p", "binding")).allowed());
  EXPECT_TRUE(rbac->authorize(sched, resourceRequest("patch", "", "pods", "ns", "p", "status")).allowed());
  EXPECT_FALSE(rbac->authorize(sched, resourceRequest("update", "", "pods", "ns", "p")).allowed());
  EXPECT_TRUE(rbac->authorize(sched, resourceRequest("update", "coordination.k8s.io", "leases", "kube-system",
                                                     "kube-scheduler"))
                  .allowed());
  EXPECT_FALSE(rbac->authorize(sched, resourceRequest("update", "coordination.k8s.io", "leases",
                                                      "kube-system", "kube-controller-manager"))
                   .allowed());
  meta::UserInfo cm = user("system:kube-controller-manager");
  EXPECT_TRUE(rbac->authorize(cm, resourceRequest("create", "", "pods", "ns")).allowed());
  EXPECT_TRUE(rbac->authorize(cm, resourceRequest("deletecollection", "", "configmaps", "ns")).allowed());
  EXPECT_FALSE(
      rbac->authorize(cm, resourceRequest("create", "rbac.authorization.k8s.io", "clusterroles")).allowed());
  // A binding to a missing role says so.
  d = rbac->authorize(user("carol"), resourceRequest("get", "", "pods", "ns", "p"));
  EXPECT_FALSE(d.allowed());
  EXPECT_EQ(d.reason, "RBAC: clusterrole.rbac.authorization.k8s.io \"gone\" not found");
}

TEST(Rbac, ForbiddenMessagesAsUpstream) {
  auto u = user("u");
  EXPECT_EQ(auth::forbiddenError(u, resourceRequest("get", "", "pods", "ns", "x"), "").message,
            "pods \"x\" is forbidden: User \"u\" cannot get resource \"pods\" in API group \"\" in the "
            "namespace \"ns\"");
  EXPECT_EQ(
      auth::forbiddenError(u, resourceRequest("list", "", "nodes"), "").message,
      "nodes is forbidden: User \"u\" cannot list resource \"nodes\" in API group \"\" at the cluster scope");
  auto e =
      auth::forbiddenError(u, resourceRequest("patch", "apps", "deployments", "ns", "d", "scale"), "why");
  EXPECT_EQ(
      e.message,
      "deployments.apps \"d\" is forbidden: User \"u\" cannot patch resource \"deployments/scale\" in API "
      "group \"apps\" in the namespace \"ns\": why");
  EXPECT_EQ(e.code, 403);
  EXPECT_EQ(e.reason, "Forbidden");
  EXPECT_EQ(e.kind, "deployments");
  EXPECT_EQ(auth::forbiddenError(u, pathRequest("get", "/foo<x>"), "").message,
            "forbidden: User \"u\" cannot get path \"/foo&lt;x&gt;\"");
}

namespace {

class FakeGraph final : public auth::NodeGraph {
 public:
  bool podOnNode(const std::string& node, const std::string&, const std::string& pod) const override {
    return node == "n1" && pod == "mine";
  }
  bool usedByPodOnNode(const std::string& node, const std::string& resource, const std::string&,
                       const std::string& name) const override {
    return node == "n1" && resource == "secrets" && name == "used";
  }
};

}  // namespace

TEST(NodeAuthorizer, OwnObjectsOnly) {
  auth::NodeAuthorizer na(std::make_shared<FakeGraph>());
  meta::UserInfo n1 = user("system:node:n1", {"system:nodes"});
  EXPECT_TRUE(na.authorize(n1, resourceRequest("get", "", "secrets", "ns", "used")).allowed());
  auto d = na.authorize(n1, resourceRequest("get", "", "secrets", "ns", "other"));
  EXPECT_FALSE(d.allowed());
  EXPECT_EQ(d.reason, "no relationship found between node 'n1' and this object");
  EXPECT_EQ(na.authorize(n1, resourceRequest("list", "", "secrets", "ns")).reason, "No Object name found");
  EXPECT_TRUE(na.authorize(n1, resourceRequest("get", "", "pods", "ns", "mine")).allowed());
  EXPECT_FALSE(na.authorize(n1, resourceRequest("get", "", "pods", "ns", "theirs")).allowed());
  auto list = resourceRequest("watch", "", "pods");
  list.field_selector = "spec.nodeName=n1";
  EXPECT_TRUE(na.authorize(n1, list).allowed());
  list.field_selector = "spec.nodeName=n2";
  EXPECT_FALSE(na.authorize(n1, list).allowed());
  EXPECT_TRUE(na.authorize(n1, resourceRequest("get", "", "nodes", "", "n1")).allowed());
  EXPECT_EQ(na.authorize(n1, resourceRequest("get", "", "nodes", "", "n2")).reason,
            "node 'n1' cannot read 'n2', only its own Node object");
  EXPECT_TRUE(
      na.authorize(n1, resourceRequest("update", "coordination.k8s.io", "leases", "kube-node-lease", "n1"))
          .allowed());
  EXPECT_FALSE(
      na.authorize(n1, resourceRequest("update", "coordination.k8s.io", "leases", "kube-node-lease", "n2"))
          .allowed());
  EXPECT_TRUE(
      na.authorize(n1, resourceRequest("create", "", "events", "ns")).allowed());  // system:node rules
  EXPECT_FALSE(na.authorize(n1, resourceRequest("create", "", "secrets", "ns")).allowed());
  // Not a node: no opinion at all.
  auto other = na.authorize(user("system:node:n1"), resourceRequest("get", "", "secrets", "ns", "used"));
  EXPECT_EQ(other.kind, auth::Decision::Kind::NoOpinion);
  EXPECT_EQ(other.reason, "");
}

TEST(AccessReview, AnswersFromTheAuthorizer) {
  auto rbac = rbacWith({});
  auth::UnionAuthorizer chain({rbac});
  json::Document review;
  review.Parse(R"({"spec":{"resourceAttributes":{"verb":"create","resource":"pods","subresource":"binding",
                  "namespace":"ns"}}})");
  auto out = auth::answerAccessReview(review, user("system:kube-scheduler"), &chain, true);
  ASSERT_TRUE(out.ok());
  json::Document answer;
  answer.Parse(out->data(), out->size());
  EXPECT_TRUE(json::getBool(*json::find(answer, "status"), "allowed"));
  EXPECT_EQ(json::getStringPath(answer, {"status", "reason"}),
            "RBAC: allowed by ClusterRoleBinding \"system:kube-scheduler\" of ClusterRole "
            "\"system:kube-scheduler\" "
            "to User \"system:kube-scheduler\"");
  json::Document sar;
  sar.Parse(R"({"spec":{"user":"nobody","nonResourceAttributes":{"path":"/healthz","verb":"get"}}})");
  out = auth::answerAccessReview(sar, user("admin", {"system:masters"}), &chain, false);
  ASSERT_TRUE(out.ok());
  answer.Parse(out->data(), out->size());
  EXPECT_FALSE(json::getBool(*json::find(answer, "status"), "allowed", true));  // nobody is not authenticated
  json::Document bad;
  bad.Parse(R"({"spec":{"resourceAttributes":{"verb":"get"}}})");
  EXPECT_EQ(auth::answerAccessReview(bad, user("x"), &chain, false).error().code, 422);
}

namespace {

std::string ecKeyPem(const char* curve) {
  pki::KeyPtr key(EVP_EC_gen(curve));
  return pki::pemOf(
      [&](BIO* b) { return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
}

auth::TokenClaims sampleClaims(int64_t now) {
  auth::TokenClaims c;
  c.audiences = {"https://kubernetes.default.svc"};
  c.issued_at = c.not_before = now;
  c.expires = now + 600;
  c.ns = "team";
  c.service_account = {"robot", "sa-uid"};
  return c;
}

auth::ServiceAccountTokenOptions testTokenOptions() {
  auth::ServiceAccountTokenOptions o;
  o.issuers = {"https://issuer"};
  o.audiences = {"https://kubernetes.default.svc"};
  return o;
}

pki::JwtVerifier verifierOf(const std::string& pem) {
  pki::JwtVerifier v;
  EXPECT_TRUE(v.addKeys(pem).ok());
  return v;
}

struct FakeObjects {
  std::map<std::string, auth::LiveObject> objects;  // "resource/ns/name"
  auth::ObjectLookup lookup() {
    return [this](std::string_view resource, const std::string& ns,
                  const std::string& name) -> std::optional<auth::LiveObject> {
      auto it = objects.find(std::string(resource) + "/" + ns + "/" + name);
      if (it == objects.end()) return std::nullopt;
      return it->second;
    };
  }
};

}  // namespace

TEST(Jwt, SignsAndVerifiesEveryCurveAndRejectsTampering) {
  for (const char* curve : {"P-256", "P-384", "P-521"}) {
    std::string pem = ecKeyPem(curve);
    auto signer = pki::JwtSigner::fromPem(pem);
    ASSERT_TRUE(signer.ok()) << curve;
    pki::JwtVerifier v;
    ASSERT_TRUE(v.addKeys(pem).ok());
    auto token = signer->sign(R"({"a":1})");
    ASSERT_TRUE(token.ok());
    auto payload = v.verify(*token);
    ASSERT_TRUE(payload.ok()) << curve << ": " << payload.error().message;
    EXPECT_EQ(*payload, R"({"a":1})");
    // Any change to the payload breaks the signature.
    std::string forged = *token;
    size_t dot = forged.find('.');
    forged[dot + 2] = forged[dot + 2] == 'A' ? 'B' : 'A';
    EXPECT_FALSE(v.verify(forged).ok()) << curve;
  }
  // Another key (same kid scheme, different key) does not verify it.
  auto a = pki::JwtSigner::fromPem(ecKeyPem("P-256"));
  pki::JwtVerifier other;
  ASSERT_TRUE(other.addKeys(ecKeyPem("P-256")).ok());
  auto token = a->sign("{}");
  auto r = other.verify(*token);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "invalid signature, no keys found");
  // "alg":"none" with the right kid is refused: the algorithm must be the key's own.
  pki::JwtVerifier own;
  ASSERT_TRUE(
      own.addKeys(pki::pemOf([&](BIO* b) { return PEM_write_bio_PUBKEY(b, a->key().key.get()); })).ok());
  std::string none = base64Encode(R"({"alg":"none","kid":")" + a->key().kid + "\"}", true) + "." +
                     base64Encode("{}", true) + ".";
  EXPECT_FALSE(own.verify(none).ok());
  EXPECT_TRUE(own.verify(*token).ok());
  // One token has one spelling: padding, whitespace or the standard alphabet are refused.
  EXPECT_FALSE(own.verify(*token + "=").ok());
  std::string padded = *token;
  padded.insert(padded.find('.'), "=");
  EXPECT_FALSE(own.verify(padded).ok());
  std::string spaced = *token;
  spaced.insert(spaced.rfind('.') + 1, "\n");
  EXPECT_FALSE(own.verify(spaced).ok());
  EXPECT_FALSE(own.verify("not-a-token").ok());
  EXPECT_FALSE(own.verify("a.b.c.d").ok());
}

TEST(ServiceAccountTokens, AuthenticateUntilExpiryWithLeeway) {
  std::string pem = ecKeyPem("P-256");
  FakeObjects objs;
  objs.objects["serviceaccounts/team/robot"] = {"sa-uid", std::nullopt};
  auto o = testTokenOptions();
  auth::ServiceAccountTokens tokens(o, *pki::JwtSigner::fromPem(pem), verifierOf(pem), objs.lookup());
  pki::JwtVerifier v = verifierOf(pem);
  int64_t now = 1'800'000'000;
  auto token = tokens.issue(sampleClaims(now));
  ASSERT_TRUE(token.ok());
  auto r = tokens.authenticate(*token, now);
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->ok()) << r->error().message;
  EXPECT_EQ(r->value().name, "system:serviceaccount:team:robot");
  EXPECT_EQ(r->value().uid, "sa-uid");
  EXPECT_EQ(r->value().groups,
            (std::vector<std::string>{"system:serviceaccounts", "system:serviceaccounts:team"}));
  // Valid up to exp + 60 s, refused after.
  EXPECT_TRUE(tokens.authenticate(*token, now + 600 + 60)->ok());
  auto late = tokens.authenticate(*token, now + 600 + 61);
  ASSERT_FALSE(late->ok());
  EXPECT_EQ(late->error().message, "service account token has expired");
  EXPECT_EQ(late->error().code, 401);
  EXPECT_EQ(tokens.authenticate(*token, now - 120)->error().message,
            "service account token is not valid yet");
  // A recreated ServiceAccount (new uid) or a deleted one invalidates the token.
  objs.objects["serviceaccounts/team/robot"] = {"new-uid", std::nullopt};
  EXPECT_EQ(tokens.authenticate(*token, now)->error().message,
            "service account UID (new-uid) does not match claim (sa-uid)");
  objs.objects.clear();
  EXPECT_EQ(tokens.authenticate(*token, now)->error().message, "service account team/robot has been deleted");
  // Not ours: another issuer, or not a JWT at all.
  auth::ServiceAccountTokenOptions o2 = o;
  o2.issuers = {"https://elsewhere"};
  auth::ServiceAccountTokens others(o2, *pki::JwtSigner::fromPem(pem), v, objs.lookup());
  EXPECT_FALSE(others.authenticate(*token, now).has_value());
  EXPECT_FALSE(tokens.authenticate("sekret-token", now).has_value());
}

TEST(ServiceAccountTokens, AudienceAndBoundObjectsAreChecked) {
  std::string pem = ecKeyPem("P-256");
  FakeObjects objs;
  objs.objects["serviceaccounts/team/robot"] = {"sa-uid", std::nullopt};
  objs.objects["pods/team/web"] = {"pod-uid", std::nullopt};
  auth::ServiceAccountTokens tokens(testTokenOptions(), *pki::JwtSigner::fromPem(pem), verifierOf(pem),
                                    objs.lookup());
  int64_t now = 1'800'000'000;
  auto c = sampleClaims(now);
  c.audiences = {"vault"};
  EXPECT_FALSE(tokens.authenticate(*tokens.issue(c), now)->ok());
  c = sampleClaims(now);
  c.pod = auth::ObjectClaim{"web", "pod-uid"};
  c.node = auth::ObjectClaim{"n1", ""};
  auto token = *tokens.issue(c);
  auto decoded = auth::decodeClaims(*pki::unverifiedJwsPayload(token));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->pod->uid, "pod-uid");
  EXPECT_EQ(decoded->node->name, "n1");
  auto u = tokens.authenticate(token, now);
  ASSERT_TRUE(u->ok());
  EXPECT_EQ(u->value().extra.at("authentication.kubernetes.io/pod-name"), std::vector<std::string>{"web"});
  EXPECT_EQ(u->value().extra.at("authentication.kubernetes.io/node-name"), std::vector<std::string>{"n1"});
  EXPECT_EQ(u->value().extra.count("authentication.kubernetes.io/node-uid"), 0u);
  // Deleted more than the leeway ago, or gone: invalidated.
  objs.objects["pods/team/web"] = {"pod-uid", now - 30};
  EXPECT_TRUE(tokens.authenticate(token, now)->ok());
  objs.objects["pods/team/web"] = {"pod-uid", now - 61};
  EXPECT_EQ(tokens.authenticate(token, now)->error().message, "service account token has been invalidated");
  objs.objects["pods/team/web"] = {"other-uid", std::nullopt};
  EXPECT_EQ(tokens.authenticate(token, now)->error().message,
            "pod UID (other-uid) does not match service account pod ref claim (pod-uid)");
}

TEST(RbacEscalation, CoversAtomByAtomWithLiteralWildcards) {
  using auth::PolicyRule;
  std::vector<PolicyRule> owner = {PolicyRule{{"get", "list"}, {""}, {"pods", "*/status"}, {}, {}},
                                   PolicyRule{{"*"}, {"apps"}, {"deployments"}, {"web"}, {}},
                                   PolicyRule{{"get"}, {}, {}, {}, {"/healthz", "/api/*"}}};
  EXPECT_TRUE(
      auth::uncoveredRules(owner, {PolicyRule{{"get"}, {""}, {"pods", "pods/status"}, {}, {}}}).empty());
  EXPECT_TRUE(
      auth::uncoveredRules(owner, {PolicyRule{{"delete"}, {"apps"}, {"deployments"}, {"web"}, {}}}).empty());
  EXPECT_TRUE(
      auth::uncoveredRules(owner, {PolicyRule{{"get"}, {}, {}, {}, {"/api/v1", "/healthz"}}}).empty());
  // A name-restricted owner rule does not cover the unrestricted servant.
  auto missing = auth::uncoveredRules(owner, {PolicyRule{{"delete"}, {"apps"}, {"deployments"}, {}, {}}});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(auth::describeRule(missing[0]),
            R"({APIGroups:["apps"], Resources:["deployments"], Verbs:["delete"]})");
  // Servant wildcards are literal: "*" verbs need an owner "*".
  missing = auth::uncoveredRules(owner, {PolicyRule{{"*"}, {""}, {"pods"}, {}, {}}});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(auth::describeRule(missing[0]), R"({APIGroups:[""], Resources:["pods"], Verbs:["*"]})");
  EXPECT_EQ(auth::uncoveredRules(owner, {PolicyRule{{"get"}, {}, {}, {}, {"/metrics"}}}).size(), 1u);
}
