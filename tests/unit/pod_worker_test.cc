// Pod workers over the in-memory runtime (kubelet-lite/fake_runtime.h) and the in-memory
// API server (client/fake_client.h): the real Kubelet and PodWorker code, pods in, CRI
// calls and status patches out. Nothing sleeps: the tests wait on the fakes' conditions.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "client/fake_client.h"
#include "common/json.h"
#include "kubelet-lite/fake_runtime.h"
#include "kubelet-lite/kubelet.h"
#include "test_util.h"

using namespace shepherd;
using namespace shepherd::kubelet;

namespace {

constexpr auto kTimeout = std::chrono::seconds(30);
const std::string kPods = "/api/v1/namespaces/ns/pods";

// A node: the fake API server, the fake runtime (image "busybox" present) and a Kubelet
// on node-1 whose pod files live in a temporary directory.
struct Node {
  client::FakeClient api;
  FakeRuntime runtime{[] {
    FakeRuntimeOptions o;
    o.images = {"busybox"};
    return o;
  }()};
  testutil::TempDir dir;
  std::unique_ptr<Kubelet> kubelet;

  Node() {
    KubeletConfig cfg;
    cfg.node_name = "node-1";
    cfg.node_ip = "192.0.2.10";
    cfg.root_dir = dir.path();
    cfg.cgroup_root = "/shepherd-pod-worker-test";  // no such cgroup: nothing to remove
    cfg.runtime_name = "fake";
    kubelet = std::make_unique<Kubelet>(api, runtime, cfg);
    EXPECT_TRUE(kubelet->start(10000));
    // The pod watch is open (a pod created before it would be missed).
    EXPECT_TRUE(api.waitForWatches(1));
  }
  ~Node() { kubelet->stop(); }

  // Creates a pod bound to node-1; returns its uid.
  std::string create(const std::string& name, const std::string& spec) {
    auto r = api.post(kPods, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                                 R"(","namespace":"ns"},"spec":{"nodeName":"node-1",)" + spec + "}}");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? std::string(json::getStringPath(*r, {"metadata", "uid"})) : "";
  }
  json::Document pod(const std::string& name) {
    auto r = api.get(kPods + "/" + name);
    return r.ok() ? std::move(*r) : json::Document();
  }
  std::string phase(const std::string& name) {
    json::Document p = pod(name);
    return p.IsObject() ? std::string(json::getStringPath(p, {"status", "phase"})) : "";
  }
  // Waits for the pod's stored object to satisfy `pred`.
  bool waitPod(const std::string& name, const std::function<bool(const json::Value&)>& pred) {
    return api.waitFor(
        [&] {
          json::Document p = pod(name);
          return p.IsObject() && pred(p);
        },
        kTimeout);
  }
  // Waits for the runtime to have a container `name` of the pod in `state`; its id.
  std::string waitContainer(const std::string& uid, const std::string& name,
                            runtime::v1::ContainerState state = runtime::v1::CONTAINER_RUNNING) {
    std::string id;
    runtime.waitFor(
        [&] {
          id = runtime.containerId(uid, name);
          if (id.empty()) return false;
          auto st = runtime.containerStatus(id);
          return st.ok() && st->state() == state;
        },
        kTimeout);
    return id;
  }
};

const json::Value* containerStatus(const json::Value& pod, const char* list, const std::string& name) {
  const json::Value* statuses = json::findPath(pod, {"status", list});
  if (!statuses || !statuses->IsArray()) return nullptr;
  for (auto& s : statuses->GetArray())
    if (json::getString(s, "name") == name) return &s;
  return nullptr;
}

std::string condition(const json::Value& pod, const std::string& type) {
  const json::Value* conds = json::findPath(pod, {"status", "conditions"});
  if (conds && conds->IsArray())
    for (auto& c : conds->GetArray())
      if (json::getString(c, "type") == type) return std::string(json::getString(c, "status"));
  return "";
}

