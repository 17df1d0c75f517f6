// The DaemonSet controller's sync against the fake API server: one pinned pod per node
// that fits (taints, node selector), its ControllerRevision, status counts, and a rolling
// update within maxUnavailable.
#include "controllers/daemonset/daemonset_controller.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "controller_env.h"
#include "controllers/daemonset/node_fit.h"
#include "controllers/manager/revision_history.h"

using namespace shepherd;
using namespace shepherd::controllers::daemon;
using shepherd::testing::doc;
using shepherd::testing::Env;

namespace {

const char* kPods = "/api/v1/namespaces/ns/pods";
const char* kDaemonSets = "/apis/apps/v1/namespaces/ns/daemonsets";

std::string node(const std::string& name, const std::string& extra_spec = "",
                 const std::string& labels = "{}") {
  return R"({"metadata":{"name":")" + name + R"(","labels":)" + labels + R"(},"spec":{)" + extra_spec + "}}";
}

const char* kDaemon = R"({"metadata":{"name":"agent","namespace":"ns","generation":1,
  "annotations":{"deprecated.daemonset.template.generation":"1"}},
  "spec":{"selector":{"matchLabels":{"app":"agent"}},"revisionHistoryLimit":10,
  "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1,"maxSurge":0}},
  "template":{"metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}})";

std::vector<std::string> targets(Env& e) {
  std::vector<std::string> out;
  for (auto& p : e.items(kPods))
    if (!json::findPath(p, {"metadata", "deletionTimestamp"})) out.push_back(targetNode(p));
  std::sort(out.begin(), out.end());
  return out;
}

void makeReady(Env& e) {
  for (auto& p : e.items(kPods))
    e.patch(std::string(kPods) + "/" + std::string(json::getStringPath(p, {"metadata", "name"})) + "/status",
            R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True",
            "lastTransitionTime":"2026-01-01T00:00:00Z"}]}})");
}

}  // namespace

TEST(DaemonNodeFit, TaintsSelectorsAndTheDefaultTolerations) {
  auto ds = doc(kDaemon);
  EXPECT_TRUE(nodeShouldRunDaemonPod(doc(node("plain")), ds).should_run);
  // Unschedulable and not-ready taints are tolerated by every daemon pod.
  auto tolerated =
      doc(node("cordoned", R"("taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"},
    {"key":"node.kubernetes.io/not-ready","effect":"NoExecute"}])"));
  EXPECT_TRUE(nodeShouldRunDaemonPod(tolerated, ds).should_run);
  // Another NoSchedule taint: no new pod, but one already there may stay.
  Fit f = nodeShouldRunDaemonPod(doc(node("gpu", R"("taints":[{"key":"gpu","effect":"NoSchedule"}])")), ds);
  EXPECT_FALSE(f.should_run);
  EXPECT_TRUE(f.should_continue);
  f = nodeShouldRunDaemonPod(doc(node("drain", R"("taints":[{"key":"gone","effect":"NoExecute"}])")), ds);
  EXPECT_FALSE(f.should_run);
  EXPECT_FALSE(f.should_continue);
  auto selective = doc(kDaemon);
  json::set(*json::findPath(selective, {"spec", "template", "spec"}), "nodeSelector",
            json::Value(rapidjson::kObjectType), selective.GetAllocator());
  json::setString(*json::findPath(selective, {"spec", "template", "spec", "nodeSelector"}), "role", "edge",
                  selective.GetAllocator());
  EXPECT_FALSE(nodeShouldRunDaemonPod(doc(node("plain")), selective).should_run);
  EXPECT_TRUE(nodeShouldRunDaemonPod(doc(node("edge", "", R"({"role":"edge"})")), selective).should_run);
}

TEST(RevisionHistory, DataIsTheTemplateAsAGoClientWritesIt) {
  // A Go client reading the DaemonSet and re-encoding its template must get these bytes
  // (the conformance tests compare them): keys sorted, creationTimestamp null, resources {}.
  auto ds = doc(R"({"spec":{"template":{"metadata":{"labels":{"b":"2","a":"<1>"}},
    "spec":{"containers":[{"name":"c","image":"busybox"}]}}}})");
  EXPECT_EQ(controllers::revisionData(ds),
            R"({"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,)"
            R"("labels":{"a":"\u003c1\u003e","b":"2"}},"spec":{"containers":[{"image":"busybox","name":"c",)"
            R"("resources":{}}]}}}})");
}

