// Controller-manager pieces that need no server: the namespace deletion conditions and
// the placeholder CA.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "controllers/namespace/content_deleter.h"
#include "pki/certificate_authority.h"

using namespace shepherd;
using namespace shepherd::controllers;

namespace {

const json::Value* conditionOf(const json::Value& list, std::string_view type) {
  for (auto& c : list.GetArray())
    if (json::getString(c, "type") == type) return &c;
  return nullptr;
}

}  // namespace

TEST(NamespaceConditions, AllClearWhenNothingRemains) {
  json::Document d;
  d.SetObject();
  ContentDeletionReport r;
  json::Value c = namespaceConditions(r, nullptr, "2026-01-01T00:00:00Z", d.GetAllocator());
  ASSERT_EQ(c.Size(), 5u);
  const char* types[] = {"NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
                         "NamespaceDeletionContentFailure", "NamespaceContentRemaining",
                         "NamespaceFinalizersRemaining"};
  const char* reasons[] = {"ResourcesDiscovered", "ParsedGroupVersions", "ContentDeleted", "ContentRemoved",
                           "ContentHasNoFinalizers"};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(json::getString(c[i], "type"), types[i]);
    EXPECT_EQ(json::getString(c[i], "status"), "False");
    EXPECT_EQ(json::getString(c[i], "reason"), reasons[i]);
    EXPECT_EQ(json::getString(c[i], "lastTransitionTime"), "2026-01-01T00:00:00Z");
  }
}

TEST(NamespaceConditions, RemainingContentFinalizersAndFailuresAreSortedAndCounted) {
  json::Document d;
  d.SetObject();
  ContentDeletionReport r;
  r.remaining = {{"pods", 2}, {"deployments.apps", 1}};
  r.finalizers = {{"example.com/b", 1}, {"example.com/a", 3}};
  r.deletion_failures = {"secrets: boom", "configmaps: bang"};
  r.discovery_failures = {"batch/v1: unreachable"};
  json::Value c = namespaceConditions(r, nullptr, "2026-01-01T00:00:00Z", d.GetAllocator());
  const json::Value* remaining = conditionOf(c, "NamespaceContentRemaining");
  ASSERT_NE(remaining, nullptr);
  EXPECT_EQ(json::getString(*remaining, "status"), "True");
  EXPECT_EQ(json::getString(*remaining, "reason"), "SomeResourcesRemain");
  EXPECT_EQ(json::getString(*remaining, "message"),
            "Some resources are remaining: deployments.apps has 1 resource instances, pods has 2 resource "
            "instances");
  const json::Value* fin = conditionOf(c, "NamespaceFinalizersRemaining");
  EXPECT_EQ(json::getString(*fin, "message"),
            "Some content in the namespace has finalizers remaining: example.com/a in 3 resource instances, "
            "example.com/b in 1 resource instances");
  const json::Value* failed = conditionOf(c, "NamespaceDeletionContentFailure");
  EXPECT_EQ(json::getString(*failed, "reason"), "ContentDeletionFailed");
  EXPECT_EQ(json::getString(*failed, "message"),
            "Failed to delete all resource types, 2 remaining: configmaps: bang, secrets: boom");
  const json::Value* disc = conditionOf(c, "NamespaceDeletionDiscoveryFailure");
  EXPECT_EQ(json::getString(*disc, "status"), "True");
  EXPECT_EQ(json::getString(*disc, "message"),
            "Discovery failed for some groups, 1 failing: batch/v1: unreachable");
}

