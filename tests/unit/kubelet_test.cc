// kubelet-lite's pure pieces: environment and downward API, CRI log files, volumes on
// disk, the log endpoint's status checks and query, pod cgroup names. Expectations follow
// upstream's kubelet (pkg/kubelet/kubelet_pods.go, third_party/forked/golang/expansion,
// pkg/fieldpath, pkg/api/v1/resource, pkg/volume/*, pkg/kubelet/kuberuntime/logs).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "kubelet-lite/cgroups.h"
#include "kubelet-lite/cri_log.h"
#include "kubelet-lite/env.h"
#include "kubelet-lite/log_server.h"
#include "kubelet-lite/pod_admission.h"
#include "kubelet-lite/probes.h"
#include "kubelet-lite/volumes.h"
#include "net/http/message.h"
#include "test_util.h"

using namespace shepherd;
using namespace shepherd::kubelet;
namespace fs = std::filesystem;

namespace {

json::Document parseJson(std::string_view text) {
  json::Document d;
  Status st = json::parse(text, d);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message) << "\n" << text;
  return d;
}

// ConfigMaps and Secrets by (resource, namespace, name); records what was asked.
struct FakeData {
  std::map<std::tuple<std::string, std::string, std::string>, std::map<std::string, std::string>> objects;
  std::vector<std::string> asked;

  void put(const std::string& resource, const std::string& ns, const std::string& name,
           std::map<std::string, std::string> data) {
    objects[{resource, ns, name}] = std::move(data);
  }
  DataLookup lookup() {
    return [this](const std::string& resource, const std::string& ns,
                  const std::string& name) -> std::optional<std::map<std::string, std::string>> {
      asked.push_back(resource + "/" + ns + "/" + name);
      auto it = objects.find({resource, ns, name});
      if (it == objects.end()) return std::nullopt;
      return it->second;
    };
  }
};

std::map<std::string, std::string> asMap(const EnvList& env) {
  return {env.begin(), env.end()};
}

std::vector<std::string> names(const EnvList& env) {
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k);
  return out;
}

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int modeOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

bool isMounted(const std::string& path) {
  std::ifstream f("/proc/self/mounts");
  for (std::string line; std::getline(f, line);) {
    std::istringstream ls(line);
    std::string dev, mnt;
    ls >> dev >> mnt;
    if (mnt == path) return true;
  }
  return false;
}

// A pod the environment tests share: metadata, two containers with resources.
constexpr std::string_view kEnvPod = R"({
  "metadata": {"name": "web-1", "namespace": "shop", "uid": "0f1e2d3c-uid",
               "labels": {"tier": "front", "app": "web"},
               "annotations": {"note": "say \"hi\"\nnow"}},
  "spec": {
    "nodeName": "node-a",
    "serviceAccountName": "builder",
    "containers": [
      {"name": "app", "resources": {"limits": {"cpu": "500m", "memory": "256Mi"},
                                    "requests": {"cpu": "250m", "memory": "128Mi"}}},
      {"name": "side", "resources": {"limits": {"memory": "64Mi"}, "requests": {"memory": "32Mi"}}}
    ],
    "initContainers": [
      {"name": "setup", "resources": {"limits": {"cpu": "2"}, "requests": {"cpu": "1"}}}
    ]
  }
})";

PodFacts factsFor(const json::Value& pod) {
  PodFacts f;
  f.pod = &pod;
  f.pod_ip = "10.244.1.7";
  f.host_ip = "192.168.0.10";
  f.node_name = "node-a";
  f.node_cpu = "4";
  f.node_memory = "8Gi";
  return f;
}

// buildEnv for a container whose `env` / `envFrom` are given as JSON, in kEnvPod's first
// container (so resourceFieldRefs without a container name read its resources).
struct EnvCase {
  json::Document pod;
  PodFacts facts;
  explicit EnvCase(std::string_view envJson) : pod(parseJson(kEnvPod)) {
    json::Document extra = parseJson(envJson);
    json::Value& c = pod["spec"]["containers"][0];
    for (auto& m : extra.GetObject())
      json::set(c, json::view(m.name), json::Value(m.value, pod.GetAllocator()), pod.GetAllocator());
    facts = factsFor(pod);
  }
  Result<EnvList> build(FakeData& data) {
    return buildEnv(pod["spec"]["containers"][0], facts, data.lookup());
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------
// expand(): $(VAR) expansion, upstream's expansion.Expand (cases from its expand_test.go).

TEST(Expand, UpstreamCases) {
  std::map<std::string, std::string> env{
      {"VAR_A", "A"}, {"VAR_B", "B"}, {"VAR_C", "C"}, {"VAR_REF", "$(VAR_A)"}, {"VAR_EMPTY", ""}};
  struct Case {
    const char* in;
    const char* want;
  } cases[] = {
      {"$(VAR_A)", "A"},
      {"$(VAR_A)-$(VAR_A)", "A-A"},
      {"$(VAR_A)-1", "A-1"},
      {"___$(VAR_B)___", "___B___"},
      {"___$(VAR_C)", "___C"},
      {"$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"},
      {"$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"},
      {"$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"},
      {"f000-$$VAR_A", "f000-$VAR_A"},
      {"foo\\$(VAR_C)bar", "foo\\Cbar"},
      {"foo\\\\$(VAR_C)bar", "foo\\\\Cbar"},
      {"$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"},
      {"$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"},
      {"$(VAR_REF)", "$(VAR_A)"},  // values are not expanded again
      {"%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"},
      {"foo$(VAR_EMPTY)bar", "foobar"},
      {"foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"},
      {"f00__(VAR_A)__", "f00__(VAR_A)__"},
      {"$?_boo_$!", "$?_boo_$!"},
      {"$VAR_A", "$VAR_A"},
      {"$(VAR_DNE)", "$(VAR_DNE)"},
      {"$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"},
      {"$$$$$$(VAR_A)", "$$$(VAR_A)"},
      {"$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"},
      {"$$$$$$$(VAR_A)", "$$$A"},
      {"$VAR_A)", "$VAR_A)"},
      {"${VAR_A}", "${VAR_A}"},
      {"$(VAR_B)_______$(A", "B_______$(A"},
      {"$(VAR_C)_______$(", "C_______$("},
      {"$(VAR_A)foobarzab$", "Afoobarzab$"},
      {"foo-\\$(VAR_A", "foo-\\$(VAR_A"},
      {"--$($($($($--", "--$($($($($--"},
      {"$($($($($--foo$(", "$($($($($--foo$("},
      {"foo0--$($($($(", "foo0--$($($($("},
      {"$(foo$$var)", "$(foo$$var)"},
      {"\n", "\n"},
      {"", ""},
      {"$", "$"},
      {"$$", "$"},
      {"$()", "$()"},  // an empty name is looked up like any other, and not found
  };
  for (const auto& c : cases) EXPECT_EQ(expand(c.in, env), c.want) << "input: " << c.in;
}

TEST(Expand, EmptyNameResolvesWhenDefined) {
  EXPECT_EQ(expand("<$()>", {{"", "empty"}}), "<empty>");
}

// ---------------------------------------------------------------------------------------
// buildEnv(): upstream's makeEnvironmentVariables.

TEST(BuildEnv, PlainValuesInDeclarationOrder) {
  EnvCase c(R"({"env": [{"name": "Z", "value": "last"}, {"name": "A", "value": "first"},
                        {"name": "EMPTY", "value": ""}, {"name": "NOVALUE"}]})");
  FakeData data;
  auto env = c.build(data);
  ASSERT_TRUE(env.ok()) << env.error().message;
  EXPECT_EQ(names(*env), (std::vector<std::string>{"Z", "A", "EMPTY", "NOVALUE"}));
  EXPECT_EQ(asMap(*env), (std::map<std::string, std::string>{
                             {"Z", "last"}, {"A", "first"}, {"EMPTY", ""}, {"NOVALUE", ""}}));
  EXPECT_TRUE(data.asked.empty());
}

TEST(BuildEnv, ReferencesResolveAgainstEarlierVariablesOnly) {
  EnvCase c(R"j({"env": [
      {"name": "A", "value": "one"},
      {"name": "B", "value": "$(A)-two"},
      {"name": "C", "value": "$(D)/$(B)"},
      {"name": "D", "value": "four"},
      {"name": "A", "value": "changed"},
      {"name": "E", "value": "$(A)+$$(A)+$(UNDEFINED)"}]})j");
  FakeData data;
  auto env = c.build(data);
  ASSERT_TRUE(env.ok()) << env.error().message;
  auto m = asMap(*env);
  EXPECT_EQ(m["B"], "one-two");
  EXPECT_EQ(m["C"], "$(D)/one-two");  // D is declared later: kept as written
  EXPECT_EQ(m["A"], "changed");       // a redeclaration replaces the value
  EXPECT_EQ(m["B"], "one-two");       // ... but not what was expanded from it before
  EXPECT_EQ(m["E"], "changed+$(A)+$(UNDEFINED)");
  EXPECT_EQ(env->size(), 5u);  // A once
}

