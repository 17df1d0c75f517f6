// The disruption controller's sync against the fake API server: a budget's counts from its
// pods and their controllers' scale, evictions it still expects, the fail-safe when it
// cannot count, and the reset of a stale DisruptionTarget condition. Also the eviction
// subresource's decisions (apis/kinds/pod_eviction) and the budget's validation.
#include "controllers/disruption/disruption_controller.h"

#include <gtest/gtest.h>

#include "apis/kinds/kinds.h"
#include "apis/kinds/pod_eviction.h"
#include "common/clock.h"
#include "controller_env.h"
#include "controllers/disruption/budget_status.h"

using namespace shepherd;
using namespace shepherd::controllers::disruption;
using shepherd::testing::doc;
using shepherd::testing::Env;

namespace {

const char* kPods = "/api/v1/namespaces/ns/pods";
const char* kBudgets = "/apis/policy/v1/namespaces/ns/poddisruptionbudgets";
const char* kReplicaSets = "/apis/apps/v1/namespaces/ns/replicasets";
const char* kDeployments = "/apis/apps/v1/namespaces/ns/deployments";

// A Ready (or not) pod labelled app=web, controlled by `owner` (kind and UID) if given.
std::string pod(const std::string& name, const std::string& owner_kind, const std::string& owner_uid,
                bool ready) {
  std::string refs;
  if (!owner_kind.empty())
    refs = R"(,"ownerReferences":[{"apiVersion":")" +
           std::string(owner_kind == "ReplicaSet" ? "apps/v1" : "x.io/v1") + R"(","kind":")" + owner_kind +
           R"(","name":"rs","uid":")" + owner_uid + R"(","controller":true}])";
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","labels":{"app":"web"})" + refs +
         R"(},"spec":{"containers":[{"name":"c","image":"x"}]},"status":{"phase":"Running","conditions":[{"type":"Ready","status":")" +
         (ready ? "True" : "False") + R"(","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})";
}

std::string uidOf(const json::Document& d) {
  return std::string(json::getStringPath(d, {"metadata", "uid"}));
}

std::string budget(const std::string& name, const std::string& spec) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","generation":1},"spec":)" + spec + "}";
}

const json::Value& statusOf(const json::Document& d) {
  return *json::find(d, "status");
}

const json::Value* condition(const json::Document& d) {
  const json::Value* conds = json::findPath(d, {"status", "conditions"});
  if (!conds) return nullptr;
  for (auto& c : conds->GetArray())
    if (json::getString(c, "type") == "DisruptionAllowed") return &c;
  return nullptr;
}

struct Fixture {
  Env e;
  clock::FakeClock clk;
  DisruptionController dc{e.fake, e.informers, e.events, clk};
  Env::StopGuard stop = e.stopBeforeController();
  Fixture() { e.start(); }
  void sync(const std::string& key, std::chrono::milliseconds* requeue = nullptr) {
    e.settle();
    auto r = dc.syncNow(key);
    ASSERT_TRUE(r.ok()) << r.error().message;
    if (requeue) *requeue = r.value().requeue_after;
    e.settle();
  }
};

}  // namespace

TEST(DisruptionSync, IntegerMinAvailableCountsTheSelectedPods) {
  Fixture f;
  auto rs = f.e.create(kReplicaSets, R"({"metadata":{"name":"rs","namespace":"ns"},"spec":{"replicas":3}})");
  for (int i = 0; i < 3; ++i)
    f.e.create(kPods, pod("p" + std::to_string(i), "ReplicaSet", uidOf(rs), i != 2));
  f.e.create(kBudgets, budget("b", R"({"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}})"));
  f.sync("pdb/ns/b");
  auto b = f.e.get(std::string(kBudgets) + "/b");
  const json::Value& st = statusOf(b);
  EXPECT_EQ(json::getInt(st, "expectedPods").value_or(-1), 3);
  EXPECT_EQ(json::getInt(st, "desiredHealthy").value_or(-1), 1);
  EXPECT_EQ(json::getInt(st, "currentHealthy").value_or(-1), 2);
  EXPECT_EQ(json::getInt(st, "disruptionsAllowed").value_or(-1), 1);
  EXPECT_EQ(json::getInt(st, "observedGeneration").value_or(-1), 1);
  ASSERT_NE(condition(b), nullptr);
  EXPECT_EQ(json::getString(*condition(b), "status"), "True");
  EXPECT_EQ(json::getString(*condition(b), "reason"), "SufficientPods");
  // Nothing changed: nothing is written.
  std::string rv(json::getStringPath(b, {"metadata", "resourceVersion"}));
  f.sync("pdb/ns/b");
  EXPECT_EQ(json::getStringPath(f.e.get(std::string(kBudgets) + "/b"), {"metadata", "resourceVersion"}), rv);
}

