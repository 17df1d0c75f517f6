// The client library against a real shepherd-apiserver, including a killed and restarted
// server in the middle of a watch.
#include <gtest/gtest.h>

#include <atomic>
#include <set>

#include "client/informer.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "client/workqueue.h"
#include "server_process.h"
#include "test_util.h"

using namespace shepherd;
using namespace shepherd::client;

namespace {

// The admin's TLS configuration for a server of ServerProcess (its PKI in `pki`).
ClientConfig tlsConfig(const std::string& pki) {
  ClientConfig c;
  c.ca_file = pki + "/ca.crt";
  c.cert_file = pki + "/admin.crt";
  c.key_file = pki + "/admin.key";
  c.timeout_ms = 5000;
  return c;
}

ClientConfig configFor(const std::string& pki, int port) {
  ClientConfig c = tlsConfig(pki);
  c.servers = {"https://127.0.0.1:" + std::to_string(port)};
  return c;
}

std::string configMap(const std::string& name, const std::string& value) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + R"("},"data":{"v":")" +
         value + R"("}})";
}

template <class F>
bool eventually(F f, int ms = 10000) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return f();
}

}  // namespace

TEST(RestClient, CrudAndTypedErrors) {
  testutil::TempDir dir;
  testutil::ServerProcess server(dir.path(), 0);
  ASSERT_GT(server.port(), 0);
  RestClient c(configFor(server.pkiDir(), server.port()));
  std::string path = resourcePath("", "v1", "configmaps", "default");
  auto created = c.post(path, configMap("a", "1"));
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ(json::getStringPath(*created, {"metadata", "name"}), "a");
  auto dup = c.post(path, configMap("a", "1"));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, 409);
  EXPECT_EQ(dup.error().reason, "AlreadyExists");
  auto missing = c.get(path + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, 404);
  EXPECT_EQ(missing.error().reason, "NotFound");
  auto patched = c.patch(path + "/a", R"({"data":{"v":"2"}})", "application/merge-patch+json");
  ASSERT_TRUE(patched.ok());
  EXPECT_EQ(json::getStringPath(*patched, {"data", "v"}), "2");
  auto invalid = c.post(path, configMap("Bad_Name", "1"));
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.error().code, 422);
  ASSERT_FALSE(invalid.error().causes.empty());
  EXPECT_EQ(invalid.error().causes[0].field, "metadata.name");
  EXPECT_TRUE(c.del(path + "/a").ok());
  server.stop(SIGKILL);
  auto down = c.get(path, RequestOptions{1000, 2});
  ASSERT_FALSE(down.ok());
  EXPECT_TRUE(isTransportError(down.error()));
}

TEST(RestClient, FailsOverToTheNextServer) {
  testutil::TempDir dir;
  testutil::ServerProcess server(dir.path(), 0);
  ClientConfig cfg = tlsConfig(server.pkiDir());
  cfg.servers = {"https://127.0.0.1:1", server.url()};  // the first refuses connections
  RestClient c(cfg);
  auto r = c.get("/api/v1/namespaces/default");
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto w = c.post(resourcePath("", "v1", "configmaps", "default"), configMap("f", "1"));
  ASSERT_TRUE(w.ok()) << w.error().message;
}

TEST(Informer, FollowsChangesAndSurvivesServerRestartAndExpiry) {
  testutil::TempDir dir;
  auto server = std::make_unique<testutil::ServerProcess>(dir.path(), 0);
  int port = server->port();
  ASSERT_GT(port, 0);
  RestClient c(configFor(server->pkiDir(), port));
  std::string path = resourcePath("", "v1", "configmaps", "default");
  ASSERT_TRUE(c.post(path, configMap("before", "1")).ok());

  Informer inf(c, InformerOptions{"", "v1", "configmaps", "default", "", "", 2});
  std::mutex mu;
  std::vector<std::string> log;
  EventHandlers h;
  h.on_add = [&](const Object& o) {
    std::lock_guard<std::mutex> g(mu);
    log.push_back("add " + objectKey(*o));
  };
  h.on_update = [&](const Object&, const Object& o) {
    std::lock_guard<std::mutex> g(mu);
    log.push_back("update " + objectKey(*o) + " " + std::string(json::getStringPath(*o, {"data", "v"})));
  };
  h.on_delete = [&](const Object& o) {
    std::lock_guard<std::mutex> g(mu);
    log.push_back("delete " + objectKey(*o));
  };
  inf.addHandlers(h);
  inf.addIndex("v", [](const json::Value& o) {
    return std::vector<std::string>{std::string(json::getStringPath(o, {"data", "v"}))};
  });
  inf.start();
  ASSERT_TRUE(inf.waitForSync(10000));
  EXPECT_TRUE(inf.get("default/before"));
  auto has = [&](const std::string& s) {
    std::lock_guard<std::mutex> g(mu);
    return std::find(log.begin(), log.end(), s) != log.end();
  };
  ASSERT_TRUE(c.post(path, configMap("live", "1")).ok());
  ASSERT_TRUE(c.patch(path + "/live", R"({"data":{"v":"2"}})", "application/merge-patch+json").ok());
  ASSERT_TRUE(eventually([&] { return has("update default/live 2"); }));
  EXPECT_EQ(inf.byIndex("v", "2").size(), 1u);

  // Killed mid-watch and restarted on the same port: the watch resumes, no relist.
  server->stop(SIGKILL);
  server = std::make_unique<testutil::ServerProcess>(dir.path(), port);
  ASSERT_EQ(server->port(), port);
  ASSERT_TRUE(c.del(path + "/live").ok());
  ASSERT_TRUE(eventually([&] { return has("delete default/live"); }, 15000));
  EXPECT_EQ(inf.relists(), 1u);
  EXPECT_GE(inf.watchRestarts(), 1u);

  // Writes the informer could not watch (through another port) move the revision past
  // where it stopped: its watch gets 410 Expired and it lists again, seeing them all.
  server->stop(SIGKILL);
  {
    testutil::ServerProcess other(dir.path(), 0);
    RestClient oc(configFor(other.pkiDir(), other.port()));
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(oc.post(path, configMap("missed" + std::to_string(i), "m")).ok());
    ASSERT_TRUE(oc.del(path + "/before").ok());
  }
  server = std::make_unique<testutil::ServerProcess>(dir.path(), port);
  ASSERT_TRUE(eventually([&] { return inf.get("default/missed4") != nullptr; }, 20000));
  EXPECT_GE(inf.relists(), 2u);
  EXPECT_TRUE(has("delete default/before"));
  EXPECT_EQ(inf.byIndex("v", "m").size(), 5u);
  inf.stop();
}