TEST(BuildEnv, FieldRefs) {
  EnvCase c(R"j({"env": [
      {"name": "NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
      {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
      {"name": "UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}},
      {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
      {"name": "NOTE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['note']"}}},
      {"name": "NOLABEL", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['missing']"}}},
      {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
      {"name": "SA", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
      {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
      {"name": "POD_IPS", "valueFrom": {"fieldRef": {"fieldPath": "status.podIPs"}}},
      {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
      {"name": "HOST_IPS", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIPs"}}},
      {"name": "GREETING", "value": "$(NAME) in $(NS) on $(NODE)"}]})j");
  FakeData data;
  auto env = c.build(data);
  ASSERT_TRUE(env.ok()) << env.error().message;
  auto m = asMap(*env);
  EXPECT_EQ(m["NAME"], "web-1");
  EXPECT_EQ(m["NS"], "shop");
  EXPECT_EQ(m["UID"], "0f1e2d3c-uid");
  EXPECT_EQ(m["APP"], "web");
  EXPECT_EQ(m["NOTE"], "say \"hi\"\nnow");  // a subscript gives the raw value
  EXPECT_EQ(m["NOLABEL"], "");
  EXPECT_EQ(m["NODE"], "node-a");
  EXPECT_EQ(m["SA"], "builder");
  EXPECT_EQ(m["POD_IP"], "10.244.1.7");
  EXPECT_EQ(m["POD_IPS"], "10.244.1.7");
  EXPECT_EQ(m["HOST_IP"], "192.168.0.10");
  EXPECT_EQ(m["HOST_IPS"], "192.168.0.10");
  EXPECT_EQ(m["GREETING"], "web-1 in shop on node-a");
  EXPECT_EQ(env->size(), 13u);
}

TEST(BuildEnv, ResourceFieldRefs) {
  EnvCase c(R"({"env": [
      {"name": "CPU_LIMIT_M", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}},
      {"name": "CPU_LIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
      {"name": "CPU_REQUEST_M", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu", "divisor": "1m"}}},
      {"name": "MEM_LIMIT_MI", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}},
      {"name": "MEM_REQUEST", "valueFrom": {"resourceFieldRef": {"resource": "requests.memory"}}},
      {"name": "SIDE_MEM", "valueFrom": {"resourceFieldRef":
          {"containerName": "side", "resource": "limits.memory", "divisor": "1Mi"}}},
      {"name": "SIDE_CPU", "valueFrom": {"resourceFieldRef":
          {"containerName": "side", "resource": "limits.cpu", "divisor": "1m"}}},
      {"name": "SIDE_CPU_REQUEST", "valueFrom": {"resourceFieldRef":
          {"containerName": "side", "resource": "requests.cpu"}}},
      {"name": "INIT_CPU", "valueFrom": {"resourceFieldRef":
          {"containerName": "setup", "resource": "limits.cpu"}}}]})");
  FakeData data;
  auto env = c.build(data);
  ASSERT_TRUE(env.ok()) << env.error().message;
  auto m = asMap(*env);
  EXPECT_EQ(m["CPU_LIMIT_M"], "500");
  EXPECT_EQ(m["CPU_LIMIT"], "1");  // 0.5 core rounded up
  EXPECT_EQ(m["CPU_REQUEST_M"], "250");
  EXPECT_EQ(m["MEM_LIMIT_MI"], "256");
  EXPECT_EQ(m["MEM_REQUEST"], "134217728");
  EXPECT_EQ(m["SIDE_MEM"], "64");
  EXPECT_EQ(m["SIDE_CPU"], "4000");  // no CPU limit: the node's allocatable (4 cores)
  EXPECT_EQ(m["SIDE_CPU_REQUEST"], "0");
  EXPECT_EQ(m["INIT_CPU"], "2");
}

TEST(BuildEnv, ConfigMapAndSecretKeyRefs) {
  EnvCase c(R"j({"env": [
      {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}},
      {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}},
      {"name": "URL", "value": "db://admin:$(PASSWORD)@host/$(MODE)"}]})j");
  FakeData data;
  data.put("configmaps", "shop", "settings", {{"mode", "fast"}, {"other", "x"}});
  data.put("secrets", "shop", "creds", {{"password", "s3cr3t\n"}});
  auto env = c.build(data);
  ASSERT_TRUE(env.ok()) << env.error().message;
  EXPECT_EQ(names(*env), (std::vector<std::string>{"MODE", "PASSWORD", "URL"}));
  auto m = asMap(*env);
  EXPECT_EQ(m["MODE"], "fast");
  EXPECT_EQ(m["PASSWORD"], "s3cr3t\n");
  EXPECT_EQ(m["URL"], "db://admin:s3cr3t\n@host/fast");
  // Looked up in the pod's namespace, by resource.
  EXPECT_EQ(data.asked, (std::vector<std::string>{"configmaps/shop/settings", "secrets/shop/creds"}));
}

TEST(BuildEnv, OptionalReferencesThatDoNotResolveAreLeftOut) {
  EnvCase c(R"j({
      "envFrom": [{"configMapRef": {"name": "base"}}],
      "env": [
        {"name": "NO_CM", "valueFrom": {"configMapKeyRef": {"name": "absent", "key": "k", "optional": true}}},
        {"name": "NO_KEY", "valueFrom": {"configMapKeyRef": {"name": "base", "key": "nope", "optional": true}}},
        {"name": "NO_SECRET", "valueFrom": {"secretKeyRef": {"name": "absent", "key": "k", "optional": true}}},
        {"name": "NO_SKEY", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "nope", "optional": true}}},
        {"name": "KEEP", "valueFrom": {"configMapKeyRef": {"name": "absent", "key": "k", "optional": true}}},
        {"name": "AFTER", "value": "$(NO_CM)|$(KEEP)"}]})j");
  FakeData data;
  data.put("configmaps", "shop", "base", {{"KEEP", "from-envFrom"}});
  data.put("secrets", "shop", "creds", {{"password", "x"}});
  auto env = c.build(data);
  ASSERT_TRUE(env.ok()) << env.error().message;
  auto m = asMap(*env);
  EXPECT_EQ(m.count("NO_CM"), 0u);
  EXPECT_EQ(m.count("NO_KEY"), 0u);
  EXPECT_EQ(m.count("NO_SECRET"), 0u);
  EXPECT_EQ(m.count("NO_SKEY"), 0u);
  EXPECT_EQ(m["KEEP"], "from-envFrom");  // the unresolved optional ref does not clear it
  EXPECT_EQ(m["AFTER"], "$(NO_CM)|from-envFrom");
  EXPECT_EQ(names(*env), (std::vector<std::string>{"KEEP", "AFTER"}));
}

TEST(BuildEnv, MissingConfigMapOrSecretIsCreateContainerConfigError) {
  FakeData data;
  {
    EnvCase c(R"({"env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "gone", "key": "k"}}}]})");
    auto env = c.build(data);
    ASSERT_FALSE(env.ok());
    EXPECT_EQ(env.error().reason, "CreateContainerConfigError");
    EXPECT_EQ(env.error().message, "configmap \"gone\" not found");
  }
  {
    EnvCase c(R"({"env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "gone", "key": "k"}}}]})");
    auto env = c.build(data);
    ASSERT_FALSE(env.ok());
    EXPECT_EQ(env.error().reason, "CreateContainerConfigError");
    EXPECT_EQ(env.error().message, "secret \"gone\" not found");
  }
}

TEST(BuildEnv, MissingKeyIsCreateContainerConfigError) {
  FakeData data;
  data.put("configmaps", "shop", "settings", {{"mode", "fast"}});
  data.put("secrets", "shop", "creds", {{"password", "x"}});
  {
    EnvCase c(
        R"({"env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "speed"}}}]})");
    auto env = c.build(data);
    ASSERT_FALSE(env.ok());
    EXPECT_EQ(env.error().reason, "CreateContainerConfigError");
    EXPECT_EQ(env.error().message, "couldn't find key speed in ConfigMap shop/settings");
  }
  {
    EnvCase c(
        R"({"env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}}]})");
    auto env = c.build(data);
    ASSERT_FALSE(env.ok());
    EXPECT_EQ(env.error().reason, "CreateContainerConfigError");
    EXPECT_EQ(env.error().message, "couldn't find key token in Secret shop/creds");
  }
}

TEST(BuildEnv, EnvFromWithPrefixAndOverrides) {
  EnvCase c(R"j({
      "envFrom": [
        {"configMapRef": {"name": "base"}},
        {"prefix": "DB_", "secretRef": {"name": "db"}},
        {"configMapRef": {"name": "override"}}],
      "env": [
        {"name": "SHARED", "value": "from-env"},
        {"name": "CONN", "value": "$(DB_user)@$(HOST)"}]})j");
  FakeData data;
  data.put("configmaps", "shop", "base", {{"HOST", "db.local"}, {"SHARED", "base"}, {"LEVEL", "1"}});
  data.put("secrets", "shop", "db", {{"user", "admin"}, {"pass", "pw"}});
  data.put("configmaps", "shop", "override", {{"LEVEL", "2"}});
  auto env = c.build(data);
  ASSERT_TRUE(env.ok()) << env.error().message;
  auto m = asMap(*env);
  EXPECT_EQ(m, (std::map<std::string, std::string>{{"HOST", "db.local"},
                                                   {"SHARED", "from-env"},  // env wins over envFrom
                                                   {"LEVEL", "2"},          // a later source wins
                                                   {"DB_user", "admin"},
                                                   {"DB_pass", "pw"},
                                                   {"CONN", "admin@db.local"}}));
  EXPECT_EQ(env->size(), 6u);
}