TEST(NamespaceConditions, TransitionTimeKeptWhileStatusHolds) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  ContentDeletionReport before;
  before.remaining = {{"pods", 1}};
  json::Value old = namespaceConditions(before, nullptr, "2026-01-01T00:00:00Z", a);
  // Still pods (a different count): same status, the old transition time stays.
  ContentDeletionReport still;
  still.remaining = {{"pods", 3}};
  json::Value next = namespaceConditions(still, &old, "2026-01-01T00:05:00Z", a);
  EXPECT_EQ(json::getString(*conditionOf(next, "NamespaceContentRemaining"), "lastTransitionTime"),
            "2026-01-01T00:00:00Z");
  // Everything gone: the status flips and the time is now.
  ContentDeletionReport done;
  json::Value last = namespaceConditions(done, &next, "2026-01-01T00:09:00Z", a);
  EXPECT_EQ(json::getString(*conditionOf(last, "NamespaceContentRemaining"), "lastTransitionTime"),
            "2026-01-01T00:09:00Z");
  EXPECT_EQ(json::getString(*conditionOf(last, "NamespaceFinalizersRemaining"), "lastTransitionTime"),
            "2026-01-01T00:00:00Z");  // was False before too
}

TEST(CertificateAuthority, CreatedOnceThenRead) {
  char tmpl[] = "/tmp/shepherd-ca-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  auto first = pki::ensureCertificateAuthority(dir + "/ca.crt", dir + "/ca.key", "test-ca");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->rfind("-----BEGIN CERTIFICATE-----", 0), 0u);
  struct stat st;
  ASSERT_EQ(stat((dir + "/ca.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = pki::ensureCertificateAuthority(dir + "/ca.crt", dir + "/ca.key", "test-ca");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);  // not regenerated
  // A file that is not a certificate is an error, not silently replaced.
  std::ofstream(dir + "/bad.crt") << "not a certificate";
  auto bad = pki::ensureCertificateAuthority(dir + "/bad.crt", dir + "/bad.key", "x");
  EXPECT_FALSE(bad.ok());
  std::system(("rm -rf " + dir).c_str());
}

// ---------------------------------------------------------------------------------------
// Deployment arithmetic, ReplicaSet deletion order and expectations.

#include "controllers/deployment/deployment_util.h"
#include "controllers/endpointslice/endpointslice_reconciler.h"
#include "controllers/endpointslice/endpointslice_tracker.h"
#include "controllers/manager/expectations.h"
#include "controllers/manager/pod_state.h"

namespace {

json::Document parse(std::string_view text) {
  json::Document d;
  EXPECT_TRUE(json::parse(text, d).ok()) << text;
  return d;
}

client::Object object(std::string_view text) {
  return std::make_shared<const json::Document>(parse(text));
}

}  // namespace

TEST(DeploymentUtil, SurgeAndUnavailableBudgets) {
  namespace du = controllers::deployment;
  json::Document pct = parse(R"({"spec": {"replicas": 10, "strategy": {"type": "RollingUpdate",
      "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}})");
  EXPECT_EQ(du::maxSurge(pct), 3);        // 2.5 rounds up
  EXPECT_EQ(du::maxUnavailable(pct), 2);  // 2.5 rounds down
  json::Document zero = parse(R"({"spec": {"replicas": 3, "strategy": {"type": "RollingUpdate",
      "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"}}}})");
  EXPECT_EQ(du::maxSurge(zero), 0);
  EXPECT_EQ(du::maxUnavailable(zero), 1);  // both 0 would deadlock: one may be unavailable
  json::Document recreate = parse(R"({"spec": {"replicas": 3, "strategy": {"type": "Recreate"}}})");
  EXPECT_EQ(du::maxSurge(recreate), 0);
  EXPECT_EQ(du::maxUnavailable(recreate), 0);
}

TEST(DeploymentUtil, NewReplicaSetGrowsWithinTheSurge) {
  namespace du = controllers::deployment;
  json::Document d = parse(R"({"spec": {"replicas": 4, "strategy": {"type": "RollingUpdate",
      "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}}})");
  auto oldRs = object(R"({"spec": {"replicas": 4}})");
  auto newRs = object(R"({"spec": {"replicas": 0}})");
  EXPECT_EQ(du::newRsNewReplicas(d, {oldRs, newRs}, *newRs), 1);  // 4 + 0 < 5: one more
  auto newRs1 = object(R"({"spec": {"replicas": 1}})");
  EXPECT_EQ(du::newRsNewReplicas(d, {oldRs, newRs1}, *newRs1), 1);  // at 5 already
  auto old2 = object(R"({"spec": {"replicas": 2}})");
  auto new3 = object(R"({"spec": {"replicas": 3}})");
  EXPECT_EQ(du::newRsNewReplicas(d, {old2, new3}, *new3), 3);  // 5 pods: the surge is used up
  auto old1 = object(R"({"spec": {"replicas": 1}})");
  EXPECT_EQ(du::newRsNewReplicas(d, {old1, new3}, *new3), 4);  // never beyond spec.replicas
  auto new4 = object(R"({"spec": {"replicas": 4}})");
  EXPECT_EQ(du::newRsNewReplicas(d, {new4}, *new4), 4);
}