// The position of the first call starting with `prefix` (calls().size() if none).
size_t callIndex(const std::vector<std::string>& calls, const std::string& prefix) {
  auto it =
      std::find_if(calls.begin(), calls.end(), [&](const std::string& c) { return c.rfind(prefix, 0) == 0; });
  return static_cast<size_t>(it - calls.begin());
}

bool allReady(const json::Value& pod) {
  const json::Value* statuses = json::findPath(pod, {"status", "containerStatuses"});
  if (!statuses || !statuses->IsArray() || statuses->Empty()) return false;
  for (auto& s : statuses->GetArray())
    if (!json::getBool(s, "ready")) return false;
  return true;
}

}  // namespace

TEST(PodWorker, PodBecomesRunningWithContainersReady) {
  Node n;
  std::string uid =
      n.create("web", R"("containers":[{"name":"a","image":"busybox"},{"name":"b","image":"busybox"}])");
  ASSERT_TRUE(n.waitPod("web", [](const json::Value& p) {
    return json::getStringPath(p, {"status", "phase"}) == "Running" && allReady(p) &&
           condition(p, "Ready") == "True";
  })) << json::serialize(n.pod("web"));
  json::Document pod = n.pod("web");
  EXPECT_EQ(condition(pod, "ContainersReady"), "True");
  EXPECT_EQ(condition(pod, "Initialized"), "True");
  EXPECT_EQ(json::getStringPath(pod, {"status", "hostIP"}), "192.0.2.10");
  // The sandbox's IP, from the node's /24.
  EXPECT_EQ(json::getStringPath(pod, {"status", "podIP"}).substr(0, 9), "10.128.0.");
  for (const char* c : {"a", "b"}) {
    const json::Value* cs = containerStatus(pod, "containerStatuses", c);
    ASSERT_NE(cs, nullptr) << c;
    EXPECT_EQ(json::getString(*cs, "containerID"), "fake://" + n.runtime.containerId(uid, c));
    EXPECT_TRUE(json::findPath(*cs, {"state", "running", "startedAt"}));
    EXPECT_TRUE(json::getBool(*cs, "started"));
    EXPECT_EQ(json::getInt(*cs, "restartCount"), 0);
  }
  // The status went out as a merge patch of the status subresource.
  bool patched = false;
  for (const auto& a : n.api.actions("patch"))
    if (a.path == kPods + "/web/status" && a.body.find(R"("phase":"Running")") != std::string::npos)
      patched = true;
  EXPECT_TRUE(patched);
  EXPECT_EQ(n.runtime.sandboxCount(), 1u);
}

TEST(PodWorker, MissingImageIsNotPulled) {
  Node n;
  n.create("nope", R"("containers":[{"name":"c","image":"not-here:1"}])");
  ASSERT_TRUE(n.waitPod("nope", [](const json::Value& p) {
    const json::Value* cs = containerStatus(p, "containerStatuses", "c");
    // ErrImagePull, then ImagePullBackOff until the next look.
    std::string_view reason = cs ? json::getStringPath(*cs, {"state", "waiting", "reason"}) : "";
    return reason == "ErrImagePull" || reason == "ImagePullBackOff";
  })) << json::serialize(n.pod("nope"));
  EXPECT_EQ(n.phase("nope"), "Pending");
  EXPECT_EQ(n.runtime.containerCount(), 0u);
  // The event goes out from the recorder's thread.
  EXPECT_TRUE(n.api.waitFor(
      [&] {
        for (const auto& a : n.api.actions("create"))
          if (a.body.find("Failed to pull image") != std::string::npos) return true;
        return false;
      },
      kTimeout));
}