TEST(BuildEnv, EnvFromKeepsKeysThatAreNotIdentifiers) {
  // Upstream no longer drops such keys (RelaxedEnvironmentVariableValidation is GA and
  // makeEnvironmentVariables takes every key): they reach the container as they are.
  EnvCase c(R"({"envFrom": [{"prefix": "P_", "configMapRef": {"name": "odd"}}]})");
  FakeData data;
  data.put("configmaps", "shop", "odd", {{"1st", "a"}, {"with-dash", "b"}, {"dotted.key", "c"}});
  auto env = c.build(data);
  ASSERT_TRUE(env.ok()) << env.error().message;
  EXPECT_EQ(asMap(*env), (std::map<std::string, std::string>{
                             {"P_1st", "a"}, {"P_with-dash", "b"}, {"P_dotted.key", "c"}}));
}

TEST(BuildEnv, EnvFromMissingSource) {
  FakeData data;
  {
    EnvCase c(R"({"envFrom": [{"configMapRef": {"name": "gone", "optional": true}},
                              {"secretRef": {"name": "gone2", "optional": true}}],
                  "env": [{"name": "A", "value": "1"}]})");
    auto env = c.build(data);
    ASSERT_TRUE(env.ok()) << env.error().message;
    EXPECT_EQ(asMap(*env), (std::map<std::string, std::string>{{"A", "1"}}));
  }
  {
    EnvCase c(R"({"envFrom": [{"configMapRef": {"name": "gone"}}]})");
    auto env = c.build(data);
    ASSERT_FALSE(env.ok());
    EXPECT_EQ(env.error().reason, "CreateContainerConfigError");
    EXPECT_EQ(env.error().message, "configmap \"gone\" not found");
  }
  {
    EnvCase c(R"({"envFrom": [{"secretRef": {"name": "gone"}}]})");
    auto env = c.build(data);
    ASSERT_FALSE(env.ok());
    EXPECT_EQ(env.error().message, "secret \"gone\" not found");
  }
}

// ---------------------------------------------------------------------------------------
// fieldRef() / resourceFieldRef()

TEST(FieldRef, WholeLabelsAndAnnotationsAsUpstreamFormatMap) {
  // fieldpath.FormatMap: sorted keys, key=%q lines, no newline after the last.
  json::Document pod = parseJson(kEnvPod);
  PodFacts f = factsFor(pod);
  EXPECT_EQ(fieldRef(f, "metadata.labels"), std::optional<std::string>("app=\"web\"\ntier=\"front\""));
  EXPECT_EQ(fieldRef(f, "metadata.annotations"), std::optional<std::string>("note=\"say \\\"hi\\\"\\nnow\""));

  json::Document bare = parseJson(R"({"metadata": {"name": "p", "labels": {}}})");
  PodFacts g = factsFor(bare);
  EXPECT_EQ(fieldRef(g, "metadata.labels"), std::optional<std::string>(""));
  EXPECT_EQ(fieldRef(g, "metadata.annotations"), std::optional<std::string>(""));
}

TEST(FieldRef, QuotesValuesAsGo) {
  json::Document pod = parseJson(
      R"({"metadata": {"annotations": {"b": "tab\there\\back", "a": "ctl\u0001\u007f", "c": "héllo ✓"}}})");
  PodFacts f = factsFor(pod);
  EXPECT_EQ(fieldRef(f, "metadata.annotations"),
            std::optional<std::string>("a=\"ctl\\x01\\x7f\"\nb=\"tab\\there\\\\back\"\nc=\"héllo ✓\""));
}

TEST(FieldRef, PathsAndUnknownPaths) {
  json::Document pod = parseJson(kEnvPod);
  PodFacts f = factsFor(pod);
  EXPECT_EQ(fieldRef(f, "metadata.name"), std::optional<std::string>("web-1"));
  EXPECT_EQ(fieldRef(f, "metadata.labels['tier']"), std::optional<std::string>("front"));
  EXPECT_EQ(fieldRef(f, "metadata.annotations['none']"), std::optional<std::string>(""));
  EXPECT_EQ(fieldRef(f, "spec.nodeName"), std::optional<std::string>("node-a"));
  EXPECT_FALSE(fieldRef(f, "spec.restartPolicy").has_value());
  EXPECT_FALSE(fieldRef(f, "metadata.generation").has_value());
}

TEST(ResourceFieldRef, DivisorsRoundUp) {
  json::Document pod = parseJson(kEnvPod);
  PodFacts f = factsFor(pod);
  struct Case {
    const char* resources;
    const char* resource;
    const char* divisor;
    const char* want;
  } cases[] = {
      {R"({"limits": {"cpu": "250m"}})", "limits.cpu", "1m", "250"},
      {R"({"limits": {"cpu": "250m"}})", "limits.cpu", "", "1"},
      {R"({"limits": {"cpu": "250m"}})", "limits.cpu", "1", "1"},
      {R"({"limits": {"cpu": "1500m"}})", "limits.cpu", "", "2"},
      {R"({"limits": {"cpu": "2"}})", "limits.cpu", "", "2"},
      {R"({"limits": {"cpu": "0.1"}})", "limits.cpu", "1m", "100"},
      {R"({"requests": {"cpu": "100m"}})", "requests.cpu", "1m", "100"},
      {R"({"limits": {"memory": "128Mi"}})", "limits.memory", "1Mi", "128"},
      {R"({"limits": {"memory": "1G"}})", "limits.memory", "1Mi", "954"},  // 953.67 rounded up
      {R"({"limits": {"memory": "64Mi"}})", "limits.memory", "", "67108864"},
      {R"({"limits": {"memory": "1000"}})", "limits.memory", "1k", "1"},
      {R"({"limits": {"memory": "1001"}})", "limits.memory", "1k", "2"},
      {R"({"requests": {"memory": "32Mi"}})", "requests.memory", "1Ki", "32768"},
      {R"({"requests": {"memory": "1Gi"}})", "requests.memory", "1G", "2"},
  };
  for (const auto& c : cases) {
    json::Document container = parseJson(std::string(R"({"name": "x", "resources": )") + c.resources + "}");
    EXPECT_EQ(resourceFieldRef(container, f, c.resource, c.divisor), std::optional<std::string>(c.want))
        << c.resources << " " << c.resource << " / " << c.divisor;
  }
}

TEST(ResourceFieldRef, LimitsDefaultToNodeAllocatable) {
  json::Document pod = parseJson(kEnvPod);
  PodFacts f = factsFor(pod);
  f.node_cpu = "3500m";
  f.node_memory = "2Gi";
  json::Document none = parseJson(R"({"name": "x", "resources": {}})");
  EXPECT_EQ(resourceFieldRef(none, f, "limits.cpu", ""), std::optional<std::string>("4"));
  EXPECT_EQ(resourceFieldRef(none, f, "limits.cpu", "1m"), std::optional<std::string>("3500"));
  EXPECT_EQ(resourceFieldRef(none, f, "limits.memory", "1Mi"), std::optional<std::string>("2048"));
  // A zero limit counts as none (MergeContainerResourceLimits checks IsZero()).
  json::Document zero = parseJson(R"({"name": "x", "resources": {"limits": {"cpu": "0", "memory": "0"}}})");
  EXPECT_EQ(resourceFieldRef(zero, f, "limits.cpu", "1m"), std::optional<std::string>("3500"));
  EXPECT_EQ(resourceFieldRef(zero, f, "limits.memory", "1Mi"), std::optional<std::string>("2048"));
}

TEST(ResourceFieldRef, UnsetRequestsAreZero) {
  // Requests have no node default; the API server copies limits into unset requests
  // before the kubelet sees a pod, so the kubelet itself reads only requests.
  json::Document pod = parseJson(kEnvPod);
  PodFacts f = factsFor(pod);
  json::Document limitsOnly =
      parseJson(R"({"name": "x", "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}})");
  EXPECT_EQ(resourceFieldRef(limitsOnly, f, "requests.cpu", "1m"), std::optional<std::string>("0"));
  EXPECT_EQ(resourceFieldRef(limitsOnly, f, "requests.memory", ""), std::optional<std::string>("0"));
  EXPECT_FALSE(resourceFieldRef(limitsOnly, f, "cpu", "").has_value());
}

// ---------------------------------------------------------------------------------------
// CRI log files.

