// Controllers' syncs against the in-memory fake client (client/fake_client.h), the way
// upstream's controller tests drive syncHandler: objects in, one sync, writes out.
#include <gtest/gtest.h>

#include <algorithm>

#include "controller_env.h"
#include "controllers/deployment/deployment_controller.h"
#include "controllers/endpoint/endpoints_controller.h"
#include "controllers/podgc/pod_gc_controller.h"
#include "controllers/replicaset/replica_set_controller.h"

using namespace shepherd;
using namespace shepherd::controllers;
using shepherd::testing::doc;
using shepherd::testing::Env;

namespace {

const char* kDeployment =
    R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns",
  "generation":1},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"strategy":{"type":"RollingUpdate",
  "rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600,
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}})";

}  // namespace

TEST(DeploymentSync, StatusCountsGoBackToZeroWhenScaledDown) {
  Env e;
  DeploymentController dc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create("/apis/apps/v1/namespaces/ns/deployments", kDeployment);
  e.settle();
  ASSERT_TRUE(dc.syncNow("ns/web").ok());
  e.settle();
  auto sets = e.items("/apis/apps/v1/namespaces/ns/replicasets");
  ASSERT_EQ(sets.size(), 1u);
  std::string rs(json::getStringPath(sets[0], {"metadata", "name"}));
  EXPECT_EQ(json::findPath(sets[0], {"spec", "replicas"})->GetInt(), 1);
  // The ReplicaSet's pod became available.
  e.patch("/apis/apps/v1/namespaces/ns/replicasets/" + rs + "/status",
          R"({"status":{"replicas":1,"fullyLabeledReplicas":1,"readyReplicas":1,"availableReplicas":1}})");
  e.settle();
  ASSERT_TRUE(dc.syncNow("ns/web").ok());
  auto st = e.get("/apis/apps/v1/namespaces/ns/deployments/web");
  EXPECT_EQ(json::findPath(st, {"status", "availableReplicas"})->GetInt(), 1);
  // Scaled to zero: the ReplicaSet follows, and once its pod is gone every count leaves
  // the Deployment's status (a merge patch that left zeros out used to keep the ones).
  e.patch("/apis/apps/v1/namespaces/ns/deployments/web",
          R"({"metadata":{"generation":2},"spec":{"replicas":0}})");
  e.settle();
  ASSERT_TRUE(dc.syncNow("ns/web").ok());
  e.settle();
  EXPECT_EQ(
      json::findPath(e.get("/apis/apps/v1/namespaces/ns/replicasets/" + rs), {"spec", "replicas"})->GetInt(),
      0);
  e.patch(
      "/apis/apps/v1/namespaces/ns/replicasets/" + rs + "/status",
      R"({"status":{"replicas":0,"fullyLabeledReplicas":null,"readyReplicas":null,"availableReplicas":null}})");
  e.settle();
  ASSERT_TRUE(dc.syncNow("ns/web").ok());
  auto after = e.get("/apis/apps/v1/namespaces/ns/deployments/web");
  const json::Value& status = *json::find(after, "status");
  for (const char* k :
       {"replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"})
    EXPECT_FALSE(json::find(status, k)) << k << " in " << json::serialize(status);
  EXPECT_EQ(json::getInt(status, "observedGeneration").value_or(0), 2);
  // Settled: another sync writes nothing.
  e.settle();
  e.fake.clearActions();
  ASSERT_TRUE(dc.syncNow("ns/web").ok());
  EXPECT_TRUE(e.fake.actions("patch").empty());
  EXPECT_TRUE(e.fake.actions("update").empty());
}