TEST(DeploymentUtil, TemplatesCompareIgnoringHashAndEmptyFields) {
  namespace du = controllers::deployment;
  json::Document d =
      parse(R"({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}})");
  json::Document rs = parse(R"({"metadata": {"creationTimestamp": null, "labels": {"app": "web",
      "pod-template-hash": "abc"}}, "spec": {"containers": [{"name": "c", "resources": {}}]}})");
  EXPECT_TRUE(du::equalIgnoreHash(rs, d));
  json::Document other =
      parse(R"({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "x"}]}})");
  EXPECT_FALSE(du::equalIgnoreHash(other, d));
  // The hash is stable, uses the safe alphabet, and changes with the collision count.
  std::string h = controllers::templateHash(d, 0);
  EXPECT_EQ(h, controllers::templateHash(d, 0));
  EXPECT_NE(h, controllers::templateHash(d, 1));
  EXPECT_EQ(h.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"), std::string::npos) << h;
}

TEST(PodState, DeletionOrderAsUpstream) {
  auto pending = object(R"({"metadata": {"name": "unassigned", "creationTimestamp": "2026-01-01T00:00:00Z"},
      "status": {"phase": "Pending"}})");
  auto notReady = object(R"({"metadata": {"name": "not-ready", "creationTimestamp": "2026-01-01T00:00:00Z"},
      "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}})");
  auto readyOld = object(R"({"metadata": {"name": "ready-long", "creationTimestamp": "2026-01-01T00:00:00Z"},
      "spec": {"nodeName": "n2"}, "status": {"phase": "Running", "conditions": [{"type": "Ready",
      "status": "True", "lastTransitionTime": "2026-01-01T00:01:00Z"}]}})");
  auto readyNew =
      object(R"({"metadata": {"name": "ready-recently", "creationTimestamp": "2026-01-01T00:00:00Z"},
      "spec": {"nodeName": "n3"}, "status": {"phase": "Running", "conditions": [{"type": "Ready",
      "status": "True", "lastTransitionTime": "2026-01-01T00:09:00Z"}]}})");
  std::vector<client::Object> pods = {readyOld, readyNew, notReady, pending};
  controllers::sortForDeletion(pods);
  std::vector<std::string> names;
  for (auto& p : pods) names.emplace_back(json::getStringPath(*p, {"metadata", "name"}));
  EXPECT_EQ(names, (std::vector<std::string>{"unassigned", "not-ready", "ready-recently", "ready-long"}));
}

TEST(Expectations, SatisfiedOnlyWhenObservedOrExpired) {
  clock::FakeClock clk;
  controllers::Expectations e(std::chrono::milliseconds(200), clk);
  EXPECT_TRUE(e.satisfied("ns/rs"));
  e.expectCreations("ns/rs", 2);
  EXPECT_FALSE(e.satisfied("ns/rs"));
  e.creationObserved("ns/rs");
  EXPECT_FALSE(e.satisfied("ns/rs"));
  e.creationObserved("ns/rs");
  EXPECT_TRUE(e.satisfied("ns/rs"));
  e.expectDeletions("ns/rs", {"ns/a", "ns/b"});
  e.deletionObserved("ns/rs", "ns/a");
  e.deletionObserved("ns/rs", "ns/a");  // the same pod twice counts once
  EXPECT_FALSE(e.satisfied("ns/rs"));
  clk.advance(std::chrono::milliseconds(199));
  EXPECT_FALSE(e.satisfied("ns/rs"));
  clk.advance(std::chrono::milliseconds(2));
  EXPECT_TRUE(e.satisfied("ns/rs"));  // a lost event does not block the key forever
}