// Node admission (the kubelet's NodePorts predicate): host ports clash on the same port and
// protocol when either address is 0.0.0.0 or both are the same.
TEST(PodAdmission, RejectsAPodWhoseHostPortIsTaken) {
  auto pod = [](std::string_view ports) {
    return parseJson(std::string(R"({"spec": {"containers": [{"name": "c", "ports": )") + std::string(ports) +
                     "}]}}");
  };
  json::Document taken = pod(R"([{"containerPort": 80, "hostPort": 21017}])");
  std::vector<const json::Value*> active = {&taken};
  auto r = admitPod(pod(R"([{"containerPort": 8080, "hostPort": 21017}])"), active);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, "NodePorts");
  EXPECT_EQ(r->message,
            "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports");
  EXPECT_TRUE(admitPod(pod(R"([{"containerPort": 80, "hostPort": 21018}])"), active) == std::nullopt);
  EXPECT_TRUE(admitPod(pod(R"([{"containerPort": 80, "hostPort": 21017, "protocol": "UDP"}])"), active) ==
              std::nullopt);
  EXPECT_TRUE(admitPod(pod(R"([{"containerPort": 80}])"), active) == std::nullopt);
  json::Document onOne = pod(R"([{"containerPort": 80, "hostPort": 9000, "hostIP": "127.0.0.1"}])");
  std::vector<const json::Value*> one = {&onOne};
  EXPECT_TRUE(admitPod(pod(R"([{"containerPort": 80, "hostPort": 9000, "hostIP": "127.0.0.2"}])"), one) ==
              std::nullopt);
  EXPECT_TRUE(admitPod(pod(R"([{"containerPort": 80, "hostPort": 9000}])"), one));
  EXPECT_TRUE(admitPod(pod(R"([{"containerPort": 80, "hostPort": 9000, "hostIP": "127.0.0.1"}])"), one));
  // Sidecar init containers hold their ports; ordinary init containers do not.
  json::Document sidecar = parseJson(
      R"({"spec": {"containers": [], "initContainers": [{"name": "s", "restartPolicy": "Always",
          "ports": [{"containerPort": 1, "hostPort": 7000}]}, {"name": "i",
          "ports": [{"containerPort": 1, "hostPort": 7001}]}]}})");
  std::vector<const json::Value*> withSidecar = {&sidecar};
  EXPECT_TRUE(admitPod(pod(R"([{"containerPort": 80, "hostPort": 7000}])"), withSidecar));
  EXPECT_TRUE(admitPod(pod(R"([{"containerPort": 80, "hostPort": 7001}])"), withSidecar) == std::nullopt);
}

TEST(CriLog, ParsesLinesWithStreamsAndTimes) {
  auto lines = parseCriLog(
      "2024-05-01T10:00:00.5Z stdout F hello world\n"
      "2024-05-01T10:00:01.123456789Z stderr F oops: spaces  kept \n"
      "2024-05-01T10:00:02Z stdout F \n");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].time, "2024-05-01T10:00:00.5Z");
  EXPECT_EQ(lines[0].stream, "stdout");
  EXPECT_EQ(lines[0].text, "hello world\n");
  EXPECT_EQ(lines[1].stream, "stderr");
  EXPECT_EQ(lines[1].text, "oops: spaces  kept \n");
  EXPECT_EQ(lines[2].text, "\n");  // an empty line
}

TEST(CriLog, JoinsPartialRecords) {
  auto lines = parseCriLog(
      "2024-05-01T10:00:00Z stdout P first pa\n"
      "2024-05-01T10:00:00.1Z stdout P rt, sec\n"
      "2024-05-01T10:00:00.2Z stdout F ond part\n"
      "2024-05-01T10:00:01Z stderr F alone\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text, "first part, second part\n");
  EXPECT_EQ(lines[0].stream, "stdout");
  EXPECT_EQ(lines[0].time, "2024-05-01T10:00:00.2Z");
  EXPECT_EQ(lines[1].text, "alone\n");
  EXPECT_EQ(lines[1].stream, "stderr");
}

TEST(CriLog, IncompleteRecordIsLeftForLater) {
  std::string done = "2024-05-01T10:00:00Z stdout F one\n2024-05-01T10:00:01Z stdout F two\n";
  std::string content = done + "2024-05-01T10:00:02Z stdout F thr";
  std::vector<LogLine> out;
  size_t used = parseCriLogComplete(content, out);
  EXPECT_EQ(used, done.size());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].text, "two\n");
  // The writer finishes the record; reading on from `used` yields just it.
  content += "ee\n";
  std::vector<LogLine> more;
  size_t used2 = parseCriLogComplete(std::string_view(content).substr(used), more);
  EXPECT_EQ(used2, content.size() - used);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].text, "three\n");
}

TEST(CriLog, PendingPartialIsNotConsumed) {
  std::string full = "2024-05-01T10:00:00Z stdout F one\n";
  std::string content = full + "2024-05-01T10:00:01Z stdout P half \n";
  std::vector<LogLine> out;
  size_t used = parseCriLogComplete(content, out);
  EXPECT_EQ(used, full.size());  // the partial is read again with its continuation
  ASSERT_EQ(out.size(), 1u);
  content += "2024-05-01T10:00:02Z stdout F done\n";
  std::vector<LogLine> more;
  EXPECT_EQ(parseCriLogComplete(std::string_view(content).substr(used), more), content.size() - used);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].text, "half done\n");
  EXPECT_EQ(parseCriLogComplete("", more), 0u);
  EXPECT_EQ(more.size(), 1u);
}

TEST(CriLog, TrailingPartialEndsTheLogWithoutNewline) {
  // `echo -n DONE` at the end of a run: containerd writes a partial record nothing
  // continues; upstream's ReadLogs writes its text as is (the FallbackToLogsOnError
  // termination message of such a container is "DONE").
  std::string content =
      "2024-05-01T10:00:00Z stdout F one\n"
      "2024-05-01T10:00:01Z stderr P DO\n"
      "2024-05-01T10:00:02Z stderr P NE\n";
  auto lines = parseCriLog(content);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text, "one\n");
  EXPECT_EQ(lines[1].text, "DONE");
  EXPECT_EQ(lines[1].stream, "stderr");
  EXPECT_EQ(lines[1].time, "2024-05-01T10:00:02Z");
  EXPECT_EQ(renderLog(lines, {}), "one\nDONE");
  LogOptions tail;
  tail.tail_lines = 1;
  EXPECT_EQ(renderLog(lines, tail), "DONE");
  EXPECT_EQ(renderLog(parseCriLog("2024-05-01T10:00:00Z stdout P DONE\n"), {}), "DONE");
  // A file still being written keeps the partial for its continuation.
  std::vector<LogLine> out;
  EXPECT_EQ(parseCriLogComplete(content, out), std::string("2024-05-01T10:00:00Z stdout F one\n").size());
  ASSERT_EQ(out.size(), 1u);
  // A record still being written (no newline yet) is not output.
  EXPECT_EQ(parseCriLog("2024-05-01T10:00:00Z stdout P DO").size(), 0u);
}

