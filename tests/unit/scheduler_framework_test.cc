#include <gtest/gtest.h>

#include "scheduler/framework.h"
#include "scheduler/scheduling_queue.h"

using namespace shepherd;
using namespace shepherd::scheduler;

namespace {
json::Document doc(const std::string& s) {
  json::Document d;
  EXPECT_TRUE(json::parse(s, d).ok()) << s;
  return d;
}
NodeInfo node(const std::string& name, const std::string& cpu, const std::string& mem, bool ready = true,
              const std::string& extra = "") {
  auto d = doc(R"({"metadata":{"name":")" + name + R"(","labels":{"zone":"a","disk":"ssd"}},"spec":{)" +
               extra + R"(},"status":{"allocatable":{"cpu":")" + cpu + R"(","memory":")" + mem +
               R"(","pods":"110"},"conditions":[{"type":"Ready","status":")" + (ready ? "True" : "False") +
               R"("}]}})");
  return parseNode(d);
}
PodInfo pod(const std::string& spec) {
  auto d = doc(R"({"metadata":{"name":"p","namespace":"default"},"spec":)" + spec + "}");
  return parsePod(d);
}
}  // namespace

TEST(SchedulerFramework, ParsesRequestsIncludingInitContainers) {
  auto p = pod(R"({"containers":[{"name":"a","resources":{"requests":{"cpu":"250m","memory":"64Mi"}}},
      {"name":"b","resources":{"requests":{"cpu":"0.25"}}}],
      "initContainers":[{"name":"i","resources":{"requests":{"cpu":"2"}}}]})");
  EXPECT_EQ(p.requests.milli_cpu, 2000);  // the init container is larger than the sum
  EXPECT_EQ(p.requests.memory, 64 * 1024 * 1024);
  EXPECT_EQ(p.requests.pods, 1);
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
}

TEST(SchedulerFramework, SidecarsCountWithTheContainersAndBesideLaterInitContainers) {
  // Upstream's PodRequests: sidecars add to the containers' sum; a regular init container
  // runs beside the sidecars started before it.
  auto p = pod(R"({"containers":[{"name":"a","resources":{"requests":{"cpu":"1","memory":"100Mi"}}}],
      "initContainers":[
        {"name":"s","restartPolicy":"Always","resources":{"requests":{"cpu":"500m","memory":"50Mi"}}},
        {"name":"i","resources":{"requests":{"cpu":"1200m","memory":"10Mi"}}}]})");
  EXPECT_EQ(p.requests.milli_cpu, 1700);            // init peak: 500m + 1200m > 1 + 500m
  EXPECT_EQ(p.requests.memory, 150 * 1024 * 1024);  // containers and sidecar: 100Mi + 50Mi
  auto q = pod(R"({"containers":[{"name":"a","resources":{"requests":{"cpu":"1"}}}],
      "initContainers":[{"name":"i","resources":{"requests":{"cpu":"300m"}}},
        {"name":"s","restartPolicy":"Always","resources":{"requests":{"cpu":"500m"}}}]})");
  EXPECT_EQ(q.requests.milli_cpu, 1500);  // a sidecar after the init container: 1 + 500m
}

TEST(SchedulerFramework, FiltersWithUpstreamReasons) {
  NodeInfo n = node("n1", "1", "1Gi");
  EXPECT_TRUE(
      filter(pod(R"({"containers":[{"name":"a","resources":{"requests":{"cpu":"500m"}}}]})"), n).empty());
  EXPECT_EQ(filter(pod(R"({"containers":[{"name":"a","resources":{"requests":{"cpu":"2"}}}]})"), n),
            std::vector<std::string>{"Insufficient cpu"});
  EXPECT_EQ(filter(pod(R"({"nodeSelector":{"zone":"b"},"containers":[{"name":"a"}]})"), n),
            std::vector<std::string>{"node(s) didn't match Pod's node affinity/selector"});
  auto affinity = pod(
      R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
      {"matchExpressions":[{"key":"disk","operator":"In","values":["hdd"]}]},
      {"matchExpressions":[{"key":"zone","operator":"Exists"}]}]}}},"containers":[{"name":"a"}]})");
  EXPECT_TRUE(filter(affinity, n).empty());  // terms are ORed
  NodeInfo notReady = node("n2", "1", "1Gi", false);
  EXPECT_EQ(filter(pod(R"({"containers":[{"name":"a"}]})"), notReady),
            std::vector<std::string>{"node(s) were not ready"});
  NodeInfo tainted =
      node("n3", "1", "1Gi", true, R"("taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}])");
  EXPECT_EQ(filter(pod(R"({"containers":[{"name":"a"}]})"), tainted),
            std::vector<std::string>{"node(s) had untolerated taint {dedicated: gpu}"});
  EXPECT_TRUE(
      filter(
          pod(R"({"tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"}],
                            "containers":[{"name":"a"}]})"),
          tainted)
          .empty());
  NodeInfo cordoned = node("n4", "1", "1Gi", true, R"("unschedulable":true)");
  EXPECT_EQ(filter(pod(R"({"containers":[{"name":"a"}]})"), cordoned),
            std::vector<std::string>{"node(s) were unschedulable"});
  NodeInfo ported = node("n5", "1", "1Gi");
  ported.used_ports.insert(HostPort{"TCP", "0.0.0.0", 8080});
  EXPECT_EQ(
      filter(pod(R"({"containers":[{"name":"a","ports":[{"containerPort":80,"hostPort":8080}]}]})"), ported),
      std::vector<std::string>{"node(s) didn't have free ports for the requested pod ports"});
}