namespace {

const char* kWebService =
    R"({"metadata":{"name":"web","namespace":"ns","uid":"svc-uid","labels":{"tier":"front"}},
  "spec":{"selector":{"app":"web"},"clusterIP":"10.0.0.5",
          "ports":[{"name":"http","port":80,"targetPort":"http","protocol":"TCP"}]}})";

// A pod of the web Service: `ready` sets the Ready condition; `extra` is spliced into
// metadata (e.g. a deletionTimestamp).
client::Object webPod(const std::string& name, const std::string& ip, bool ready,
                      const std::string& extra = "", const std::string& phase = "Running") {
  return object(R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":"uid-)" + name +
                R"(","labels":{"app":"web"})" + extra + R"(},
      "spec":{"nodeName":"n1","containers":[{"name":"c","ports":[{"name":"http","containerPort":8080}]}]},
      "status":{"phase":")" +
                phase + R"(","podIP":")" + ip + R"(",
                "conditions":[{"type":"Ready","status":")" +
                (ready ? "True" : "False") + R"("}]}})");
}

std::vector<std::string> sliceIPs(const json::Value& slice) {
  std::vector<std::string> out;
  for (auto& ep : json::find(slice, "endpoints")->GetArray())
    out.emplace_back(json::view(json::find(ep, "addresses")->GetArray()[0]));
  return out;
}

// A slice as the API server would store it: named, with a resourceVersion.
client::Object stored(const json::Document& planned, const std::string& name, const std::string& rv) {
  json::Document d;
  d.CopyFrom(planned, d.GetAllocator());
  auto& a = d.GetAllocator();
  json::Value& md = json::ensureObject(d, "metadata", a);
  json::remove(md, "generateName");
  json::setString(md, "name", name, a);
  json::setString(md, "resourceVersion", rv, a);
  return std::make_shared<const json::Document>(std::move(d));
}

}  // namespace

TEST(EndpointSlicePlan, ServiceWithoutPodsGetsOnePlaceholder) {
  auto svc = parse(kWebService);
  auto plan =
      planEndpointSlices(svc, {object(R"({"metadata":{"name":"x","namespace":"ns","labels":{"app":"db"}},
      "status":{"podIP":"10.1.0.7","phase":"Running"}})")},
                         {}, 100);
  ASSERT_EQ(plan.create.size(), 1u);
  EXPECT_TRUE(plan.update.empty());
  EXPECT_TRUE(plan.remove.empty());
  const json::Value& s = plan.create[0];
  EXPECT_EQ(json::getStringPath(s, {"metadata", "generateName"}), "web-");
  EXPECT_EQ(json::getString(s, "addressType"), "IPv4");
  EXPECT_TRUE(json::find(s, "endpoints")->Empty());
  EXPECT_TRUE(json::find(s, "ports")->Empty());
  const json::Value* labels = json::findPath(s, {"metadata", "labels"});
  EXPECT_EQ(json::getString(*labels, "kubernetes.io/service-name"), "web");
  EXPECT_EQ(json::getString(*labels, "endpointslice.kubernetes.io/managed-by"),
            "endpointslice-controller.k8s.io");
  EXPECT_EQ(json::getString(*labels, "tier"), "front");
  const json::Value& ref = json::findPath(s, {"metadata", "ownerReferences"})->GetArray()[0];
  EXPECT_EQ(json::getString(ref, "kind"), "Service");
  EXPECT_EQ(json::getString(ref, "uid"), "svc-uid");
  EXPECT_TRUE(json::getBool(ref, "controller"));

  // Stored as planned: nothing more to do.
  auto again = planEndpointSlices(svc, {}, {stored(plan.create[0], "web-abc", "5")}, 100);
  EXPECT_TRUE(again.empty());
}