TEST(DisruptionSync, PercentagesCountTheControllersScale) {
  Fixture f;
  auto d = f.e.create(kDeployments, R"({"metadata":{"name":"d","namespace":"ns"},"spec":{"replicas":4}})");
  auto rs = f.e.create(kReplicaSets, R"({"metadata":{"name":"rs","namespace":"ns","ownerReferences":[
    {"apiVersion":"apps/v1","kind":"Deployment","name":"d","uid":")" +
                                         uidOf(d) + R"(","controller":true}]},"spec":{"replicas":4}})");
  for (int i = 0; i < 3; ++i) f.e.create(kPods, pod("p" + std::to_string(i), "ReplicaSet", uidOf(rs), true));
  f.e.create(kBudgets, budget("b", R"({"maxUnavailable":"50%","selector":{"matchLabels":{"app":"web"}}})"));
  f.sync("pdb/ns/b");
  auto b = f.e.get(std::string(kBudgets) + "/b");
  EXPECT_EQ(json::getInt(statusOf(b), "expectedPods").value_or(-1), 4);    // the Deployment's replicas
  EXPECT_EQ(json::getInt(statusOf(b), "desiredHealthy").value_or(-1), 2);  // 4 - ceil(50% of 4)
  EXPECT_EQ(json::getInt(statusOf(b), "disruptionsAllowed").value_or(-1), 1);
}

TEST(DisruptionSync, AnUnknownControllerFailsSafe) {
  Fixture f;
  f.e.create(kPods, pod("p0", "Widget", "w-uid", true));
  f.e.create(kBudgets, budget("b", R"({"minAvailable":"50%","selector":{"matchLabels":{"app":"web"}}})"));
  f.sync("pdb/ns/b");
  auto b = f.e.get(std::string(kBudgets) + "/b");
  EXPECT_EQ(json::getInt(statusOf(b), "disruptionsAllowed").value_or(-1), 0);
  ASSERT_NE(condition(b), nullptr);
  EXPECT_EQ(json::getString(*condition(b), "status"), "False");
  EXPECT_EQ(json::getString(*condition(b), "reason"), "SyncFailed");
  EXPECT_NE(json::getString(*condition(b), "message").find("x.io/v1"), std::string_view::npos);
}

TEST(DisruptionSync, ExpectedEvictionsAreNotHealthyUntilTheyExpire) {
  Fixture f;
  auto rs = f.e.create(kReplicaSets, R"({"metadata":{"name":"rs","namespace":"ns"},"spec":{"replicas":2}})");
  f.e.create(kPods, pod("p0", "ReplicaSet", uidOf(rs), true));
  f.e.create(kPods, pod("p1", "ReplicaSet", uidOf(rs), true));
  f.e.create(kBudgets, budget("b", R"({"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}})"));
  std::string evicted = clock::rfc3339(f.clk.now() - std::chrono::seconds(30));
  f.e.patch(std::string(kBudgets) + "/b/status",
            R"({"status":{"disruptedPods":{"p1":")" + evicted + R"("}}})");
  std::chrono::milliseconds requeue{0};
  f.sync("pdb/ns/b", &requeue);
  auto b = f.e.get(std::string(kBudgets) + "/b");
  EXPECT_EQ(json::getInt(statusOf(b), "currentHealthy").value_or(-1), 1);
  EXPECT_EQ(json::getInt(statusOf(b), "disruptionsAllowed").value_or(-1), 0);
  EXPECT_EQ(json::getStringPath(b, {"status", "disruptedPods", "p1"}), evicted);
  EXPECT_GT(requeue.count(), 80000);  // checked again when the entry expires (2 min after)
  EXPECT_LE(requeue.count(), 90000);
  f.clk.advance(std::chrono::minutes(2));
  f.sync("pdb/ns/b");
  b = f.e.get(std::string(kBudgets) + "/b");
  EXPECT_EQ(json::findPath(b, {"status", "disruptedPods"}), nullptr);
  EXPECT_EQ(json::getInt(statusOf(b), "currentHealthy").value_or(-1), 2);
  EXPECT_EQ(json::getInt(statusOf(b), "disruptionsAllowed").value_or(-1), 1);
}

TEST(DisruptionSync, AStaleDisruptionTargetConditionIsReset) {
  Fixture f;
  std::string since = clock::rfc3339(f.clk.now() - std::chrono::minutes(3));
  f.e.create(kPods,
             R"({"metadata":{"name":"p0","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"x"}]},
    "status":{"phase":"Running","conditions":[{"type":"DisruptionTarget","status":"True","reason":"EvictionByEvictionAPI",
    "message":"Eviction API: evicting","lastTransitionTime":")" +
                 since + R"("}]}})");
  f.sync("pod/ns/p0");
  auto p = f.e.get(std::string(kPods) + "/p0");
  const json::Value& c = (*json::findPath(p, {"status", "conditions"}))[0];
  EXPECT_EQ(json::getString(c, "status"), "False");
  EXPECT_EQ(json::find(c, "reason"), nullptr);
}