TEST(PodWorker, NonZeroExitWithRestartNeverFailsThePod) {
  Node n;
  std::string uid =
      n.create("job", R"("restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}])");
  std::string id = n.waitContainer(uid, "c");
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(n.runtime.exitContainer(id, 3).ok());
  ASSERT_TRUE(n.waitPod("job", [](const json::Value& p) {
    return json::getStringPath(p, {"status", "phase"}) == "Failed";
  })) << json::serialize(n.pod("job"));
  json::Document pod = n.pod("job");
  const json::Value* cs = containerStatus(pod, "containerStatuses", "c");
  ASSERT_NE(cs, nullptr);
  const json::Value* terminated = json::findPath(*cs, {"state", "terminated"});
  ASSERT_NE(terminated, nullptr);
  EXPECT_EQ(json::getInt(*terminated, "exitCode"), 3);
  EXPECT_EQ(json::getStringPath(*cs, {"state", "terminated", "reason"}), "Error");
  EXPECT_FALSE(json::getBool(*cs, "ready"));
  EXPECT_EQ(condition(pod, "Ready"), "False");
  // Not restarted: one container, attempt 0.
  EXPECT_EQ(n.runtime.containerId(uid, "c"), id);
}

TEST(PodWorker, InitContainersRunInOrderBeforeTheContainers) {
  Node n;
  std::string uid =
      n.create("init", R"("initContainers":[{"name":"i1","image":"busybox"},{"name":"i2","image":"busybox"}],
    "containers":[{"name":"c","image":"busybox"}])");
  std::string i1 = n.waitContainer(uid, "i1");
  ASSERT_FALSE(i1.empty());
  // While i1 runs, nothing else is created and the pod is not initialized.
  ASSERT_TRUE(n.waitPod("init", [](const json::Value& p) {
    const json::Value* cs = containerStatus(p, "initContainerStatuses", "i1");
    return cs && json::findPath(*cs, {"state", "running"});
  })) << json::serialize(n.pod("init"));
  EXPECT_EQ(n.runtime.containerId(uid, "i2"), "");
  EXPECT_EQ(n.runtime.containerId(uid, "c"), "");
  json::Document pod = n.pod("init");
  EXPECT_EQ(json::getStringPath(pod, {"status", "phase"}), "Pending");
  EXPECT_EQ(condition(pod, "Initialized"), "False");
  const json::Value* main = containerStatus(pod, "containerStatuses", "c");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(json::getStringPath(*main, {"state", "waiting", "reason"}), "PodInitializing");

  ASSERT_TRUE(n.runtime.exitContainer(i1, 0).ok());
  std::string i2 = n.waitContainer(uid, "i2");
  ASSERT_FALSE(i2.empty());
  EXPECT_EQ(n.runtime.containerId(uid, "c"), "");
  ASSERT_TRUE(n.runtime.exitContainer(i2, 0).ok());
  ASSERT_FALSE(n.waitContainer(uid, "c").empty());

  ASSERT_TRUE(n.waitPod("init", [](const json::Value& p) {
    return json::getStringPath(p, {"status", "phase"}) == "Running" && allReady(p);
  })) << json::serialize(n.pod("init"));
  pod = n.pod("init");
  EXPECT_EQ(condition(pod, "Initialized"), "True");
  for (const char* i : {"i1", "i2"}) {
    const json::Value* cs = containerStatus(pod, "initContainerStatuses", i);
    ASSERT_NE(cs, nullptr) << i;
    EXPECT_EQ(json::getStringPath(*cs, {"state", "terminated", "reason"}), "Completed") << i;
  }
  auto calls = n.runtime.calls();
  EXPECT_LT(callIndex(calls, "createContainer i1"), callIndex(calls, "createContainer i2"));
  EXPECT_LT(callIndex(calls, "createContainer i2"), callIndex(calls, "createContainer c"));
  EXPECT_LT(callIndex(calls, "createContainer c"), calls.size());
}

