// The StatefulSet controller's sync against the fake API server: ordered creation that
// waits for each pod to be Running and Ready, stable identities, revisions, scale-down
// from the highest ordinal, and a rolling update from the highest ordinal down.
#include "controllers/statefulset/statefulset_controller.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "controller_env.h"
#include "controllers/statefulset/stateful_pod.h"

using namespace shepherd;
using namespace shepherd::controllers::statefulset;
using shepherd::testing::doc;
using shepherd::testing::Env;

namespace {

const char* kPods = "/api/v1/namespaces/ns/pods";
const char* kSets = "/apis/apps/v1/namespaces/ns/statefulsets";

const char* kWeb = R"({"metadata":{"name":"web","namespace":"ns","generation":1},
  "spec":{"replicas":3,"serviceName":"web","podManagementPolicy":"OrderedReady","revisionHistoryLimit":10,
  "selector":{"matchLabels":{"app":"web"}},"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}},
  "persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"},
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}})";

std::vector<std::string> podNames(Env& e) {
  std::vector<std::string> out;
  for (auto& p : e.items(kPods))
    if (!json::findPath(p, {"metadata", "deletionTimestamp"}))
      out.emplace_back(json::getStringPath(p, {"metadata", "name"}));
  std::sort(out.begin(), out.end());
  return out;
}

void ready(Env& e, const std::string& pod) {
  e.patch(std::string(kPods) + "/" + pod + "/status",
          R"({"status":{"phase":"Running","conditions":[{"type":"Ready",
    "status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})");
}

void sync(Env& e, StatefulSetController& sc) {
  ASSERT_TRUE(sc.syncNow("ns/web").ok());
  e.settle();
}

}  // namespace

TEST(StatefulPod, IdentityAndClaims) {
  auto set = doc(R"({"metadata":{"name":"db","namespace":"ns","uid":"u1"},"spec":{"serviceName":"db",
    "selector":{"matchLabels":{"app":"db"}},"volumeClaimTemplates":[{"metadata":{"name":"data"},
    "spec":{"accessModes":["ReadWriteOnce"]}}]}})");
  auto tmpl = doc(R"({"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"c","image":"x"}],
    "volumes":[{"name":"data","emptyDir":{}},{"name":"other","emptyDir":{}}]}})");
  auto pod = newPod(set, tmpl, "db-abc", 2);
  EXPECT_EQ(json::getStringPath(pod, {"metadata", "name"}), "db-2");
  EXPECT_EQ(json::getStringPath(pod, {"spec", "hostname"}), "db-2");
  EXPECT_EQ(json::getStringPath(pod, {"spec", "subdomain"}), "db");
  EXPECT_EQ(json::getStringPath(pod, {"metadata", "labels", kPodNameLabel}), "db-2");
  EXPECT_EQ(json::getStringPath(pod, {"metadata", "labels", kPodIndexLabel}), "2");
  EXPECT_EQ(json::getStringPath(pod, {"metadata", "labels", "controller-revision-hash"}), "db-abc");
  const json::Value& vols = *json::findPath(pod, {"spec", "volumes"});
  ASSERT_EQ(vols.Size(), 2u);  // the claim replaces the template's same-named volume, first
  EXPECT_EQ(json::getStringPath(vols[0], {"persistentVolumeClaim", "claimName"}), "data-db-2");
  EXPECT_EQ(json::getString(vols[1], "name"), "other");
  EXPECT_TRUE(identityMatches(set, pod));
  EXPECT_TRUE(storageMatches(set, pod));
  auto claims = claimsFor(set, 2);
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(claims[0].name, "data-db-2");
  EXPECT_EQ(json::getStringPath(claims[0].object, {"metadata", "labels", "app"}), "db");
  EXPECT_EQ(*ordinalOf(doc(R"({"metadata":{"name":"my-set-10"}})")), 10);
  EXPECT_FALSE(ordinalOf(doc(R"({"metadata":{"name":"my-set-x"}})")));
}

TEST(StatefulSetSync, OrderedCreationScaleDownAndRollingUpdate) {
  Env e;
  StatefulSetController sc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create(kSets, kWeb);
  e.settle();
  sync(e, sc);
  EXPECT_EQ(podNames(e), (std::vector<std::string>{"web-0"}));
  sync(e, sc);  // web-0 is not ready yet: nothing more
  EXPECT_EQ(podNames(e), (std::vector<std::string>{"web-0"}));
  ready(e, "web-0");
  e.settle();
  sync(e, sc);
  EXPECT_EQ(podNames(e), (std::vector<std::string>{"web-0", "web-1"}));
  ready(e, "web-1");
  e.settle();
  sync(e, sc);
  ready(e, "web-2");
  e.settle();
  sync(e, sc);
  auto set = e.get(std::string(kSets) + "/web");
  const json::Value& st = *json::find(set, "status");
  EXPECT_EQ(json::getInt(st, "replicas").value_or(-1), 3);
  EXPECT_EQ(json::getInt(st, "readyReplicas").value_or(-1), 3);
  std::string rev1(json::getString(st, "currentRevision"));
  EXPECT_EQ(json::getString(st, "updateRevision"), rev1);
  EXPECT_EQ(rev1.rfind("web-", 0), 0u);
  for (auto& p : e.items(kPods))
    EXPECT_EQ(json::getStringPath(p, {"metadata", "labels", "controller-revision-hash"}), rev1);
  // A new image: pods go from the highest ordinal down, one at a time.
  e.patch(
      std::string(kSets) + "/web",
      R"({"metadata":{"generation":2},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}}})");
  e.settle();
  sync(e, sc);
  EXPECT_EQ(podNames(e), (std::vector<std::string>{"web-0", "web-1"}));  // web-2 deleted
  auto set2 = e.get(std::string(kSets) + "/web");
  std::string rev2(json::getStringPath(set2, {"status", "updateRevision"}));
  EXPECT_NE(rev2, rev1);
  sync(e, sc);  // web-2 comes back at the update revision
  auto web2 = e.get(std::string(kPods) + "/web-2");
  EXPECT_EQ(json::getStringPath(web2, {"metadata", "labels", "controller-revision-hash"}), rev2);
  EXPECT_EQ(json::getString((*json::findPath(web2, {"spec", "containers"}))[0], "image"), "busybox:1.36");
  // Scale to 1: the highest ordinal goes first, one per sync.
  ready(e, "web-2");
  e.patch(std::string(kSets) + "/web", R"({"metadata":{"generation":3},"spec":{"replicas":1}})");
  e.settle();
  sync(e, sc);
  EXPECT_EQ(podNames(e), (std::vector<std::string>{"web-0", "web-1"}));
}