TEST(WorkQueue, DeduplicatesAndNeverRunsAKeyTwiceAtOnce) {
  WorkQueue q;
  q.add("a");
  q.add("a");
  q.add("b");
  EXPECT_EQ(q.len(), 2u);
  std::string k1, k2;
  ASSERT_TRUE(q.get(k1));
  EXPECT_EQ(k1, "a");
  q.add("a");  // while "a" is processing: queued for after done()
  ASSERT_TRUE(q.get(k2));
  EXPECT_EQ(k2, "b");
  EXPECT_EQ(q.len(), 0u);  // "a" is not handed out twice at once
  q.done("a");
  EXPECT_EQ(q.len(), 1u);
  q.done("b");
  std::string k3;
  ASSERT_TRUE(q.get(k3));
  EXPECT_EQ(k3, "a");
  q.done("a");
}

TEST(WorkQueue, BacksOffPerKeyWithACapAndDrainsOnShutdown) {
  WorkQueue q(std::chrono::milliseconds(10), std::chrono::milliseconds(40));
  EXPECT_EQ(q.nextDelay("x").count(), 10);
  q.addRateLimited("x");
  EXPECT_EQ(q.nextDelay("x").count(), 20);
  q.addRateLimited("x");
  q.addRateLimited("x");
  EXPECT_EQ(q.nextDelay("x").count(), 40);  // capped
  q.addRateLimited("x");
  EXPECT_EQ(q.nextDelay("x").count(), 40);
  EXPECT_EQ(q.numRequeues("x"), 4);
  std::string k;
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(q.get(k));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(8));
  q.done(k);
  q.forget("x");
  EXPECT_EQ(q.numRequeues("x"), 0);
  q.add("y");
  q.add("z");
  q.shutDown();
  std::set<std::string> drained;
  while (q.get(k)) {
    drained.insert(k);
    q.done(k);
  }
  EXPECT_EQ(drained, (std::set<std::string>{"y", "z"}));
  q.add("after");  // ignored once shut down
  EXPECT_FALSE(q.get(k));
}

TEST(LeaderElection, OneLeaderAtATimeAndHandOverOnRelease) {
  testutil::TempDir dir;
  testutil::ServerProcess server(dir.path(), 0);
  RestClient c(configFor(server.pkiDir(), server.port()));
  std::atomic<int> leading{0}, maxLeading{0};
  auto cfgFor = [&](const std::string& id) {
    LeaderElectionConfig cfg;
    cfg.name = "test-lock";
    cfg.identity = id;
    cfg.lease_duration = std::chrono::seconds(3);
    cfg.renew_deadline = std::chrono::seconds(2);
    cfg.retry_period = std::chrono::seconds(1);
    cfg.on_started_leading = [&] {
      int n = ++leading;
      int m = maxLeading.load();
      while (n > m && !maxLeading.compare_exchange_weak(m, n)) {
      }
    };
    cfg.on_stopped_leading = [&] { --leading; };
    return cfg;
  };
  LeaderElector a(c, cfgFor("a"));
  LeaderElector b(c, cfgFor("b"));
  a.start();
  ASSERT_TRUE(eventually([&] { return a.isLeader(); }));
  b.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_TRUE(a.isLeader());
  EXPECT_FALSE(b.isLeader());
  a.stop();  // releases the lease
  ASSERT_TRUE(eventually([&] { return b.isLeader(); }, 5000));
  auto lease = c.get(resourcePath("coordination.k8s.io", "v1", "leases", "kube-system") + "/test-lock");
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(json::getStringPath(*lease, {"spec", "holderIdentity"}), "b");
  EXPECT_EQ(json::getInt(*json::find(*lease, "spec"), "leaseTransitions").value(), 1);
  b.stop();
  EXPECT_EQ(maxLeading.load(), 1);
}