TEST(PodWorker, FailedSandboxIsReportedAndRetried) {
  Node n;
  n.runtime.failNext("runPodSandbox", ApiError::internal("no network"));
  std::string uid = n.create("sb", R"("containers":[{"name":"c","image":"busybox"}])");
  ASSERT_TRUE(n.waitPod("sb", [](const json::Value& p) {
    const json::Value* cs = containerStatus(p, "containerStatuses", "c");
    return cs && json::getStringPath(*cs, {"state", "waiting", "reason"}) == "ContainerCreating";
  })) << json::serialize(n.pod("sb"));
  EXPECT_EQ(n.runtime.sandboxCount(), 0u);
  // The next attempt (5 s later) succeeds.
  ASSERT_TRUE(n.waitPod("sb", [](const json::Value& p) {
    return json::getStringPath(p, {"status", "phase"}) == "Running";
  })) << json::serialize(n.pod("sb"));
  EXPECT_EQ(n.runtime.sandboxCount(), 1u);
}

TEST(PodWorker, DeletionStopsContainersRemovesSandboxThenConfirms) {
  Node n;
  std::string uid =
      n.create("gone", R"("terminationGracePeriodSeconds":5,"containers":[{"name":"c","image":"busybox"}])");
  ASSERT_TRUE(n.waitPod("gone", [](const json::Value& p) {
    return json::getStringPath(p, {"status", "phase"}) == "Running";
  }));
  std::string id = n.runtime.containerId(uid, "c");
  ASSERT_FALSE(id.empty());
  auto sandboxes = n.runtime.listPodSandbox(runtime::v1::PodSandboxFilter());
  ASSERT_TRUE(sandboxes.ok());
  ASSERT_EQ(sandboxes->size(), 1u);
  std::string sandbox = (*sandboxes)[0].id();
  n.api.clearActions();
  // A graceful delete: the pod stays, with a deletionTimestamp, until the node confirms.
  ASSERT_TRUE(n.api.del(kPods + "/gone", R"({"gracePeriodSeconds":5})").ok());
  ASSERT_TRUE(n.api.waitFor(
      [&] {
        auto r = n.api.get(kPods + "/gone");
        return !r.ok() && r.error().code == 404;
      },
      kTimeout));
  auto calls = n.runtime.calls();
  std::string trace;
  for (const auto& c : calls) trace += c + "\n";
  for (const auto& a : n.api.actions()) trace += a.verb + " " + a.path + " " + a.body.substr(0, 200) + "\n";
  SCOPED_TRACE(trace);
  EXPECT_EQ(n.runtime.sandboxCount(), 0u);
  EXPECT_EQ(n.runtime.containerCount(), 0u);
  size_t stop = callIndex(calls, "stopContainer " + id);
  ASSERT_LT(stop, calls.size());
  EXPECT_LT(stop, callIndex(calls, "stopPodSandbox " + sandbox));
  EXPECT_LT(callIndex(calls, "stopPodSandbox " + sandbox), callIndex(calls, "removePodSandbox " + sandbox));
  EXPECT_LT(callIndex(calls, "removePodSandbox " + sandbox), calls.size());
  // The final DELETE: grace 0, only for this incarnation.
  auto deletes = n.api.actions("delete");
  ASSERT_EQ(deletes.size(), 2u);
  EXPECT_EQ(deletes[1].path, kPods + "/gone");
  json::Document body;
  ASSERT_TRUE(json::parse(deletes[1].body, body).ok()) << deletes[1].body;
  EXPECT_EQ(json::getInt(body, "gracePeriodSeconds"), 0);
  EXPECT_EQ(json::getStringPath(body, {"preconditions", "uid"}), uid);
}