TEST(ReplicaSetSync, CreatesMissingPodsThenDeletesExtraOnes) {
  Env e;
  ReplicaSetController rc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  auto rs = e.create("/apis/apps/v1/namespaces/ns/replicasets", R"({"metadata":{"name":"rs","namespace":"ns"},
    "spec":{"replicas":3,"selector":{"matchLabels":{"app":"a"}},
    "template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})");
  std::string uid(json::getStringPath(rs, {"metadata", "uid"}));
  e.settle();
  // Slow start: 1, then 2 more (batches double), all owned by the ReplicaSet.
  for (int i = 0; i < 3 && e.items("/api/v1/namespaces/ns/pods").size() < 3; ++i) {
    ASSERT_TRUE(rc.syncNow("ns/rs").ok());
    e.settle();
  }
  auto pods = e.items("/api/v1/namespaces/ns/pods");
  ASSERT_EQ(pods.size(), 3u);
  for (auto& p : pods) {
    const json::Value& ref = (*json::findPath(p, {"metadata", "ownerReferences"}))[0];
    EXPECT_EQ(json::getString(ref, "uid"), uid);
    EXPECT_TRUE(json::getBool(ref, "controller"));
    EXPECT_EQ(json::getStringPath(p, {"metadata", "labels", "app"}), "a");
  }
  e.patch("/apis/apps/v1/namespaces/ns/replicasets/rs", R"({"spec":{"replicas":1}})");
  e.settle();
  e.fake.clearActions();
  ASSERT_TRUE(rc.syncNow("ns/rs").ok());
  EXPECT_EQ(e.fake.actions("delete").size(), 2u);
  e.settle();
  EXPECT_EQ(e.items("/api/v1/namespaces/ns/pods").size(), 1u);
}

TEST(ReplicaSetSync, AFailedCreateIsRetriedNotLost) {
  Env e;
  ReplicaSetController rc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create("/apis/apps/v1/namespaces/ns/replicasets", R"({"metadata":{"name":"rs","namespace":"ns"},
    "spec":{"replicas":1,"selector":{"matchLabels":{"app":"a"}},
    "template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})");
  e.settle();
  e.fake.failNext("create", "/api/v1/namespaces/ns/pods", ApiError::make(500, "InternalError", "boom"));
  EXPECT_FALSE(rc.syncNow("ns/rs").ok());
  e.settle();
  EXPECT_TRUE(e.items("/api/v1/namespaces/ns/pods").empty());
  ASSERT_TRUE(rc.syncNow("ns/rs").ok());
  e.settle();
  EXPECT_EQ(e.items("/api/v1/namespaces/ns/pods").size(), 1u);
}

TEST(ReplicationControllerSync, PodsOwnedByTheRcAnOrphanAdoptedAndStatusCounted) {
  Env e;
  ReplicaSetController rc(e.fake, e.informers, e.events, replicationControllerKind());
  auto stopFirst = e.stopBeforeController();
  e.start();
  // An orphan pod the RC's map selector matches, there before the RC.
  e.create("/api/v1/namespaces/ns/pods",
           R"({"metadata":{"name":"orphan","namespace":"ns","labels":{"app":"a"}},
    "spec":{"containers":[{"name":"c","image":"x"}]},"status":{"phase":"Running",
    "conditions":[{"type":"Ready","status":"True"}]}})");
  auto obj = e.create("/api/v1/namespaces/ns/replicationcontrollers",
                      R"({"metadata":{"name":"rc","namespace":"ns","generation":1},"spec":{"replicas":2,
    "selector":{"app":"a"},"template":{"metadata":{"labels":{"app":"a"}},
    "spec":{"containers":[{"name":"c","image":"x"}]}}}})");
  std::string uid(json::getStringPath(obj, {"metadata", "uid"}));
  e.settle();
  ASSERT_TRUE(rc.syncNow("ns/rc").ok());
  e.settle();
  auto pods = e.items("/api/v1/namespaces/ns/pods");
  ASSERT_EQ(pods.size(), 2u);  // the orphan adopted, one created
  for (auto& p : pods) {
    const json::Value& ref = (*json::findPath(p, {"metadata", "ownerReferences"}))[0];
    EXPECT_EQ(json::getString(ref, "apiVersion"), "v1");
    EXPECT_EQ(json::getString(ref, "kind"), "ReplicationController");
    EXPECT_EQ(json::getString(ref, "uid"), uid);
    EXPECT_TRUE(json::getBool(ref, "controller"));
  }
  ASSERT_TRUE(rc.syncNow("ns/rc").ok());
  auto got = e.get("/api/v1/namespaces/ns/replicationcontrollers/rc");
  EXPECT_EQ(json::getInt(*json::find(got, "status"), "replicas").value_or(-1), 2);
  EXPECT_EQ(json::getInt(*json::find(got, "status"), "readyReplicas").value_or(-1), 1);
  EXPECT_EQ(json::getInt(*json::find(got, "status"), "observedGeneration").value_or(-1), 1);
  // A pod whose labels stop matching is released.
  e.patch("/api/v1/namespaces/ns/pods/orphan", R"({"metadata":{"labels":{"app":"b"}}})");
  e.settle();
  ASSERT_TRUE(rc.syncNow("ns/rc").ok());
  e.settle();
  auto released = e.get("/api/v1/namespaces/ns/pods/orphan");
  const json::Value* refs = json::findPath(released, {"metadata", "ownerReferences"});
  EXPECT_TRUE(!refs || refs->Empty()) << json::serialize(released);
  ASSERT_TRUE(rc.syncNow("ns/rc").ok());
  e.settle();
  EXPECT_EQ(e.items("/api/v1/namespaces/ns/pods").size(), 3u);  // a replacement made
}