TEST(DaemonSetSync, OnePinnedPodPerNodeWithItsRevision) {
  Env e;
  DaemonSetController dc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create("/api/v1/nodes", node("n1"));
  e.create("/api/v1/nodes", node("n2"));
  e.create("/api/v1/nodes", node("tainted", R"("taints":[{"key":"dedicated","effect":"NoSchedule"}])"));
  e.create(kDaemonSets, kDaemon);
  e.settle();
  ASSERT_TRUE(dc.syncNow("ns/agent").ok());
  e.settle();
  EXPECT_EQ(targets(e), (std::vector<std::string>{"n1", "n2"}));
  auto revs = e.items("/apis/apps/v1/namespaces/ns/controllerrevisions");
  ASSERT_EQ(revs.size(), 1u);
  std::string hash(json::getStringPath(revs[0], {"metadata", "labels", "controller-revision-hash"}));
  EXPECT_FALSE(hash.empty());
  EXPECT_EQ(json::getInt(revs[0], "revision").value_or(0), 1);
  for (auto& p : e.items(kPods)) {
    EXPECT_EQ(json::getStringPath(p, {"metadata", "labels", "controller-revision-hash"}), hash);
    EXPECT_EQ(json::getStringPath(p, {"metadata", "labels", "pod-template-generation"}), "1");
    EXPECT_TRUE(json::getStringPath(p, {"spec", "nodeName"}).empty());  // the scheduler binds it
    bool unschedulable = false;
    for (auto& t : json::findPath(p, {"spec", "tolerations"})->GetArray())
      unschedulable = unschedulable || json::getString(t, "key") == "node.kubernetes.io/unschedulable";
    EXPECT_TRUE(unschedulable);
  }
  makeReady(e);
  e.settle();
  ASSERT_TRUE(dc.syncNow("ns/agent").ok());
  auto got = e.get(std::string(kDaemonSets) + "/agent");
  const json::Value& st = *json::find(got, "status");
  EXPECT_EQ(json::getInt(st, "desiredNumberScheduled").value_or(-1), 2);
  EXPECT_EQ(json::getInt(st, "currentNumberScheduled").value_or(-1), 2);
  EXPECT_EQ(json::getInt(st, "numberReady").value_or(-1), 2);
  EXPECT_EQ(json::getInt(st, "numberAvailable").value_or(-1), 2);
  EXPECT_EQ(json::getInt(st, "updatedNumberScheduled").value_or(-1), 2);
  EXPECT_EQ(json::getInt(st, "numberMisscheduled").value_or(-1), 0);
  EXPECT_EQ(json::getInt(st, "observedGeneration").value_or(-1), 1);
  // Settled: another sync creates and deletes nothing.
  e.settle();
  e.fake.clearActions();
  ASSERT_TRUE(dc.syncNow("ns/agent").ok());
  for (auto& a : e.fake.actions("create")) EXPECT_NE(a.path, kPods);
  EXPECT_TRUE(e.fake.actions("delete").empty());
}

TEST(DaemonSetSync, RollingUpdateReplacesOneNodeAtATime) {
  Env e;
  DaemonSetController dc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  for (const char* n : {"n1", "n2", "n3"}) e.create("/api/v1/nodes", node(n));
  e.create(kDaemonSets, kDaemon);
  e.settle();
  ASSERT_TRUE(dc.syncNow("ns/agent").ok());
  e.settle();
  makeReady(e);
  e.settle();
  // A new image: a new revision, and one old pod at a time goes (maxUnavailable 1).
  e.patch(std::string(kDaemonSets) + "/agent",
          R"({"metadata":{"generation":2,"annotations":{"deprecated.daemonset.template.generation":"2"}},
          "spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}}})");
  e.settle();
  e.fake.clearActions();
  ASSERT_TRUE(dc.syncNow("ns/agent").ok());
  e.settle();
  EXPECT_EQ(e.fake.actions("delete").size(), 1u);
  EXPECT_EQ(e.items("/apis/apps/v1/namespaces/ns/controllerrevisions").size(), 2u);
  // The node that lost its pod gets a new one on the next sync.
  e.fake.clearActions();
  ASSERT_TRUE(dc.syncNow("ns/agent").ok());
  e.settle();
  std::vector<client::FakeClient::Action> creates;
  for (auto& a : e.fake.actions("create"))
    if (a.path == kPods) creates.push_back(a);
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(json::getStringPath(doc(creates[0].body), {"metadata", "labels", "pod-template-generation"}),
            "2");
}