// Native sidecars: init containers with restartPolicy Always (upstream's KEP-753).
TEST(PodWorkerSidecars, ASidecarStartsThenTheNextInitContainerAndKeepsRunning) {
  Node n;
  std::string uid =
      n.create("side", R"("initContainers":[{"name":"log","image":"busybox","restartPolicy":"Always"},
    {"name":"setup","image":"busybox"}],"containers":[{"name":"c","image":"busybox"}])");
  std::string log = n.waitContainer(uid, "log");
  ASSERT_FALSE(log.empty());
  // Started (no startup probe): the next init container runs while the sidecar keeps running.
  std::string setup = n.waitContainer(uid, "setup");
  ASSERT_FALSE(setup.empty());
  EXPECT_EQ(n.runtime.containerId(uid, "c"), "");
  ASSERT_TRUE(n.runtime.exitContainer(setup, 0).ok());
  ASSERT_FALSE(n.waitContainer(uid, "c").empty());
  ASSERT_TRUE(n.waitPod("side", [](const json::Value& p) {
    return json::getStringPath(p, {"status", "phase"}) == "Running" && condition(p, "Ready") == "True";
  })) << json::serialize(n.pod("side"));
  json::Document pod = n.pod("side");
  EXPECT_EQ(condition(pod, "Initialized"), "True");
  EXPECT_EQ(condition(pod, "ContainersReady"), "True");
  const json::Value* cs = containerStatus(pod, "initContainerStatuses", "log");
  ASSERT_NE(cs, nullptr);
  EXPECT_TRUE(json::findPath(*cs, {"state", "running"}));
  EXPECT_TRUE(json::getBool(*cs, "started"));
  EXPECT_TRUE(json::getBool(*cs, "ready"));
  EXPECT_EQ(n.runtime.containerId(uid, "log"), log);  // the same, never restarted
  cs = containerStatus(pod, "initContainerStatuses", "setup");
  ASSERT_NE(cs, nullptr);
  EXPECT_EQ(json::getStringPath(*cs, {"state", "terminated", "reason"}), "Completed");
}

TEST(PodWorkerSidecars, ASidecarThatExitsIsRestartedEvenWithRestartPolicyNever) {
  Node n;
  std::string uid = n.create("side", R"("restartPolicy":"Never",
    "initContainers":[{"name":"log","image":"busybox","restartPolicy":"Always"}],
    "containers":[{"name":"c","image":"busybox"}])");
  ASSERT_TRUE(n.waitPod("side", [](const json::Value& p) {
    return json::getStringPath(p, {"status", "phase"}) == "Running";
  })) << json::serialize(n.pod("side"));
  std::string first = n.runtime.containerId(uid, "log");
  ASSERT_TRUE(n.runtime.exitContainer(first, 1).ok());
  ASSERT_TRUE(n.waitPod("side", [](const json::Value& p) {
    const json::Value* cs = containerStatus(p, "initContainerStatuses", "log");
    return cs && json::getInt(*cs, "restartCount") == 1 && json::findPath(*cs, {"state", "running"});
  })) << json::serialize(n.pod("side"));
  EXPECT_NE(n.runtime.containerId(uid, "log"), first);
  json::Document pod = n.pod("side");
  EXPECT_EQ(json::getStringPath(pod, {"status", "phase"}), "Running");
  const json::Value* cs = containerStatus(pod, "initContainerStatuses", "log");
  EXPECT_EQ(json::getInt(*json::findPath(*cs, {"lastState", "terminated"}), "exitCode"), 1);
}

TEST(PodWorkerSidecars, AJobSucceedsFromItsMainContainersAndItsSidecarsAreStopped) {
  Node n;
  std::string uid = n.create("job", R"("restartPolicy":"Never","terminationGracePeriodSeconds":2,
    "initContainers":[{"name":"log","image":"busybox","restartPolicy":"Always"}],
    "containers":[{"name":"c","image":"busybox"}])");
  std::string main = n.waitContainer(uid, "c");
  ASSERT_FALSE(main.empty());
  ASSERT_TRUE(n.runtime.exitContainer(main, 0).ok());
  ASSERT_TRUE(n.waitPod("job", [](const json::Value& p) {
    return json::getStringPath(p, {"status", "phase"}) == "Succeeded";
  })) << json::serialize(n.pod("job"));
  // The sidecar was stopped (143/137 from the stop does not fail the pod) and not restarted.
  std::string log = n.runtime.containerId(uid, "log");
  auto st = n.runtime.containerStatus(log);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->state(), runtime::v1::CONTAINER_EXITED);
  json::Document pod = n.pod("job");
  const json::Value* cs = containerStatus(pod, "initContainerStatuses", "log");
  ASSERT_NE(cs, nullptr);
  EXPECT_EQ(json::getInt(*cs, "restartCount"), 0);
}