TEST(EndpointSlicePlan, EndpointsAreChunkedWithResolvedPortsAndConditions) {
  auto svc = parse(kWebService);
  std::vector<client::Object> pods;
  for (int i = 1; i <= 5; ++i)
    pods.push_back(webPod("p" + std::to_string(i), "10.1.0." + std::to_string(i), i != 2));
  pods.push_back(webPod("gone", "10.1.0.6", true, "", "Succeeded"));
  pods.push_back(webPod("noip", "", true));
  pods.push_back(webPod("bye", "10.1.0.8", true, R"(,"deletionTimestamp":"2026-01-01T00:00:00Z")"));
  auto plan = planEndpointSlices(svc, pods, {}, 2);
  ASSERT_EQ(plan.create.size(), 3u);
  std::vector<std::string> all;
  for (auto& s : plan.create) {
    EXPECT_LE(json::find(s, "endpoints")->Size(), 2u);
    const json::Value& port = json::find(s, "ports")->GetArray()[0];
    EXPECT_EQ(json::getInt(port, "port"), 8080);  // the named container port, not 80
    EXPECT_EQ(json::getString(port, "name"), "http");
    for (auto& ip : sliceIPs(s)) all.push_back(ip);
    for (auto& ep : json::find(s, "endpoints")->GetArray()) {
      std::string_view name = json::getStringPath(ep, {"targetRef", "name"});
      const json::Value& c = *json::find(ep, "conditions");
      EXPECT_EQ(json::getString(ep, "nodeName"), "n1");
      if (name == "p2") {  // not ready
        EXPECT_FALSE(json::getBool(c, "ready", true));
        EXPECT_FALSE(json::getBool(c, "serving", true));
      } else if (name == "bye") {  // terminating: serving, not ready
        EXPECT_FALSE(json::getBool(c, "ready", true));
        EXPECT_TRUE(json::getBool(c, "serving"));
        EXPECT_TRUE(json::getBool(c, "terminating"));
      } else {
        EXPECT_TRUE(json::getBool(c, "ready"));
        EXPECT_FALSE(json::getBool(c, "terminating", true));
      }
    }
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::string>{"10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4", "10.1.0.5",
                                           "10.1.0.8"}));
}

TEST(EndpointSlicePlan, EndpointsStayInTheirSliceAndNewOnesFillChangedSlices) {
  auto svc = parse(kWebService);
  auto first = planEndpointSlices(
      svc, {webPod("a", "10.1.0.1", true), webPod("b", "10.1.0.2", true), webPod("c", "10.1.0.3", true)}, {},
      2);
  ASSERT_EQ(first.create.size(), 2u);
  auto s1 = stored(first.create[0], "web-1", "10");
  auto s2 = stored(first.create[1], "web-2", "11");
  ASSERT_EQ(sliceIPs(*s1), (std::vector<std::string>{"10.1.0.1", "10.1.0.2"}));
  // a goes, d comes: d takes a's place in web-1; web-2 is untouched; no new slice.
  auto plan = planEndpointSlices(
      svc, {webPod("b", "10.1.0.2", true), webPod("c", "10.1.0.3", true), webPod("d", "10.1.0.4", true)},
      {s1, s2}, 2);
  EXPECT_TRUE(plan.create.empty());
  EXPECT_TRUE(plan.remove.empty());
  ASSERT_EQ(plan.update.size(), 1u);
  EXPECT_EQ(json::getStringPath(plan.update[0], {"metadata", "name"}), "web-1");
  EXPECT_EQ(json::getStringPath(plan.update[0], {"metadata", "resourceVersion"}), "10");
  EXPECT_EQ(sliceIPs(plan.update[0]), (std::vector<std::string>{"10.1.0.2", "10.1.0.4"}));
  // Readiness changes rewrite only the slice that holds the pod.
  auto ready = planEndpointSlices(
      svc, {webPod("a", "10.1.0.1", true), webPod("b", "10.1.0.2", true), webPod("c", "10.1.0.3", false)},
      {s1, s2}, 2);
  ASSERT_EQ(ready.update.size(), 1u);
  EXPECT_EQ(json::getStringPath(ready.update[0], {"metadata", "name"}), "web-2");
  EXPECT_TRUE(ready.create.empty() && ready.remove.empty());
  // Every pod gone: the slices go and one placeholder is made.
  auto none = planEndpointSlices(svc, {}, {s1, s2}, 2);
  EXPECT_EQ(none.remove, (std::vector<std::string>{"web-1", "web-2"}));
  ASSERT_EQ(none.create.size(), 1u);
  EXPECT_TRUE(json::find(none.create[0], "endpoints")->Empty());
}