TEST(CriLog, SkipsRecordsUpstreamRejects) {
  auto lines = parseCriLog(
      "garbage\n"
      "2024-05-01T10:00:00Z stdout\n"                // no tag
      "2024-05-01T10:00:00Z stdout F\n"              // no tag delimiter
      "2024-05-01T10:00:00Z stdin F wrong stream\n"  // not stdout/stderr
      "yesterday stdout F bad time\n"
      "2024-05-01T10:00:01Z stdout F:x future tags\n"
      "2024-05-01T10:00:02Z stdout P:x joined \n"
      "2024-05-01T10:00:03Z stdout F too\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text, "future tags\n");
  EXPECT_EQ(lines[1].text, "joined too\n");
}

namespace {
std::vector<LogLine> sampleLog() {
  return parseCriLog(
      "2024-05-01T10:00:00Z stdout F one\n"
      "2024-05-01T10:00:01.5Z stderr F two\n"
      "2024-05-01T10:00:02.123456789Z stdout F three\n"
      "2024-05-01T12:00:03.25+02:00 stdout F four\n");
}
}  // namespace

TEST(RenderLog, PlainText) {
  EXPECT_EQ(renderLog(sampleLog(), {}), "one\ntwo\nthree\nfour\n");
  EXPECT_EQ(renderLog({}, {}), "");
}

TEST(RenderLog, TimestampsInUpstreamFixedNanoFormat) {
  LogOptions o;
  o.timestamps = true;
  EXPECT_EQ(renderLog(sampleLog(), o),
            "2024-05-01T10:00:00.000000000Z one\n"
            "2024-05-01T10:00:01.500000000Z two\n"
            "2024-05-01T10:00:02.123456789Z three\n"
            "2024-05-01T12:00:03.250000000+02:00 four\n");
  auto utc = parseCriLog("2024-05-01T10:00:00.1+00:00 stdout F x\n");
  EXPECT_EQ(renderLog(utc, o), "2024-05-01T10:00:00.100000000Z x\n");
}

TEST(RenderLog, TailLines) {
  LogOptions o;
  o.tail_lines = 2;
  EXPECT_EQ(renderLog(sampleLog(), o), "three\nfour\n");
  o.tail_lines = 0;
  EXPECT_EQ(renderLog(sampleLog(), o), "");
  o.tail_lines = 10;
  EXPECT_EQ(renderLog(sampleLog(), o), "one\ntwo\nthree\nfour\n");
  o.tail_lines = -1;  // upstream's "all"
  EXPECT_EQ(renderLog(sampleLog(), o), "one\ntwo\nthree\nfour\n");
}

TEST(RenderLog, LimitBytesCutsTheOutput) {
  LogOptions o;
  o.limit_bytes = 6;
  EXPECT_EQ(renderLog(sampleLog(), o), "one\ntw");
  o.limit_bytes = 4;
  EXPECT_EQ(renderLog(sampleLog(), o), "one\n");
  o.limit_bytes = 1000;
  EXPECT_EQ(renderLog(sampleLog(), o), "one\ntwo\nthree\nfour\n");
  o.limit_bytes = 36;  // the timestamps count
  o.timestamps = true;
  EXPECT_EQ(renderLog(sampleLog(), o), "2024-05-01T10:00:00.000000000Z one\n2");
  o.tail_lines = 1;
  o.limit_bytes = 10;
  o.timestamps = false;
  EXPECT_EQ(renderLog(sampleLog(), o), "four\n");
}

TEST(RenderLog, SinceSkipsOlderLines) {
  LogOptions o;
  o.since = *clock::parseRfc3339("2024-05-01T10:00:01.5Z");
  EXPECT_EQ(renderLog(sampleLog(), o), "two\nthree\nfour\n");  // a line at `since` is kept
  o.since = *clock::parseRfc3339("2024-05-01T10:00:01.6Z");
  EXPECT_EQ(renderLog(sampleLog(), o), "three\nfour\n");
  o.since = *clock::parseRfc3339("2024-05-01T10:00:03.5Z");  // 12:00:03.25+02:00 is before
  EXPECT_EQ(renderLog(sampleLog(), o), "");
}

TEST(RenderLog, TailIsTakenBeforeSince) {
  // Upstream tails the file, then drops what is older than `since`, line by line (a
  // clock step back in the middle of a log does not hide what comes after it).
  auto lines = parseCriLog(
      "2024-05-01T10:00:05Z stdout F a\n"
      "2024-05-01T10:00:01Z stdout F b\n"
      "2024-05-01T10:00:06Z stdout F c\n");
  LogOptions o;
  o.since = *clock::parseRfc3339("2024-05-01T10:00:04Z");
  EXPECT_EQ(renderLog(lines, o), "a\nc\n");
  o.tail_lines = 2;
  EXPECT_EQ(renderLog(lines, o), "c\n");
}

// ---------------------------------------------------------------------------------------
// Volumes.

namespace {

struct VolumeCase {
  testutil::TempDir tmp;
  json::Document pod;
  PodFacts facts;
  FakeData data;

  explicit VolumeCase(std::string_view volumesJson,
                      std::string_view containersJson = R"([{"name": "app"}])") {
    std::string text = std::string(R"({"metadata": {"name": "vol-pod", "namespace": "ns1", "uid": "uid-9",
        "labels": {"b": "2", "a": "1"}, "annotations": {"k": "v\"q"}},
        "spec": {"containers": )") +
                       std::string(containersJson) + R"(, "volumes": )" + std::string(volumesJson) + "}}";
    pod = parseJson(text);
    facts = factsFor(pod);
  }
  std::string podDir() const { return tmp.path() + "/pod"; }
  std::string vol(const std::string& name) const { return podDir() + "/volumes/" + name; }
  Result<PreparedVolumes> prepare() { return prepareVolumes(podDir(), facts, data.lookup()); }
};

std::set<std::string> filesUnder(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (!it->is_directory()) out.insert(it->path().lexically_relative(dir).string());
  return out;
}

}  // namespace

TEST(Volumes, EmptyDirOnDisk) {
  VolumeCase c(R"([{"name": "scratch", "emptyDir": {}}])");
  ASSERT_FALSE(c.tmp.path().empty());
  auto v = c.prepare();
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->host_paths.at("scratch"), c.vol("scratch"));
  EXPECT_TRUE(fs::is_directory(c.vol("scratch")));
  EXPECT_EQ(modeOf(c.vol("scratch")), 0777);
  EXPECT_TRUE(v->tmpfs_mounts.empty());
  // What a container wrote survives a second prepare.
  std::ofstream(c.vol("scratch") + "/data") << "kept";
  ASSERT_TRUE(c.prepare().ok());
  EXPECT_EQ(readFile(c.vol("scratch") + "/data"), "kept");
}

TEST(Volumes, EmptyDirInMemory) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting tmpfs needs root";
  VolumeCase c(R"([{"name": "ram", "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"}}])");
  auto v = c.prepare();
  ASSERT_TRUE(v.ok()) << v.error().message;
  std::string dir = c.vol("ram");
  if (v->tmpfs_mounts.empty()) {
    teardownVolumes(c.podDir());
    GTEST_SKIP() << "tmpfs cannot be mounted here";
  }
  EXPECT_EQ(v->tmpfs_mounts, std::vector<std::string>{dir});
  EXPECT_TRUE(isMounted(dir));
  // The sizeLimit is the tmpfs size (in bytes: tmpfs does not read "Mi").
  std::ifstream mounts("/proc/self/mounts");
  std::string options;
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream ls(line);
    std::string dev, mnt, type, opts;
    ls >> dev >> mnt >> type >> opts;
    if (mnt == dir) {
      EXPECT_EQ(type, "tmpfs");
      options = opts;
    }
  }
  EXPECT_NE(options.find("size=1024k"), std::string::npos) << options;
  // Preparing again (the next container) keeps the same mount and its content.
  std::ofstream(dir + "/data") << "in memory";
  auto again = c.prepare();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(readFile(dir + "/data"), "in memory");
  EXPECT_EQ(again->tmpfs_mounts, std::vector<std::string>{dir});
  teardownVolumes(c.podDir());
  EXPECT_FALSE(isMounted(dir));
  EXPECT_FALSE(fs::exists(c.podDir()));
}

TEST(Volumes, ConfigMapAllKeys) {
  VolumeCase c(R"([{"name": "cfg", "configMap": {"name": "settings"}}])");
  c.data.put("configmaps", "ns1", "settings", {{"a.conf", "alpha\n"}, {"b", "beta"}});
  auto v = c.prepare();
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->host_paths.at("cfg"), c.vol("cfg"));
  EXPECT_EQ(filesUnder(c.vol("cfg")), (std::set<std::string>{"a.conf", "b"}));
  EXPECT_EQ(readFile(c.vol("cfg") + "/a.conf"), "alpha\n");
  EXPECT_EQ(readFile(c.vol("cfg") + "/b"), "beta");
  EXPECT_EQ(modeOf(c.vol("cfg") + "/a.conf"), 0644);
  EXPECT_EQ(c.data.asked, (std::vector<std::string>{"configmaps/ns1/settings"}));
}

TEST(Volumes, ConfigMapItemsWithPathsAndModes) {
  VolumeCase c(R"([{"name": "cfg", "configMap": {"name": "settings", "defaultMode": 416, "items": [
      {"key": "a", "path": "nested/dir/a.txt", "mode": 256},
      {"key": "b", "path": "b-renamed"}]}}])");
  c.data.put("configmaps", "ns1", "settings", {{"a", "A"}, {"b", "B"}, {"unlisted", "U"}});
  auto v = c.prepare();
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(filesUnder(c.vol("cfg")), (std::set<std::string>{"nested/dir/a.txt", "b-renamed"}));
  EXPECT_EQ(readFile(c.vol("cfg") + "/nested/dir/a.txt"), "A");
  EXPECT_EQ(modeOf(c.vol("cfg") + "/nested/dir/a.txt"), 0400);  // the item's mode
  EXPECT_EQ(readFile(c.vol("cfg") + "/b-renamed"), "B");
  EXPECT_EQ(modeOf(c.vol("cfg") + "/b-renamed"), 0640);  // defaultMode 416
}

TEST(Volumes, ConfigMapMissing) {
  {
    VolumeCase c(R"([{"name": "cfg", "configMap": {"name": "absent", "optional": true}}])");
    auto v = c.prepare();
    ASSERT_TRUE(v.ok()) << v.error().message;
    EXPECT_TRUE(fs::is_directory(c.vol("cfg")));
    EXPECT_TRUE(filesUnder(c.vol("cfg")).empty());
  }
  {
    VolumeCase c(R"([{"name": "cfg", "configMap": {"name": "absent"}}])");
    auto v = c.prepare();
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().reason, "FailedMount");
    EXPECT_EQ(v.error().message, "configmap \"absent\" not found");
  }
}

TEST(Volumes, ConfigMapItemWithMissingKey) {
  {
    VolumeCase c(
        R"([{"name": "cfg", "configMap": {"name": "settings", "items": [{"key": "nope", "path": "x"}]}}])");
    c.data.put("configmaps", "ns1", "settings", {{"a", "A"}});
    auto v = c.prepare();
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().reason, "FailedMount");
    EXPECT_EQ(v.error().message, "configmap references non-existent config key: nope");
  }
  {
    VolumeCase c(R"([{"name": "cfg", "configMap": {"name": "settings", "optional": true,
                        "items": [{"key": "nope", "path": "x"}, {"key": "a", "path": "y"}]}}])");
    c.data.put("configmaps", "ns1", "settings", {{"a", "A"}});
    auto v = c.prepare();
    ASSERT_TRUE(v.ok()) << v.error().message;
    EXPECT_EQ(filesUnder(c.vol("cfg")), (std::set<std::string>{"y"}));
  }
}

