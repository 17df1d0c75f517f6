// Quota evaluation (meta/quota), as upstream's evaluators: what pods, services, claims and
// other objects charge, which pods scoped quotas match, the "must specify" rule, and how
// amounts print.
#include "meta/quota.h"

#include <gtest/gtest.h>

using namespace shepherd;
using namespace shepherd::meta::quota;

namespace {

json::Document parse(const std::string& s) {
  json::Document d;
  EXPECT_TRUE(json::parse(s, d).ok()) << s;
  return d;
}

std::string usageOf(const Resource& r, const std::string& obj) {
  return listText(usage(r, parse(obj), 1e9));
}

const Resource kPods{"", "pods"};

}  // namespace

TEST(Quota, PodsChargeCountsRequestsAndLimits) {
  EXPECT_EQ(usageOf(kPods, R"({"spec":{"containers":[
      {"name":"a","resources":{"requests":{"cpu":"250m","memory":"64Mi"},"limits":{"cpu":"500m"}}},
      {"name":"b","resources":{"limits":{"memory":"128Mi","example.com/gpu":"1"}}}],
      "initContainers":[{"name":"i","resources":{"requests":{"cpu":"1"}}}]}})"),
            "count/pods=1,cpu=1,limits.cpu=500m,limits.memory=128Mi,memory=192Mi,pods=1,requests.cpu=1,"
            "requests.example.com/gpu=1,requests.memory=192Mi");
  // Finished pods, and pods past their deletion grace, still count as objects only.
  EXPECT_EQ(usageOf(kPods, R"({"spec":{"containers":[]},"status":{"phase":"Succeeded"}})"), "count/pods=1");
  EXPECT_EQ(
      usageOf(kPods,
              R"({"metadata":{"deletionTimestamp":"2001-01-01T00:00:00Z","deletionGracePeriodSeconds":30},
                              "spec":{"containers":[]}})"),
      "count/pods=1");
}

TEST(Quota, ServicesClaimsAndObjectCounts) {
  EXPECT_EQ(usageOf({"", "services"}, R"({"spec":{"type":"NodePort","ports":[{"port":1},{"port":2}]}})"),
            "count/services=1,services=1,services.loadbalancers=0,services.nodeports=2");
  EXPECT_EQ(
      usageOf({"", "persistentvolumeclaims"},
              R"({"spec":{"storageClassName":"gold","resources":{"requests":{"storage":"1Gi"}}}})"),
      "count/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,"
      "gold.storageclass.storage.k8s.io/requests.storage=1Gi,persistentvolumeclaims=1,requests.storage=1Gi");
  EXPECT_EQ(usageOf({"", "configmaps"}, "{}"), "configmaps=1,count/configmaps=1");
  EXPECT_EQ(usageOf({"apps", "deployments"}, "{}"), "count/deployments.apps=1");
  EXPECT_TRUE(matchesResource({"apps", "deployments"}, "count/deployments.apps"));
  EXPECT_FALSE(matchesResource({"apps", "deployments"}, "pods"));
  EXPECT_TRUE(matchesResource(kPods, "requests.example.com/gpu"));
  EXPECT_TRUE(
      matchesResource({"", "persistentvolumeclaims"}, "gold.storageclass.storage.k8s.io/requests.storage"));
}

TEST(Quota, ScopesMatchOnlyPodsOfTheirKind) {
  auto quota = [](const std::string& spec) { return parse(R"({"spec":)" + spec + "}"); };
  auto bestEffort = parse(R"({"spec":{"containers":[{"name":"c"}]}})");
  auto burstable = parse(R"({"spec":{"activeDeadlineSeconds":10,"priorityClassName":"high",
      "containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}})");
  auto be = quota(R"({"scopes":["BestEffort"]})");
  EXPECT_TRUE(matchesScopes(kPods, be, bestEffort));
  EXPECT_FALSE(matchesScopes(kPods, be, burstable));
  auto term = quota(R"({"scopes":["Terminating","NotBestEffort"]})");
  EXPECT_TRUE(matchesScopes(kPods, term, burstable));
  EXPECT_FALSE(matchesScopes(kPods, term, bestEffort));
  auto pc = quota(
      R"({"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass","operator":"In","values":["high"]}]}})");
  EXPECT_TRUE(matchesScopes(kPods, pc, burstable));
  EXPECT_FALSE(matchesScopes(kPods, pc, bestEffort));
  auto notIn = quota(
      R"({"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass","operator":"NotIn","values":["high"]}]}})");
  EXPECT_TRUE(matchesScopes(kPods, notIn, bestEffort));
  EXPECT_FALSE(matchesScopes({"", "services"}, be, parse("{}")));
  EXPECT_TRUE(matchesScopes({"", "services"}, quota(R"({"hard":{"services":"1"}})"), parse("{}")));
}

TEST(Quota, PodsMustSetWhatAQuotaLimits) {
  auto pod = parse(R"({"spec":{"containers":[{"name":"b","resources":{"limits":{"cpu":"1"}}},{"name":"a"}],
      "initContainers":[{"name":"i"}]}})");
  EXPECT_EQ(podConstraints(pod, {"limits.cpu", "requests.memory", "pods", "requests.storage"}),
            "must specify limits.cpu for: a,i; requests.memory for: a,b,i");
  EXPECT_EQ(podConstraints(pod, {"pods"}), "");
}

TEST(Quota, AmountsPrintAsQuantities) {
  EXPECT_EQ(format({1.5, false}), "1500m");
  EXPECT_EQ(format({2000, false}), "2k");
  EXPECT_EQ(format({3 * 1024.0 * 1024 * 1024, true}), "3Gi");
  EXPECT_EQ(format({1536 * 1024.0 * 1024, true}), "1536Mi");
  EXPECT_EQ(format({0, true}), "0");
  auto m = parse(R"({"b":"100m","a":"1Gi"})");
  EXPECT_EQ(listText(parseList(&m)), "a=1Gi,b=100m");
}