TEST(PodWorkerSidecars, DeletionStopsMainContainersFirstThenSidecarsLastDefinedFirst) {
  Node n;
  std::string uid = n.create("del", R"("terminationGracePeriodSeconds":2,
    "initContainers":[{"name":"s1","image":"busybox","restartPolicy":"Always"},
                      {"name":"s2","image":"busybox","restartPolicy":"Always"}],
    "containers":[{"name":"c","image":"busybox"}])");
  ASSERT_TRUE(n.waitPod("del", [](const json::Value& p) {
    return json::getStringPath(p, {"status", "phase"}) == "Running" && condition(p, "Ready") == "True";
  })) << json::serialize(n.pod("del"));
  std::string s1 = n.runtime.containerId(uid, "s1"), s2 = n.runtime.containerId(uid, "s2"),
              c = n.runtime.containerId(uid, "c");
  ASSERT_TRUE(n.api.del(kPods + "/del", R"({"gracePeriodSeconds":2})").ok());
  ASSERT_TRUE(n.api.waitFor(
      [&] {
        auto r = n.api.get(kPods + "/del");
        return !r.ok() && r.error().code == 404;
      },
      kTimeout));
  auto calls = n.runtime.calls();
  size_t stopC = callIndex(calls, "stopContainer " + c), stopS1 = callIndex(calls, "stopContainer " + s1),
         stopS2 = callIndex(calls, "stopContainer " + s2);
  ASSERT_LT(stopS1, calls.size());
  EXPECT_LT(stopC, stopS2);
  EXPECT_LT(stopS2, stopS1);
}

TEST(FakeRuntime, SandboxesAndContainers) {
  FakeRuntimeOptions o;
  o.node_index = 257;
  o.any_image = true;
  FakeRuntime rt(o);
  runtime::v1::PodSandboxConfig sc;
  sc.mutable_metadata()->set_uid("u1");
  (*sc.mutable_labels())["app"] = "x";
  auto sb = rt.runPodSandbox(sc);
  ASSERT_TRUE(sb.ok());
  auto st = rt.podSandboxStatus(*sb);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->status().network().ip(), "10.129.1.2");
  runtime::v1::PodSandboxFilter f;
  (*f.mutable_label_selector())["app"] = "y";
  EXPECT_TRUE(rt.listPodSandbox(f)->empty());
  runtime::v1::ContainerConfig cc;
  cc.mutable_metadata()->set_name("c");
  cc.mutable_image()->set_image("anything");
  auto id = rt.createContainer(*sb, cc, sc);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(rt.containerStatus(*id)->state(), runtime::v1::CONTAINER_CREATED);
  rt.failNext("startContainer", ApiError::internal("boom"));
  EXPECT_FALSE(rt.startContainer(*id).ok());
  ASSERT_TRUE(rt.startContainer(*id).ok());
  EXPECT_EQ(rt.containerStatus(*id)->state(), runtime::v1::CONTAINER_RUNNING);
  EXPECT_TRUE(rt.execSync(*id, {"true"}, 1).ok());
  ASSERT_TRUE(rt.stopContainer(*id, 0).ok());
  auto exited = rt.containerStatus(*id);
  EXPECT_EQ(exited->state(), runtime::v1::CONTAINER_EXITED);
  EXPECT_EQ(exited->exit_code(), 137);
  EXPECT_GE(exited->finished_at(), exited->started_at());
  ASSERT_TRUE(rt.removePodSandbox(*sb).ok());
  EXPECT_EQ(rt.containerStatus(*id).error().code, 404);
  EXPECT_EQ(rt.exec(runtime::v1::ExecRequest()).error().message, "exec is not supported by the fake runtime");
}
