// Controller-manager pieces that need no server: the namespace deletion conditions and
// the placeholder CA.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
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
#include "controllers/replicaset/expectations.h"
#include "controllers/replicaset/pod_state.h"

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
  json::Document d = parse(R"({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}})");
  json::Document rs = parse(R"({"metadata": {"creationTimestamp": null, "labels": {"app": "web",
      "pod-template-hash": "abc"}}, "spec": {"containers": [{"name": "c", "resources": {}}]}})");
  EXPECT_TRUE(du::equalIgnoreHash(rs, d));
  json::Document other = parse(R"({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "x"}]}})");
  EXPECT_FALSE(du::equalIgnoreHash(other, d));
  // The hash is stable, uses the safe alphabet, and changes with the collision count.
  std::string h = du::templateHash(d, 0);
  EXPECT_EQ(h, du::templateHash(d, 0));
  EXPECT_NE(h, du::templateHash(d, 1));
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
  auto readyNew = object(R"({"metadata": {"name": "ready-recently", "creationTimestamp": "2026-01-01T00:00:00Z"},
      "spec": {"nodeName": "n3"}, "status": {"phase": "Running", "conditions": [{"type": "Ready",
      "status": "True", "lastTransitionTime": "2026-01-01T00:09:00Z"}]}})");
  std::vector<client::Object> pods = {readyOld, readyNew, notReady, pending};
  controllers::sortForDeletion(pods);
  std::vector<std::string> names;
  for (auto& p : pods) names.emplace_back(json::getStringPath(*p, {"metadata", "name"}));
  EXPECT_EQ(names, (std::vector<std::string>{"unassigned", "not-ready", "ready-recently", "ready-long"}));
}

TEST(Expectations, SatisfiedOnlyWhenObservedOrExpired) {
  controllers::Expectations e(std::chrono::milliseconds(200));
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
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_TRUE(e.satisfied("ns/rs"));  // a lost event does not block the key forever
}