TEST(EndpointsSync, ReadyAndNotReadyPodsOfAService) {
  Env e;
  EndpointsController ec(e.fake, e.informers);
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create("/api/v1/namespaces/ns/services", R"({"metadata":{"name":"svc","namespace":"ns"},
    "spec":{"selector":{"app":"a"},"ports":[{"name":"http","port":80,"targetPort":"web","protocol":"TCP"}]}})");
  for (auto [name, ip, ready] : {std::tuple{"p1", "10.0.0.1", "True"}, std::tuple{"p2", "10.0.0.2", "False"}})
    e.create("/api/v1/namespaces/ns/pods",
             std::string(R"({"metadata":{"name":")") + name +
                 R"(","namespace":"ns","labels":{"app":"a"}},"spec":{"nodeName":"n1",
      "containers":[{"name":"c","image":"x","ports":[{"name":"web","containerPort":8080}]}]},
      "status":{"phase":"Running","podIP":")" +
                 ip + R"(","conditions":[{"type":"Ready","status":")" + ready + R"("}]}})");
  e.settle();
  ASSERT_TRUE(ec.syncNow("ns/svc").ok());
  auto ep = e.get("/api/v1/namespaces/ns/endpoints/svc");
  const json::Value& subset = (*json::find(ep, "subsets"))[0];
  EXPECT_EQ(json::getString(json::find(subset, "addresses")->GetArray()[0], "ip"), "10.0.0.1");
  EXPECT_EQ(json::getString(json::find(subset, "notReadyAddresses")->GetArray()[0], "ip"), "10.0.0.2");
  EXPECT_EQ(json::getInt(json::find(subset, "ports")->GetArray()[0], "port").value(), 8080);
}

namespace {

std::string podJson(const std::string& name, const std::string& node, const std::string& extra_meta = "",
                    const std::string& phase = "Running",
                    const std::string& created = "2026-01-01T00:00:00Z") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","creationTimestamp":")" + created + "\"" +
         extra_meta + R"(},"spec":{"nodeName":")" + node + R"(","containers":[{"name":"c","image":"x"}]},)" +
         R"("status":{"phase":")" + phase + R"("}})";
}

std::vector<std::string> podNames(Env& e) {
  std::vector<std::string> out;
  for (auto& p : e.items("/api/v1/namespaces/ns/pods"))
    out.emplace_back(json::getStringPath(p, {"metadata", "name"}));
  std::sort(out.begin(), out.end());
  return out;
}

PodGcOptions withClock(const clock::Clock& clk) {
  PodGcOptions o;
  o.clock = &clk;
  return o;
}

}  // namespace

