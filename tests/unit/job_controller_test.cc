// The Job controller's sync against the fake API server, as upstream's job_controller_test
// drives syncJob: pods with the tracking finalizer, counting through
// uncountedTerminatedPods, the two-step terminal conditions, Indexed Jobs, the pod failure
// policy, suspension. And the index intervals on their own.
#include "controllers/job/job_controller.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "controller_env.h"
#include "controllers/job/indexed_job.h"

using namespace shepherd;
using namespace shepherd::controllers::job;
using shepherd::testing::doc;
using shepherd::testing::Env;

namespace {

const char* kJobs = "/apis/batch/v1/namespaces/ns/jobs";
const char* kPods = "/api/v1/namespaces/ns/pods";

std::string jobJson(const std::string& name, const std::string& spec_extra) {
  // The selector names a label value of our own: the fake gives the Job its own uid.
  return R"({"metadata":{"name":")" + name +
         R"(","namespace":"ns","generation":1},
    "spec":{"selector":{"matchLabels":{"batch.kubernetes.io/controller-uid":"uid-)" +
         name + R"("}},"backoffLimit":6,"suspend":false,"podReplacementPolicy":"TerminatingOrFailed",)" +
         spec_extra + R"("template":{"metadata":{"labels":{"batch.kubernetes.io/controller-uid":"uid-)" +
         name + R"("}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}})";
}

// Syncs until `done` holds or ten syncs have run (each sync does one step of the
// tracking protocol; the informers catch up in between).
template <class Pred>
bool syncUntil(Env& e, JobController& jc, const std::string& key, Pred done) {
  for (int i = 0; i < 10; ++i) {
    if (done()) return true;
    EXPECT_TRUE(jc.syncNow(key).ok());
    e.settle();
  }
  return done();
}

void finishPod(Env& e, const json::Value& pod, const std::string& phase, int exit_code = 0) {
  std::string name(json::getStringPath(pod, {"metadata", "name"}));
  e.patch(std::string(kPods) + "/" + name + "/status",
          R"({"status":{"phase":")" + phase + R"(","containerStatuses":[{"name":"c","state":{"terminated":
        {"exitCode":)" +
              std::to_string(exit_code) + R"(,"finishedAt":"2026-01-01T00:00:00Z"}}}]}})");
}

bool conditionTrue(const json::Value& job, const std::string& type) {
  const json::Value* conds = json::findPath(job, {"status", "conditions"});
  if (!conds) return false;
  for (auto& c : conds->GetArray())
    if (json::getString(c, "type") == type && json::getString(c, "status") == "True") return true;
  return false;
}

bool hasFinalizer(const json::Value& pod) {
  const json::Value* f = json::findPath(pod, {"metadata", "finalizers"});
  if (!f) return false;
  for (auto& x : f->GetArray())
    if (json::view(x) == kTrackingFinalizer) return true;
  return false;
}

}  // namespace

TEST(OrderedIntervals, ParsesMergesAndPrintsAsStatusSpellsThem) {
  auto a = OrderedIntervals::parse("1,3-5,7", 10);
  EXPECT_EQ(a.str(), "1,3-5,7");
  EXPECT_EQ(a.total(), 5);
  EXPECT_TRUE(a.has(4));
  EXPECT_FALSE(a.has(6));
  EXPECT_EQ(a.with({2, 6}).str(), "1-7");
  EXPECT_EQ(a.with({8}).str(), "1,3-5,7,8");                   // two adjacent indexes print with a comma
  EXPECT_EQ(OrderedIntervals::parse("0-20", 5).str(), "0-4");  // past completions is dropped
  EXPECT_EQ(firstPendingIndexes(a, 3, 10), (std::vector<int>{0, 2, 6}));
  EXPECT_EQ(firstPendingIndexes(a, 10, 9), (std::vector<int>{0, 2, 6, 8}));
}