TEST(Volumes, Secret) {
  VolumeCase c(R"([{"name": "creds", "secret": {"secretName": "db", "defaultMode": 256}}])");
  c.data.put("secrets", "ns1", "db", {{"username", "admin"}, {"password", "pw"}});
  auto v = c.prepare();
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(filesUnder(c.vol("creds")), (std::set<std::string>{"username", "password"}));
  EXPECT_EQ(readFile(c.vol("creds") + "/username"), "admin");
  EXPECT_EQ(modeOf(c.vol("creds") + "/username"), 0400);
  EXPECT_EQ(c.data.asked, (std::vector<std::string>{"secrets/ns1/db"}));

  VolumeCase missing(R"([{"name": "creds", "secret": {"secretName": "gone"}}])");
  auto m = missing.prepare();
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().reason, "FailedMount");
  EXPECT_EQ(m.error().message, "secret \"gone\" not found");

  VolumeCase badKey(
      R"([{"name": "creds", "secret": {"secretName": "db", "items": [{"key": "token", "path": "t"}]}}])");
  badKey.data.put("secrets", "ns1", "db", {{"username", "admin"}});
  auto k = badKey.prepare();
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error().message, "references non-existent secret key: token");

  VolumeCase optional(R"([{"name": "creds", "secret": {"secretName": "gone", "optional": true}}])");
  ASSERT_TRUE(optional.prepare().ok());
  EXPECT_TRUE(filesUnder(optional.vol("creds")).empty());
}

TEST(Volumes, DownwardAPI) {
  VolumeCase c(
      R"([{"name": "info", "downwardAPI": {"defaultMode": 420, "items": [
      {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
      {"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}},
      {"path": "meta/name", "fieldRef": {"fieldPath": "metadata.name"}, "mode": 384},
      {"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}},
      {"path": "label-a", "fieldRef": {"fieldPath": "metadata.labels['a']"}},
      {"path": "mem", "resourceFieldRef": {"containerName": "app", "resource": "limits.memory", "divisor": "1Mi"}},
      {"path": "cpu", "resourceFieldRef": {"containerName": "app", "resource": "requests.cpu", "divisor": "1m"}}]}}])",
      R"([{"name": "app", "resources": {"limits": {"memory": "96Mi"}, "requests": {"cpu": "300m"}}}])");
  auto v = c.prepare();
  ASSERT_TRUE(v.ok()) << v.error().message;
  std::string d = c.vol("info");
  EXPECT_EQ(readFile(d + "/labels"), "a=\"1\"\nb=\"2\"");
  EXPECT_EQ(readFile(d + "/annotations"), "k=\"v\\\"q\"");
  EXPECT_EQ(readFile(d + "/meta/name"), "vol-pod");
  EXPECT_EQ(modeOf(d + "/meta/name"), 0600);
  EXPECT_EQ(readFile(d + "/namespace"), "ns1");
  EXPECT_EQ(modeOf(d + "/namespace"), 0644);
  EXPECT_EQ(readFile(d + "/label-a"), "1");
  EXPECT_EQ(readFile(d + "/mem"), "96");
  EXPECT_EQ(readFile(d + "/cpu"), "300");
}

TEST(Volumes, ProjectedMixesSources) {
  VolumeCase c(R"([{"name": "all", "projected": {"defaultMode": 288, "sources": [
      {"configMap": {"name": "settings", "items": [{"key": "mode", "path": "config/mode"}]}},
      {"secret": {"name": "db", "items": [{"key": "password", "path": "secret/password", "mode": 256}]}},
      {"secret": {"name": "absent", "optional": true}},
      {"downwardAPI": {"items": [{"path": "podname", "fieldRef": {"fieldPath": "metadata.name"}}]}}]}}])");
  c.data.put("configmaps", "ns1", "settings", {{"mode", "fast"}, {"other", "no"}});
  c.data.put("secrets", "ns1", "db", {{"password", "pw"}});
  auto v = c.prepare();
  ASSERT_TRUE(v.ok()) << v.error().message;
  std::string d = c.vol("all");
  EXPECT_EQ(v->host_paths.at("all"), d);
  EXPECT_EQ(filesUnder(d), (std::set<std::string>{"config/mode", "secret/password", "podname"}));
  EXPECT_EQ(readFile(d + "/config/mode"), "fast");
  EXPECT_EQ(modeOf(d + "/config/mode"), 0440);  // the projection's defaultMode (288)
  EXPECT_EQ(readFile(d + "/secret/password"), "pw");
  EXPECT_EQ(modeOf(d + "/secret/password"), 0400);
  EXPECT_EQ(readFile(d + "/podname"), "vol-pod");
  EXPECT_EQ(modeOf(d + "/podname"), 0440);

  VolumeCase missing(R"([{"name": "all", "projected": {"sources": [{"configMap": {"name": "gone"}}]}}])");
  auto m = missing.prepare();
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "configmap \"gone\" not found");
}

TEST(Volumes, RePrepareFollowsTheConfigMap) {
  VolumeCase c(R"([{"name": "cfg", "configMap": {"name": "settings"}},
                   {"name": "all", "projected": {"sources": [{"configMap": {"name": "settings"}}]}}])");
  c.data.put("configmaps", "ns1", "settings", {{"keep", "1"}, {"change", "old"}, {"drop", "x"}});
  ASSERT_TRUE(c.prepare().ok());
  EXPECT_EQ(filesUnder(c.vol("cfg")), (std::set<std::string>{"keep", "change", "drop"}));
  // The ConfigMap changes: a value, a key removed, a key added.
  c.data.put("configmaps", "ns1", "settings", {{"keep", "1"}, {"change", "new"}, {"added", "y"}});
  auto v = c.prepare();
  ASSERT_TRUE(v.ok()) << v.error().message;
  for (const char* vol : {"cfg", "all"}) {
    std::string d = c.vol(vol);
    EXPECT_EQ(filesUnder(d), (std::set<std::string>{"keep", "change", "added"})) << vol;
    EXPECT_EQ(readFile(d + "/change"), "new") << vol;
    EXPECT_EQ(readFile(d + "/added"), "y") << vol;
  }
  // An optional ConfigMap that goes away empties the volume.
  VolumeCase o(R"([{"name": "cfg", "configMap": {"name": "settings", "optional": true}}])");
  o.data.put("configmaps", "ns1", "settings", {{"a", "1"}});
  ASSERT_TRUE(o.prepare().ok());
  EXPECT_EQ(filesUnder(o.vol("cfg")), (std::set<std::string>{"a"}));
  o.data.objects.clear();
  ASSERT_TRUE(o.prepare().ok());
  EXPECT_TRUE(filesUnder(o.vol("cfg")).empty());
}

TEST(Volumes, HostPathDirectoryOrCreate) {
  testutil::TempDir host;
  mode_t old = umask(022);
  std::string path = host.path() + "/made/deep";
  VolumeCase c(R"([{"name": "h", "hostPath": {"path": ")" + path + R"(", "type": "DirectoryOrCreate"}}])");
  auto v = c.prepare();
  umask(old);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->host_paths.at("h"), path);  // the host path itself, nothing under the pod
  EXPECT_TRUE(fs::is_directory(path));
  EXPECT_EQ(modeOf(path), 0755);
  EXPECT_FALSE(fs::exists(c.vol("h")));
  // Existing: used as it is (content kept).
  std::ofstream(path + "/f") << "x";
  ASSERT_TRUE(c.prepare().ok());
  EXPECT_EQ(readFile(path + "/f"), "x");
  // A file where a directory is wanted fails the type check.
  std::string file = host.path() + "/plain";
  std::ofstream(file) << "x";
  VolumeCase f(R"([{"name": "h", "hostPath": {"path": ")" + file + R"(", "type": "DirectoryOrCreate"}}])");
  auto e = f.prepare();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().reason, "FailedMount");
  EXPECT_EQ(e.error().message, "hostPath type check failed: " + file + " is not a directory");
}

TEST(Volumes, HostPathTypes) {
  testutil::TempDir host;
  std::string dir = host.path();
  std::string file = dir + "/file";
  std::ofstream(file) << "x";
  auto check = [&](const std::string& path, const std::string& type) {
    VolumeCase c(R"([{"name": "h", "hostPath": {"path": ")" + path + R"(", "type": ")" + type + R"("}}])");
    auto v = c.prepare();
    return v.ok() ? std::string("ok") : v.error().message;
  };
  EXPECT_EQ(check(dir, "Directory"), "ok");
  EXPECT_EQ(check(dir + "/none", "Directory"),
            "hostPath type check failed: " + dir + "/none is not a directory");
  EXPECT_EQ(check(file, "Directory"), "hostPath type check failed: " + file + " is not a directory");
  EXPECT_EQ(check(file, "File"), "ok");
  EXPECT_EQ(check(dir, "File"), "hostPath type check failed: " + dir + " is not a file");
  EXPECT_EQ(check(dir, "FileOrCreate"), "hostPath type check failed: " + dir + " is not a file");
  EXPECT_EQ(check(file, "Socket"), "hostPath type check failed: " + file + " is not a socket file");
  EXPECT_EQ(check(file, "CharDevice"), "hostPath type check failed: " + file + " is not a character device");
  EXPECT_EQ(check("/dev/null", "CharDevice"), "ok");
  EXPECT_EQ(check(file, "BlockDevice"), "hostPath type check failed: " + file + " is not a block device");
  EXPECT_EQ(check(dir + "/anything", ""), "ok");  // no type: no check
  EXPECT_EQ(check(dir, "Weird"), "Weird is an invalid volume type");
  // FileOrCreate makes the file (0644, empty) but not its parent directory.
  mode_t old = umask(022);
  EXPECT_EQ(check(dir + "/new-file", "FileOrCreate"), "ok");
  umask(old);
  EXPECT_TRUE(fs::is_regular_file(dir + "/new-file"));
  EXPECT_EQ(modeOf(dir + "/new-file"), 0644);
  EXPECT_EQ(readFile(dir + "/new-file"), "");
  EXPECT_EQ(check(dir + "/no-dir/f", "FileOrCreate"), "open " + dir + "/no-dir/f: No such file or directory");
  EXPECT_FALSE(fs::exists(dir + "/no-dir"));
  // A socket.
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sock = dir + "/s.sock";
  ASSERT_LT(sock.size(), sizeof(addr.sun_path));
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(check(sock, "Socket"), "ok");
  close(fd);
}