TEST(EndpointSlicePlan, PortChangeMovesEndpointsToANewSlice) {
  auto svc = parse(kWebService);
  auto first = planEndpointSlices(svc, {webPod("a", "10.1.0.1", true)}, {}, 100);
  ASSERT_EQ(first.create.size(), 1u);
  auto s1 = stored(first.create[0], "web-1", "10");
  auto svc2 = parse(R"({"metadata":{"name":"web","namespace":"ns","uid":"svc-uid"},
    "spec":{"selector":{"app":"web"},"ports":[{"port":81,"targetPort":9090,"protocol":"TCP"}]}})");
  auto plan = planEndpointSlices(svc2, {webPod("a", "10.1.0.1", true)}, {s1}, 100);
  EXPECT_EQ(plan.remove, (std::vector<std::string>{"web-1"}));
  ASSERT_EQ(plan.create.size(), 1u);
  EXPECT_EQ(json::getInt(json::find(plan.create[0], "ports")->GetArray()[0], "port"), 9090);
  // Stored as planned: nothing more to do.
  auto again =
      planEndpointSlices(svc2, {webPod("a", "10.1.0.1", true)}, {stored(plan.create[0], "web-2", "12")}, 100);
  EXPECT_TRUE(again.empty());
  // The Service lost its "tier" label: the slice's labels follow, endpoints unchanged.
  auto svc3 = parse(R"({"metadata":{"name":"web","namespace":"ns","uid":"svc-uid"},
    "spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":"http","protocol":"TCP"}]}})");
  auto relabel = planEndpointSlices(svc3, {webPod("a", "10.1.0.1", true)}, {s1}, 100);
  ASSERT_EQ(relabel.update.size(), 1u);
  EXPECT_TRUE(relabel.create.empty() && relabel.remove.empty());
  EXPECT_FALSE(json::findPath(relabel.update[0], {"metadata", "labels", "tier"}));
  EXPECT_EQ(sliceIPs(relabel.update[0]), (std::vector<std::string>{"10.1.0.1"}));
}

TEST(EndpointSliceTracker, WaitsUntilTheCacheShowsOwnWrites) {
  EndpointSliceTracker t;
  std::map<std::string, client::Object> cache;
  auto lookup = [&](const std::string& k) {
    auto it = cache.find(k);
    return it == cache.end() ? client::Object() : it->second;
  };
  EXPECT_FALSE(t.stale("ns/web", lookup));
  t.expectWritten("ns/web", "ns/web-1", "12");
  t.expectDeleted("ns/web", "ns/web-0");
  cache["ns/web-0"] = object(R"({"metadata":{"name":"web-0","resourceVersion":"3"}})");
  EXPECT_TRUE(t.stale("ns/web", lookup));
  cache["ns/web-1"] = object(R"({"metadata":{"name":"web-1","resourceVersion":"11"}})");
  EXPECT_TRUE(t.stale("ns/web", lookup));  // an older version
  cache["ns/web-1"] = object(R"({"metadata":{"name":"web-1","resourceVersion":"12"}})");
  EXPECT_TRUE(t.stale("ns/web", lookup));  // web-0 still there
  cache.erase("ns/web-0");
  EXPECT_FALSE(t.stale("ns/web", lookup));
  EXPECT_FALSE(t.stale("ns/other", lookup));
  // A slice someone else deleted before the cache showed our write: not waited for.
  t.expectWritten("ns/web", "ns/web-9", "40");
  EXPECT_TRUE(t.stale("ns/web", lookup));
  t.observedDeleted("ns/web-9");
  EXPECT_FALSE(t.stale("ns/web", lookup));
  // A missed event does not wedge the Service.
  t.expectWritten("ns/web", "ns/web-7", "50");
  EXPECT_FALSE(t.stale("ns/web", lookup, std::chrono::seconds(0)));
}