TEST(JobSync, RunsPodsToCompletionCountingEachOnce) {
  Env e;
  JobController jc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  auto created =
      e.create(kJobs, jobJson("pi", R"("completions":2,"parallelism":2,"completionMode":"NonIndexed",)"));
  std::string uid(json::getStringPath(created, {"metadata", "uid"}));
  e.settle();
  ASSERT_TRUE(syncUntil(e, jc, "ns/pi", [&] { return e.items(kPods).size() == 2; }));
  auto pods = e.items(kPods);
  for (auto& p : pods) {
    EXPECT_TRUE(hasFinalizer(p));
    const json::Value& ref = (*json::findPath(p, {"metadata", "ownerReferences"}))[0];
    EXPECT_EQ(json::getString(ref, "kind"), "Job");
    EXPECT_EQ(json::getString(ref, "uid"), uid);
    EXPECT_EQ(json::getStringPath(p, {"metadata", "generateName"}), "pi-");
  }
  for (auto& p : pods) finishPod(e, p, "Succeeded");
  e.settle();
  ASSERT_TRUE(syncUntil(e, jc, "ns/pi",
                        [&] { return conditionTrue(e.get(std::string(kJobs) + "/pi"), "Complete"); }));
  auto job = e.get(std::string(kJobs) + "/pi");
  EXPECT_TRUE(conditionTrue(job, "SuccessCriteriaMet"));
  const json::Value& st = *json::find(job, "status");
  EXPECT_EQ(json::getInt(st, "succeeded").value_or(0), 2);
  EXPECT_FALSE(json::find(st, "failed"));
  EXPECT_EQ(json::getInt(st, "terminating").value_or(-1), 0);
  EXPECT_EQ(json::getInt(st, "ready").value_or(-1), 0);
  EXPECT_TRUE(json::find(st, "completionTime"));
  EXPECT_TRUE(json::findPath(st, {"uncountedTerminatedPods"})->ObjectEmpty());
  for (auto& c : json::find(st, "conditions")->GetArray())
    if (json::getString(c, "type") == "Complete") {
      EXPECT_EQ(json::getString(c, "reason"), "CompletionsReached");
      EXPECT_EQ(json::getString(c, "message"), "Reached expected number of succeeded pods");
    }
  for (auto& p : e.items(kPods)) EXPECT_FALSE(hasFinalizer(p)) << json::serialize(p);
  // Finished: more syncs change nothing.
  e.fake.clearActions();
  ASSERT_TRUE(jc.syncNow("ns/pi").ok());
  EXPECT_TRUE(e.fake.actions("update").empty());
  EXPECT_EQ(e.items(kPods).size(), 2u);
}

TEST(JobSync, BackoffLimitFailsTheJobInTwoSteps) {
  Env e;
  JobController jc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  std::string body = jobJson("f", R"("completions":1,"parallelism":1,"completionMode":"NonIndexed",)");
  body.replace(body.find("\"backoffLimit\":6"), 16, "\"backoffLimit\":0");
  e.create(kJobs, body);
  e.settle();
  ASSERT_TRUE(syncUntil(e, jc, "ns/f", [&] { return e.items(kPods).size() == 1; }));
  finishPod(e, e.items(kPods)[0], "Failed", 3);
  e.settle();
  ASSERT_TRUE(
      syncUntil(e, jc, "ns/f", [&] { return conditionTrue(e.get(std::string(kJobs) + "/f"), "Failed"); }));
  auto job = e.get(std::string(kJobs) + "/f");
  EXPECT_TRUE(conditionTrue(job, "FailureTarget"));
  EXPECT_EQ(json::getInt(*json::find(job, "status"), "failed").value_or(0), 1);
  for (auto& c : json::findPath(job, {"status", "conditions"})->GetArray())
    if (json::getString(c, "type") == "Failed") {
      EXPECT_EQ(json::getString(c, "reason"), "BackoffLimitExceeded");
      EXPECT_EQ(json::getString(c, "message"), "Job has reached the specified backoff limit");
    }
  EXPECT_FALSE(json::findPath(job, {"status", "completionTime"}));
  EXPECT_EQ(e.items(kPods).size(), 1u);  // no replacement
}