TEST(Volumes, NoVolumesAndTeardown) {
  VolumeCase none(R"([])");
  auto v = none.prepare();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->host_paths.empty());

  VolumeCase c(R"([{"name": "scratch", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "s"}}])");
  c.data.put("configmaps", "ns1", "s", {{"a", "1"}});
  ASSERT_TRUE(c.prepare().ok());
  ASSERT_TRUE(fs::exists(c.vol("cfg") + "/a"));
  teardownVolumes(c.podDir());
  EXPECT_FALSE(fs::exists(c.podDir()));
  EXPECT_TRUE(fs::exists(c.tmp.path()));
}

TEST(WriteFileAtomic, WritesReplacesAndSetsMode) {
  testutil::TempDir tmp;
  std::string p = tmp.path() + "/f";
  ASSERT_TRUE(writeFileAtomic(p, "first", 0600));
  EXPECT_EQ(readFile(p), "first");
  EXPECT_EQ(modeOf(p), 0600);
  std::string binary("a\0b\nc", 5);
  ASSERT_TRUE(writeFileAtomic(p, binary, 0444));
  EXPECT_EQ(readFile(p), binary);
  EXPECT_EQ(modeOf(p), 0444);
  ASSERT_TRUE(writeFileAtomic(p, "", 0755));
  EXPECT_EQ(readFile(p), "");
  EXPECT_EQ(modeOf(p), 0755);
  // Nothing but the file is left behind.
  EXPECT_EQ(filesUnder(tmp.path()), (std::set<std::string>{"f"}));
  EXPECT_FALSE(writeFileAtomic(tmp.path() + "/no/such/dir/f", "x", 0644));
}

TEST(HostsFile, ManagedContentAsUpstream) {
  const std::string header =
      "# Kubernetes-managed hosts file.\n"
      "127.0.0.1\tlocalhost\n"
      "::1\tlocalhost ip6-localhost ip6-loopback\n"
      "fe00::0\tip6-localnet\n"
      "fe00::0\tip6-mcastprefix\n"
      "fe00::1\tip6-allnodes\n"
      "fe00::2\tip6-allrouters\n";
  json::Document plain = parseJson(R"({"metadata": {"name": "web", "namespace": "default"}, "spec": {}})");
  EXPECT_EQ(hostsFile(plain, "10.1.2.3"), header + "10.1.2.3\tweb\n");
  EXPECT_EQ(hostsFile(plain, ""), header);

  json::Document named = parseJson(
      R"({"metadata": {"name": "web-0", "namespace": "ns1"}, "spec": {"hostname": "db", "subdomain": "cluster"}})");
  EXPECT_EQ(hostsFile(named, "10.1.2.3"), header + "10.1.2.3\tdb.cluster.ns1.svc.cluster.local\tdb\n");

  json::Document aliased = parseJson(R"({"metadata": {"name": "web", "namespace": "default"}, "spec": {
      "hostAliases": [{"ip": "127.0.0.1", "hostnames": ["foo.local", "bar.local"]},
                      {"ip": "10.1.2.4", "hostnames": ["foo.remote"]}]}})");
  EXPECT_EQ(hostsFile(aliased, "10.1.2.3"), header +
                                                "10.1.2.3\tweb\n"
                                                "\n"
                                                "# Entries added by HostAliases.\n"
                                                "127.0.0.1\tfoo.local\tbar.local\n"
                                                "10.1.2.4\tfoo.remote\n");
}

TEST(HostsFile, WrittenForAPodWithoutADirectory) {
  // A pod without volumes has no pod directory when its first container starts.
  testutil::TempDir tmp;
  json::Document pod = parseJson(R"({"metadata": {"name": "web", "namespace": "default"},
      "spec": {"hostAliases": [{"ip": "123.45.67.89", "hostnames": ["foo", "bar"]}]}})");
  std::string podDir = tmp.path() + "/pods/uid-1";
  auto path = writeHostsFile(podDir, pod, "10.1.2.3");
  ASSERT_TRUE(path.ok()) << path.error().message;
  EXPECT_EQ(path.value(), podDir + "/etc-hosts");
  EXPECT_TRUE(fs::is_regular_file(path.value()));
  EXPECT_EQ(readFile(path.value()), hostsFile(pod, "10.1.2.3"));
  EXPECT_NE(readFile(path.value()).find("123.45.67.89\tfoo\tbar\n"), std::string::npos);
  EXPECT_EQ(modeOf(path.value()), 0644);

  // An empty directory a runtime made in the file's place (bind mount of a missing source)
  // is replaced by the file; rewriting follows the pod's IP.
  fs::remove(path.value());
  fs::create_directory(path.value());
  path = writeHostsFile(podDir, pod, "10.1.2.4");
  ASSERT_TRUE(path.ok()) << path.error().message;
  EXPECT_TRUE(fs::is_regular_file(path.value()));
  EXPECT_EQ(readFile(path.value()), hostsFile(pod, "10.1.2.4"));

  // A path that cannot be a directory is an error.
  std::string file = tmp.path() + "/file";
  ASSERT_TRUE(writeFileAtomic(file, "x", 0644));
  EXPECT_FALSE(writeHostsFile(file + "/pod", pod, "10.1.2.3").ok());
}

TEST(PodHostname, LongNamesAreCutTo63WithoutTrailingSeparators) {
  json::Document shortName = parseJson(R"({"metadata": {"name": "web"}, "spec": {}})");
  EXPECT_EQ(podHostname(shortName), "web");
  json::Document explicitName = parseJson(R"({"metadata": {"name": "web"}, "spec": {"hostname": "db"}})");
  EXPECT_EQ(podHostname(explicitName), "db");
  // 62 characters, then '-' at position 63: the cut drops the dash as well.
  std::string name = std::string(62, 'a') + "-bcdef";
  json::Document longName = parseJson(R"({"metadata": {"name": ")" + name + R"("}, "spec": {}})");
  EXPECT_EQ(podHostname(longName), std::string(62, 'a'));
  std::string exact(63, 'z');
  json::Document exactName = parseJson(R"({"metadata": {"name": ")" + exact + R"("}, "spec": {}})");
  EXPECT_EQ(podHostname(exactName), exact);
  EXPECT_EQ(hostsFile(longName, "10.1.2.3").substr(hostsFile(longName, "").size()),
            "10.1.2.3\t" + std::string(62, 'a') + "\n");
}

// ---------------------------------------------------------------------------------------
// The log endpoint: which run a request reads, and its options.

namespace {

Result<LogTarget> logStatus(std::string_view statusJson, const std::string& container, bool previous) {
  json::Document pod =
      parseJson(std::string(R"({"metadata": {"name": "p1", "namespace": "ns"}, "status": )") +
                std::string(statusJson) + "}");
  return checkContainerLogStatus(pod, container, previous);
}

constexpr std::string_view kTerminated =
    R"({"exitCode": 1, "reason": "Error", "containerID": "containerd://abc"})";

std::string withState(std::string_view state, std::string_view lastState = "{}") {
  return std::string(R"({"containerStatuses": [{"name": "app", "state": )") + std::string(state) +
         R"(, "lastState": )" + std::string(lastState) + "}]}";
}

}  // namespace

TEST(LogStatus, RunningAndTerminatedReadTheLatestRun) {
  auto r = logStatus(withState(R"({"running": {"startedAt": "2024-05-01T10:00:00Z"}})"), "app", false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->skip, 0u);
  auto t =
      logStatus(withState(std::string(R"({"terminated": )") + std::string(kTerminated) + "}"), "app", false);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->skip, 0u);
}

TEST(LogStatus, WaitingWithoutAPreviousRunHasNoLogs) {
  auto r = logStatus(withState(R"({"waiting": {"reason": "ContainerCreating"}})"), "app", false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 400);
  EXPECT_EQ(r.error().reason, "BadRequest");
  EXPECT_EQ(r.error().message, "container \"app\" in pod \"p1\" is waiting to start: ContainerCreating");
  auto init = logStatus(withState(R"({"waiting": {"reason": "PodInitializing"}})"), "app", false);
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.error().message, "container \"app\" in pod \"p1\" is waiting to start: PodInitializing");
}