TEST(PodEviction, BudgetChecksAndDecrement) {
  std::string now = "2026-01-01T00:00:00Z";
  auto b = doc(R"({"metadata":{"name":"b","generation":2},"spec":{},"status":{"observedGeneration":1,
    "disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2}})");
  auto busy = apis::kinds::takeDisruption(b, "p0", now, false);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().code, 429);
  EXPECT_EQ(busy.error().causes[0].message,
            "The disruption budget b is still being processed by the server.");
  json::set(*json::find(b, "status"), "observedGeneration", json::Value(2), b.GetAllocator());
  ASSERT_TRUE(apis::kinds::takeDisruption(b, "p0", now, false).ok());
  EXPECT_EQ(json::getInt(*json::find(b, "status"), "disruptionsAllowed").value_or(-1), 0);
  EXPECT_EQ(json::getStringPath(b, {"status", "disruptedPods", "p0"}), now);
  EXPECT_EQ(json::getString((*json::findPath(b, {"status", "conditions"}))[0], "reason"), "InsufficientPods");
  auto none = apis::kinds::takeDisruption(b, "p1", now, false);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, 429);
  EXPECT_EQ(none.error().message, "Cannot evict pod as it would violate the pod's disruption budget.");
  EXPECT_EQ(none.error().causes[0].message,
            "The disruption budget b needs 1 healthy pods and has 2 currently");
}

TEST(PodEviction, WhichPodsAskWhichBudgets) {
  auto running = doc(R"({"metadata":{"name":"p","labels":{"app":"web"}},"status":{"phase":"Running"}})");
  auto pending = doc(R"({"metadata":{"name":"p"},"status":{"phase":"Pending"}})");
  EXPECT_FALSE(apis::kinds::evictionIgnoresBudgets(running));
  EXPECT_TRUE(apis::kinds::evictionIgnoresBudgets(pending));
  auto byLabel = doc(R"({"metadata":{"name":"a"},"spec":{"selector":{"matchLabels":{"app":"web"}}}})");
  auto empty = doc(R"({"metadata":{"name":"b"},"spec":{"selector":{}}})");
  auto unset = doc(R"({"metadata":{"name":"c"},"spec":{}})");
  auto guarding = apis::kinds::budgetsGuarding(running, {&byLabel, &empty, &unset});
  ASSERT_EQ(guarding.size(), 1u);  // an empty or unset selector guards nothing here
  EXPECT_EQ(guarding[0], &byLabel);
  // Not Ready, and the budget is healthy without it: it may go without a disruption.
  auto healthy = doc(R"({"spec":{},"status":{"currentHealthy":2,"desiredHealthy":2}})");
  EXPECT_TRUE(apis::kinds::unreadyPodMayGo(running, healthy));
  auto always = doc(
      R"({"spec":{"unhealthyPodEvictionPolicy":"AlwaysAllow"},"status":{"currentHealthy":0,"desiredHealthy":2}})");
  EXPECT_TRUE(apis::kinds::unreadyPodMayGo(running, always));
  auto short_ = doc(R"({"spec":{},"status":{"currentHealthy":1,"desiredHealthy":2}})");
  EXPECT_FALSE(apis::kinds::unreadyPodMayGo(running, short_));
}

TEST(PodDisruptionBudgetStrategy, Validation) {
  auto s = apis::kinds::podDisruptionBudgetStrategy();
  auto check = [&](const std::string& spec) {
    apis::FieldErrors errs;
    s->validate(doc(R"({"metadata":{"name":"b"},"spec":)" + spec + "}"), errs);
    std::string out;
    for (auto& c : errs.causes()) out += c.field + ": " + c.message + "\n";
    return out;
  };
  EXPECT_EQ(check(R"({"minAvailable":1,"selector":{}})"), "");
  EXPECT_EQ(check(R"({"minAvailable":1,"maxUnavailable":1})"),
            "spec: Invalid value: minAvailable and maxUnavailable cannot be both set\n");
  EXPECT_NE(check(R"({"maxUnavailable":"120%"})").find("must not be greater than 100%"), std::string::npos);
  EXPECT_NE(check(R"({"minAvailable":-1})").find("spec.minAvailable"), std::string::npos);
  EXPECT_NE(
      check(R"({"unhealthyPodEvictionPolicy":"Sometimes"})")
          .find("Unsupported value: \"Sometimes\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\""),
      std::string::npos);
}