TEST(JobSync, IndexedJobGivesEachIndexItsPod) {
  Env e;
  JobController jc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create(kJobs, jobJson("ix", R"("completions":3,"parallelism":3,"completionMode":"Indexed",)"));
  e.settle();
  ASSERT_TRUE(syncUntil(e, jc, "ns/ix", [&] { return e.items(kPods).size() == 3; }));
  std::vector<std::string> indexes, hosts;
  for (auto& p : e.items(kPods)) {
    indexes.emplace_back(json::getStringPath(p, {"metadata", "annotations", kCompletionIndexAnnotation}));
    EXPECT_EQ(json::getStringPath(p, {"metadata", "labels", kCompletionIndexAnnotation}), indexes.back());
    hosts.emplace_back(json::getStringPath(p, {"spec", "hostname"}));
    EXPECT_EQ(json::getStringPath(p, {"metadata", "generateName"}), "ix-" + indexes.back() + "-");
    const json::Value& env = (*json::findPath(p, {"spec", "containers"}))[0]["env"][0];
    EXPECT_EQ(json::getString(env, "name"), "JOB_COMPLETION_INDEX");
  }
  std::sort(indexes.begin(), indexes.end());
  std::sort(hosts.begin(), hosts.end());
  EXPECT_EQ(indexes, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(hosts, (std::vector<std::string>{"ix-0", "ix-1", "ix-2"}));
  for (auto& p : e.items(kPods))
    if (json::getStringPath(p, {"metadata", "annotations", kCompletionIndexAnnotation}) != "2")
      finishPod(e, p, "Succeeded");
  e.settle();
  ASSERT_TRUE(syncUntil(e, jc, "ns/ix", [&] {
    return json::getStringPath(e.get(std::string(kJobs) + "/ix"), {"status", "completedIndexes"}) == "0,1";
  }));
  EXPECT_FALSE(conditionTrue(e.get(std::string(kJobs) + "/ix"), "Complete"));
}

TEST(JobSync, PodFailurePolicyFailJobEndsTheJobAtOnce) {
  Env e;
  JobController jc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create(kJobs, jobJson("p", R"("completions":1,"parallelism":1,"completionMode":"NonIndexed",
    "podFailurePolicy":{"rules":[{"action":"FailJob","onExitCodes":{"operator":"In","values":[42]}}]},)"));
  e.settle();
  ASSERT_TRUE(syncUntil(e, jc, "ns/p", [&] { return e.items(kPods).size() == 1; }));
  std::string pod(json::getStringPath(e.items(kPods)[0], {"metadata", "name"}));
  finishPod(e, e.items(kPods)[0], "Failed", 42);
  e.settle();
  ASSERT_TRUE(
      syncUntil(e, jc, "ns/p", [&] { return conditionTrue(e.get(std::string(kJobs) + "/p"), "Failed"); }));
  auto failedJob = e.get(std::string(kJobs) + "/p");
  for (auto& c : json::findPath(failedJob, {"status", "conditions"})->GetArray())
    if (json::getString(c, "type") == "Failed") {
      EXPECT_EQ(json::getString(c, "reason"), "PodFailurePolicy");
      EXPECT_EQ(
          json::getString(c, "message"),
          "Container c for pod ns/" + pod + " failed with exit code 42 matching FailJob rule at index 0");
    }
}

TEST(JobSync, SuspendedJobRunsNoPodsAndSaysSo) {
  Env e;
  JobController jc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  std::string body = jobJson("s", R"("completions":1,"parallelism":1,"completionMode":"NonIndexed",)");
  body.replace(body.find("\"suspend\":false"), 15, "\"suspend\":true");
  e.create(kJobs, body);
  e.settle();
  ASSERT_TRUE(jc.syncNow("ns/s").ok());
  e.settle();
  auto job = e.get(std::string(kJobs) + "/s");
  EXPECT_TRUE(e.items(kPods).empty());
  EXPECT_TRUE(conditionTrue(job, "Suspended"));
  EXPECT_FALSE(json::findPath(job, {"status", "startTime"}));
  // Resumed: the condition turns False and the pods come.
  e.patch(std::string(kJobs) + "/s", R"({"metadata":{"generation":2},"spec":{"suspend":false}})");
  e.settle();
  ASSERT_TRUE(syncUntil(e, jc, "ns/s", [&] { return e.items(kPods).size() == 1; }));
  job = e.get(std::string(kJobs) + "/s");
  EXPECT_FALSE(conditionTrue(job, "Suspended"));
  EXPECT_TRUE(json::findPath(job, {"status", "startTime"}));
}

TEST(JobSync, AnOrphanedPodLosesTheTrackingFinalizer) {
  Env e;
  JobController jc(e.fake, e.informers, e.events);
  auto stopFirst = e.stopBeforeController();
  e.start();
  e.create(kPods,
           R"({"metadata":{"name":"lost","namespace":"ns","finalizers":["batch.kubernetes.io/job-tracking"]},
    "spec":{"containers":[{"name":"c","image":"x"}]}})");
  e.settle();
  ASSERT_TRUE(jc.syncNow("pod:ns/lost").ok());
  EXPECT_FALSE(hasFinalizer(e.get(std::string(kPods) + "/lost")));
}
