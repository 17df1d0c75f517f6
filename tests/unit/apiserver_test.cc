// The API server started in process (apiserver::Server), as the main starts it: options
// from the flags' defaults, HTTPS with the generated PKI, RBAC; what it acknowledged is
// there after a restart on the same data directory.
#include <gtest/gtest.h>

#include "apiserver/options.h"
#include "apiserver/server.h"
#include "client/rest_client.h"
#include "common/flags.h"
#include "test_util.h"

using namespace shepherd;

namespace {

apiserver::Options optionsIn(const std::string& dir) {
  apiserver::Options o = apiserver::defaultOptions();
  o.data_dir = dir + "/data";
  o.port = 0;
  o.shutdown_grace_seconds = 2;
  return o;
}

// The cluster admin (system:masters) of a server's generated PKI.
client::ClientConfig adminOf(const apiserver::Server& s, const apiserver::Options& o) {
  client::ClientConfig c;
  c.servers = {s.url()};
  c.ca_file = o.certDir() + "/ca.crt";
  c.cert_file = o.certDir() + "/admin.crt";
  c.key_file = o.certDir() + "/admin.key";
  c.timeout_ms = 5000;
  return c;
}

Result<apiserver::Options> parse(std::vector<std::string> args) {
  Flags flags;
  apiserver::defineFlags(flags);
  std::vector<char*> argv = {const_cast<char*>("shepherd-apiserver")};
  for (auto& a : args) argv.push_back(a.data());
  std::string err;
  if (!flags.parse(static_cast<int>(argv.size()), argv.data(), 1, err)) return ApiError::badRequest(err);
  return apiserver::optionsFromFlags(flags);
}

}  // namespace

TEST(ApiServerOptions, TheDefaultsAreConsistent) {
  auto o = parse({});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->port, 6443);
  EXPECT_EQ(o->bind_address, "127.0.0.1");
  EXPECT_EQ(o->event_ttl, std::chrono::hours(1));
  EXPECT_EQ(o->streaming_connection_idle_timeout_seconds, 4 * 3600);
  EXPECT_EQ(o->authorization_modes, (std::vector<std::string>{"Node", "RBAC"}));
  EXPECT_TRUE(o->embeddedStore());
}

TEST(ApiServerOptions, InconsistentFlagsAreBadRequests) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"--plain-http", "--bind-address=0.0.0.0"},
           {"--authorization-mode=Node,Webhook"},
           {"--event-ttl=soon"},
           {"--service-account-max-token-expiration=10m"},
           {"--etcd-servers=http://127.0.0.1:1", "--etcd-prefix=registry"},
           {"--tls-cert-file=/x.crt"},
       }) {
    auto o = parse(args);
    ASSERT_FALSE(o.ok()) << args[0];
    EXPECT_EQ(o.error().code, 400) << args[0];
  }
  auto o = parse({"--plain-http", "--bind-address=0.0.0.0"});
  EXPECT_NE(o.error().message.find("loopback"), std::string::npos) << o.error().message;
}

TEST(ApiServer, ServesInProcessAndKeepsWritesAcrossARestart) {
  testutil::TempDir dir;
  auto o = optionsIn(dir.path());
  std::string uid;
  {
    auto s = apiserver::Server::start(o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_GT((*s)->port(), 0);
    client::RestClient c(adminOf(**s, o));
    auto created =
        c.post("/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"kept"},"data":{"k":"v"}})");
    ASSERT_TRUE(created.ok()) << created.error().message;
    uid = json::getStringPath(*created, {"metadata", "uid"});
    // The bootstrap objects are there once start returned.
    EXPECT_TRUE(c.get("/api/v1/namespaces/kube-system").ok());
    EXPECT_TRUE(c.get("/api/v1/namespaces/default/services/kubernetes").ok());
    (*s)->stop();
    (*s)->stop();  // idempotent
  }
  auto s = apiserver::Server::start(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  client::RestClient c(adminOf(**s, o));
  auto got = c.get("/api/v1/namespaces/default/configmaps/kept");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(json::getStringPath(*got, {"metadata", "uid"}), uid);
  EXPECT_EQ(json::getStringPath(*got, {"data", "k"}), "v");
  // Anonymous requests are authenticated as system:anonymous and refused by RBAC.
  client::ClientConfig anon = adminOf(**s, o);
  anon.cert_file.clear();
  anon.key_file.clear();
  client::RestClient a(anon);
  auto refused = a.get("/api/v1/namespaces/default/configmaps/kept");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, 403);
}

TEST(ApiServer, StartFailsCleanlyOnABadEnvironment) {
  testutil::TempDir dir;
  auto o = optionsIn(dir.path());
  o.audit_log_path = dir.path() + "/no/such/dir/audit.log";
  auto s = apiserver::Server::start(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().code, 400);
}