TEST(SchedulerFramework, ScoresPreferEmptierNodesAndPreferredAffinity) {
  NodeInfo empty = node("empty", "4", "8Gi");
  NodeInfo busy = node("busy", "4", "8Gi");
  busy.non_zero_requested.milli_cpu = 3000;
  busy.non_zero_requested.memory = 6LL << 30;
  auto p = pod(R"({"containers":[{"name":"a","resources":{"requests":{"cpu":"100m","memory":"100Mi"}}}]})");
  EXPECT_GT(score(p, empty), score(p, busy));
  auto pref = pod(R"({"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
      {"weight":10,"preference":{"matchExpressions":[{"key":"zone","operator":"In","values":["z9"]}]}}]}},
      "containers":[{"name":"a"}]})");
  NodeInfo z9 = node("z9node", "4", "8Gi");
  z9.labels["zone"] = "z9";
  EXPECT_GT(score(pref, z9), score(pref, empty));
}

TEST(SchedulerFramework, BestEffortPodsSpreadOverNodes) {
  // Pods without requests still weigh on a node's score (upstream's non-zero defaults:
  // 100m CPU and 200Mi per container missing them), so they do not pile onto one node.
  auto p = pod(R"({"containers":[{"name":"a"},{"name":"b","resources":{"requests":{"cpu":"0"}}}]})");
  EXPECT_EQ(p.requests.milli_cpu, 0);
  EXPECT_EQ(p.non_zero_requests.milli_cpu, 100);  // an explicit 0 stays 0, as upstream
  EXPECT_EQ(p.non_zero_requests.memory, 2 * 200LL * 1024 * 1024);
  NodeInfo a = node("a", "2", "4Gi");
  NodeInfo b = node("b", "2", "4Gi");
  EXPECT_EQ(score(p, a), score(p, b));
  auto q = p;
  q.key = "default/q";
  a.addPod(p);
  a.addPod(q);
  EXPECT_EQ(a.requested.milli_cpu, 0);
  EXPECT_EQ(a.requested.pods, 2);
  EXPECT_GT(score(p, b), score(p, a));
  a.addPod(q);  // the same pod again replaces itself
  EXPECT_EQ(a.requested.pods, 2);
  a.removePod(p.key);
  a.removePod(q.key);
  a.removePod(q.key);  // not there: ignored
  EXPECT_EQ(a.non_zero_requested.milli_cpu, 0);
  EXPECT_EQ(a.requested.pods, 0);
  EXPECT_EQ(score(p, a), score(p, b));
}

TEST(SchedulerFramework, UnschedulableMessageAsUpstream) {
  EXPECT_EQ(
      unschedulableMessage(3, {{"Insufficient cpu"},
                               {"node(s) didn't match Pod's node affinity/selector"},
                               {"node(s) didn't match Pod's node affinity/selector"}}),
      "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector.");
  EXPECT_EQ(unschedulableMessage(0, {}), "0/0 nodes are available.");
}

TEST(SchedulingQueue, PriorityThenAgeAndBackoff) {
  SchedulingQueue q(std::chrono::milliseconds(20), std::chrono::milliseconds(50));
  q.add("low", 0, "2026-01-01T00:00:00Z");
  q.add("high", 10, "2026-01-01T00:00:05Z");
  q.add("older", 0, "2025-01-01T00:00:00Z");
  std::string k;
  ASSERT_TRUE(q.pop(k, std::chrono::milliseconds(10)));
  EXPECT_EQ(k, "high");
  ASSERT_TRUE(q.pop(k, std::chrono::milliseconds(10)));
  EXPECT_EQ(k, "older");
  q.done("older");
  q.backoff("older");
  ASSERT_TRUE(q.pop(k, std::chrono::milliseconds(10)));
  EXPECT_EQ(k, "low");
  EXPECT_FALSE(q.pop(k, std::chrono::milliseconds(5)));  // "older" still backing off
  ASSERT_TRUE(q.pop(k, std::chrono::milliseconds(200)));
  EXPECT_EQ(k, "older");
  q.done("older");
  q.backoff("older");
  q.backoff("older");
  q.moveAllToActive();  // a cluster change retries at once
  ASSERT_TRUE(q.pop(k, std::chrono::milliseconds(5)));
  EXPECT_EQ(k, "older");
  q.remove("older");
  q.add("older", 0, "x");
  EXPECT_EQ(q.attempts("older"), 0);
}