TEST(LogStatus, ImagePullMessages) {
  auto pull =
      logStatus(withState(R"({"waiting": {"reason": "ErrImagePull", "message": "x"}})"), "app", false);
  ASSERT_FALSE(pull.ok());
  EXPECT_EQ(pull.error().message,
            "container \"app\" in pod \"p1\" is waiting to start: image can't be pulled");
  auto backoff = logStatus(withState(R"({"waiting": {"reason": "ImagePullBackOff"}})"), "app", false);
  ASSERT_FALSE(backoff.ok());
  EXPECT_EQ(backoff.error().message,
            "container \"app\" in pod \"p1\" is waiting to start: trying and failing to pull image");
}

TEST(LogStatus, WaitingToRestartReadsThePreviousRun) {
  std::string status = withState(R"({"waiting": {"reason": "CrashLoopBackOff"}})",
                                 std::string(R"({"terminated": )") + std::string(kTerminated) + "}");
  auto now = logStatus(status, "app", false);
  ASSERT_TRUE(now.ok()) << now.error().message;
  EXPECT_EQ(now->skip, 0u);  // the newest file is the last run's
  auto prev = logStatus(status, "app", true);
  ASSERT_TRUE(prev.ok()) << prev.error().message;
  EXPECT_EQ(prev->skip, 0u);
}

TEST(LogStatus, PreviousOfARunningContainer) {
  std::string status =
      withState(R"({"running": {}})", std::string(R"({"terminated": )") + std::string(kTerminated) + "}");
  auto prev = logStatus(status, "app", true);
  ASSERT_TRUE(prev.ok()) << prev.error().message;
  EXPECT_EQ(prev->skip, 1u);  // the file before the newest
  auto cur = logStatus(status, "app", false);
  ASSERT_TRUE(cur.ok());
  EXPECT_EQ(cur->skip, 0u);
}

TEST(LogStatus, PreviousWithoutLastState) {
  for (std::string_view state : {R"({"running": {}})", R"({"waiting": {"reason": "ContainerCreating"}})"}) {
    auto r = logStatus(withState(state), "app", true);
    ASSERT_FALSE(r.ok()) << state;
    EXPECT_EQ(r.error().code, 400);
    EXPECT_EQ(r.error().message, "previous terminated container \"app\" in pod \"p1\" not found");
  }
  // A last state without a container ID is no run to read.
  auto noId = logStatus(withState(R"({"running": {}})", R"({"terminated": {"exitCode": 0}})"), "app", true);
  ASSERT_FALSE(noId.ok());
  EXPECT_EQ(noId.error().message, "previous terminated container \"app\" in pod \"p1\" not found");
}

TEST(LogStatus, TerminatedWithoutARun) {
  auto r = logStatus(withState(R"({"terminated": {"exitCode": 137, "reason": "ContainerStatusUnknown"}})"),
                     "app", false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "container \"app\" in pod \"p1\" is terminated");
  auto fallback = logStatus(withState(R"({"terminated": {"exitCode": 137}})",
                                      std::string(R"({"terminated": )") + std::string(kTerminated) + "}"),
                            "app", false);
  ASSERT_TRUE(fallback.ok()) << fallback.error().message;
  EXPECT_EQ(fallback->skip, 0u);
}

TEST(LogStatus, NoStateYet) {
  auto r = logStatus(withState("{}"), "app", false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "container \"app\" in pod \"p1\" is waiting to start - no logs yet");
}

TEST(LogStatus, UnknownContainerAndOtherStatusLists) {
  auto r = logStatus(withState(R"({"running": {}})"), "nosuch", false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 400);
  EXPECT_EQ(r.error().message, "container \"nosuch\" in pod \"p1\" is not available");
  auto noStatus = logStatus("{}", "app", false);
  ASSERT_FALSE(noStatus.ok());
  EXPECT_EQ(noStatus.error().message, "container \"app\" in pod \"p1\" is not available");
  auto init = logStatus(R"({"initContainerStatuses": [{"name": "setup", "state": {"running": {}}}]})",
                        "setup", false);
  ASSERT_TRUE(init.ok()) << init.error().message;
  auto eph = logStatus(
      R"({"ephemeralContainerStatuses": [{"name": "debug", "state": {"waiting": {"reason": "ContainerCreating"}}}]})",
      "debug", false);
  ASSERT_FALSE(eph.ok());
  EXPECT_EQ(eph.error().message, "container \"debug\" in pod \"p1\" is waiting to start: ContainerCreating");
}

TEST(LogOptionsFromQuery, ReadsEveryOption) {
  http::Request req;
  req.method = "GET";
  req.path = "/containerLogs/ns/p1/app";
  req.query = {{"tailLines", "25"},
               {"limitBytes", "4096"},
               {"timestamps", "true"},
               {"sinceTime", "2024-05-01T10:00:00Z"}};
  LogOptions o = logOptionsFromQuery(req);
  EXPECT_EQ(o.tail_lines, std::optional<int64_t>(25));
  EXPECT_EQ(o.limit_bytes, std::optional<int64_t>(4096));
  EXPECT_TRUE(o.timestamps);
  ASSERT_TRUE(o.since.has_value());
  EXPECT_EQ(*o.since, *clock::parseRfc3339("2024-05-01T10:00:00Z"));
}

TEST(LogOptionsFromQuery, AbsentOrUnreadableOptions) {
  http::Request req;
  LogOptions o = logOptionsFromQuery(req);
  EXPECT_FALSE(o.tail_lines.has_value());
  EXPECT_FALSE(o.limit_bytes.has_value());
  EXPECT_FALSE(o.since.has_value());
  EXPECT_FALSE(o.timestamps);
  req.query = {{"tailLines", "many"}, {"timestamps", "false"}, {"sinceTime", "yesterday"}};
  o = logOptionsFromQuery(req);
  EXPECT_FALSE(o.tail_lines.has_value());
  EXPECT_FALSE(o.timestamps);
  EXPECT_FALSE(o.since.has_value());
  req.query = {{"timestamps", ""}};
  EXPECT_FALSE(logOptionsFromQuery(req).timestamps);
  req.query = {{"timestamps", "1"}};
  EXPECT_TRUE(logOptionsFromQuery(req).timestamps);
}

TEST(LogOptionsFromQuery, SinceSecondsAndTheLaterOfTheTwo) {
  http::Request req;
  req.query = {{"sinceSeconds", "60"}};
  auto before = clock::now();
  LogOptions o = logOptionsFromQuery(req);
  auto after = clock::now();
  ASSERT_TRUE(o.since.has_value());
  EXPECT_GE(*o.since, before - std::chrono::seconds(60));
  EXPECT_LE(*o.since, after - std::chrono::seconds(60));
  // Both given (the API server forbids it; the kubelet takes the later time, as upstream).
  req.query = {{"sinceSeconds", "60"}, {"sinceTime", "2000-01-01T00:00:00Z"}};
  o = logOptionsFromQuery(req);
  ASSERT_TRUE(o.since.has_value());
  EXPECT_GE(*o.since, before - std::chrono::seconds(60));
  req.query = {{"sinceSeconds", "600000000"}, {"sinceTime", "2020-01-01T00:00:00Z"}};
  o = logOptionsFromQuery(req);
  ASSERT_TRUE(o.since.has_value());
  EXPECT_EQ(*o.since, *clock::parseRfc3339("2020-01-01T00:00:00Z"));
}

// ---------------------------------------------------------------------------------------
// Pod cgroups (cgroupfs layout of upstream's QoS containers).

TEST(Cgroups, PodCgroupParentByQosClass) {
  json::Document guaranteed = parseJson(R"({"status": {"qosClass": "Guaranteed"}})");
  json::Document burstable = parseJson(R"({"status": {"qosClass": "Burstable"}})");
  json::Document bestEffort = parseJson(R"({"status": {"qosClass": "BestEffort"}})");
  EXPECT_EQ(podCgroupParent("/kubepods", guaranteed, "1234"), "/kubepods/pod1234");
  EXPECT_EQ(podCgroupParent("/kubepods", burstable, "1234"), "/kubepods/burstable/pod1234");
  EXPECT_EQ(podCgroupParent("/kubepods", bestEffort, "1234"), "/kubepods/besteffort/pod1234");
  EXPECT_EQ(podCgroupParent("/shepherd/node-a", bestEffort, "u-1"), "/shepherd/node-a/besteffort/podu-1");
}

// ---------------------------------------------------------------------------------------
// Probes: a named port resolves against the container's ports.

TEST(Probes, NamedPortResolvesAgainstTheContainer) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int port = ntohs(addr.sin_port);
  json::Document container = parseJson(R"({"name": "c", "ports": [{"name": "http", "containerPort": )" +
                                       std::to_string(port) + "}]}");
  json::Document byName = parseJson(R"({"tcpSocket": {"port": "http"}})");
  json::Document unknown = parseJson(R"({"tcpSocket": {"port": "nope"}})");
  std::string msg;
  EXPECT_EQ(runProbe(byName, container, nullptr, "", "127.0.0.1", msg), ProbeResult::Success) << msg;
  EXPECT_EQ(runProbe(unknown, container, nullptr, "", "127.0.0.1", msg), ProbeResult::Failure);
  close(fd);
}