TEST(PodGcSync, PodsOnADeletedNodeGoAfterTheQuarantine) {
  Env e;
  clock::FakeClock clk;
  PodGcController gc(e.fake, e.informers, withClock(clk));
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create("/api/v1/nodes", R"({"metadata":{"name":"here"}})");
  e.create("/api/v1/namespaces/ns/pods", podJson("kept", "here"));
  e.create("/api/v1/namespaces/ns/pods", podJson("orphan", "gone"));
  e.settle();
  ASSERT_TRUE(gc.syncNow("pass").ok());  // first seen missing: quarantined
  EXPECT_EQ(podNames(e), (std::vector<std::string>{"kept", "orphan"}));
  clk.advance(std::chrono::seconds(39));
  ASSERT_TRUE(gc.syncNow("pass").ok());
  EXPECT_EQ(podNames(e), (std::vector<std::string>{"kept", "orphan"}));
  clk.advance(std::chrono::seconds(2));
  e.fake.clearActions();
  ASSERT_TRUE(gc.syncNow("pass").ok());
  EXPECT_EQ(podNames(e), (std::vector<std::string>{"kept"}));
  // Confirmed with a live GET, failed with the DisruptionTarget condition, then forced out.
  auto gets = e.fake.actions("get");
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_EQ(gets[0].path, "/api/v1/nodes/gone");
  auto patches = e.fake.actions("patch");
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].path, "/api/v1/namespaces/ns/pods/orphan/status");
  auto patch = doc(patches[0].body);
  EXPECT_EQ(json::getStringPath(patch, {"status", "phase"}), "Failed");
  const json::Value& cond = (*json::findPath(patch, {"status", "conditions"}))[0];
  EXPECT_EQ(json::getString(cond, "type"), "DisruptionTarget");
  EXPECT_EQ(json::getString(cond, "reason"), "DeletionByPodGC");
  EXPECT_EQ(json::getString(cond, "message"), "PodGC: node no longer exists");
  auto deletes = e.fake.actions("delete");
  ASSERT_EQ(deletes.size(), 1u);
  EXPECT_EQ(json::getInt(doc(deletes[0].body), "gracePeriodSeconds").value_or(-1), 0);
}

TEST(PodGcSync, ANodeThatComesBackIsNotCollected) {
  Env e;
  clock::FakeClock clk;
  PodGcController gc(e.fake, e.informers, withClock(clk));
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create("/api/v1/namespaces/ns/pods", podJson("p", "late"));
  e.settle();
  ASSERT_TRUE(gc.syncNow("pass").ok());
  e.create("/api/v1/nodes", R"({"metadata":{"name":"late"}})");
  e.settle();
  clk.advance(std::chrono::minutes(5));
  ASSERT_TRUE(gc.syncNow("pass").ok());
  EXPECT_EQ(podNames(e), (std::vector<std::string>{"p"}));
}

TEST(PodGcSync, TerminatedBeyondTheThresholdOldestFirstAndUnscheduledTerminating) {
  Env e;
  PodGcOptions o;
  o.terminated_threshold = 2;
  PodGcController gc(e.fake, e.informers, o);
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create("/api/v1/nodes",
           R"({"metadata":{"name":"n"},"status":{"conditions":[{"type":"Ready","status":"True"}]}})");
  for (int i = 1; i <= 4; ++i)
    e.create("/api/v1/namespaces/ns/pods", podJson("done" + std::to_string(i), "n", "", "Succeeded",
                                                   "2026-01-0" + std::to_string(i) + "T00:00:00Z"));
  e.create("/api/v1/namespaces/ns/pods", podJson("running", "n"));
  e.create("/api/v1/namespaces/ns/pods",
           podJson("unbound", "", R"(,"deletionTimestamp":"2026-01-01T00:00:00Z")", "Pending"));
  e.settle();
  ASSERT_TRUE(gc.syncNow("pass").ok());
  EXPECT_EQ(podNames(e), (std::vector<std::string>{"done3", "done4", "running"}));
}

TEST(PodGcSync, TerminatingPodsOnAnOutOfServiceNode) {
  Env e;
  PodGcController gc(e.fake, e.informers, PodGcOptions{});
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create("/api/v1/nodes",
           R"({"metadata":{"name":"oos"},"spec":{"taints":[{"key":"node.kubernetes.io/out-of-service",
    "effect":"NoExecute"}]},"status":{"conditions":[{"type":"Ready","status":"False"}]}})");
  e.create("/api/v1/nodes",
           R"({"metadata":{"name":"down"},"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}})");
  const std::string deleting = R"(,"deletionTimestamp":"2026-01-01T00:00:00Z")";
  e.create("/api/v1/namespaces/ns/pods", podJson("on-oos", "oos", deleting));
  e.create("/api/v1/namespaces/ns/pods", podJson("on-down", "down", deleting));
  e.settle();
  ASSERT_TRUE(gc.syncNow("pass").ok());
  EXPECT_EQ(podNames(e), (std::vector<std::string>{"on-down"}));  // NotReady alone is not enough
}
