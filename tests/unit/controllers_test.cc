// Controller-manager pieces that need no server: the namespace deletion conditions and
// the placeholder CA.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

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
