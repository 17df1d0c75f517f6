#include <gtest/gtest.h>

#include "apis/catalog.h"
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "common/json.h"

using namespace shepherd;
using namespace shepherd::apis;

namespace {

json::Document parse(const std::string& s) {
  json::Document d;
  EXPECT_TRUE(json::parse(s, d).ok()) << s;
  return d;
}

std::vector<std::string> validateFields(const Strategy& st, const json::Value& obj) {
  FieldErrors errs;
  st.validate(obj, errs);
  std::vector<std::string> out;
  for (auto& c : errs.causes()) out.push_back(c.field + ": " + c.message);
  return out;
}

}  // namespace

TEST(PodStrategy, DefaultsAndQosClass) {
  auto s = kinds::podStrategy();
  auto pod = parse(R"({"metadata":{"name":"p"},"spec":{"containers":[
      {"name":"a","image":"busybox"},{"name":"b","image":"nginx:1.25","ports":[{"containerPort":80}],
       "resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]}})");
  s->applyDefaults(pod, pod.GetAllocator());
  StrategyContext ctx;
  s->prepareForCreate(pod, ctx);
  EXPECT_EQ(json::getStringPath(pod, {"spec", "restartPolicy"}), "Always");
  EXPECT_EQ(json::getStringPath(pod, {"spec", "dnsPolicy"}), "ClusterFirst");
  EXPECT_EQ(json::getStringPath(pod, {"spec", "schedulerName"}), "default-scheduler");
  EXPECT_EQ(json::getInt(pod["spec"], "terminationGracePeriodSeconds").value(), 30);
  EXPECT_EQ(json::getString(pod["spec"]["containers"][0], "imagePullPolicy"), "Always");
  EXPECT_EQ(json::getString(pod["spec"]["containers"][1], "imagePullPolicy"), "IfNotPresent");
  EXPECT_EQ(json::getString(pod["spec"]["containers"][1]["ports"][0], "protocol"), "TCP");
  // Requests default to limits.
  EXPECT_EQ(json::getStringPath(pod["spec"]["containers"][1], {"resources", "requests", "memory"}), "1Gi");
  EXPECT_EQ(json::getStringPath(pod, {"status", "phase"}), "Pending");
  EXPECT_EQ(json::getStringPath(pod, {"status", "qosClass"}), "Burstable");  // container a has none

  auto g =
      parse(R"({"containers":[{"name":"a","image":"x","resources":{"requests":{"cpu":"100m","memory":"64Mi"},
      "limits":{"cpu":"0.1","memory":"64Mi"}}}]})");
  EXPECT_EQ(kinds::qosClass(g), "Guaranteed");
  auto be = parse(R"({"containers":[{"name":"a","image":"x"}]})");
  EXPECT_EQ(kinds::qosClass(be), "BestEffort");
  auto b = parse(R"({"containers":[{"name":"a","image":"x","resources":{"requests":{"cpu":"100m"}}}]})");
  EXPECT_EQ(kinds::qosClass(b), "Burstable");
}

TEST(PodStrategy, ValidationFieldPaths) {
  auto s = kinds::podStrategy();
  auto pod = parse(R"({"metadata":{"name":"p"},"spec":{"restartPolicy":"Sometimes","containers":[
      {"name":"Bad_Name","image":""},{"name":"Bad_Name","image":"x","ports":[{"containerPort":70000}]}]}})");
  auto errs = validateFields(*s, pod);
  auto has = [&](const std::string& prefix) {
    for (auto& e : errs)
      if (e.rfind(prefix, 0) == 0) return true;
    return false;
  };
  EXPECT_TRUE(has("spec.containers[0].name: Invalid value: \"Bad_Name\""));
  EXPECT_TRUE(has("spec.containers[0].image: Required value"));
  EXPECT_TRUE(has("spec.containers[1].name: Duplicate value: \"Bad_Name\""));
  EXPECT_TRUE(has("spec.containers[1].ports[0].containerPort: Invalid value: 70000"));
  EXPECT_TRUE(has("spec.restartPolicy: Unsupported value: \"Sometimes\""));
  auto none = parse(R"({"metadata":{"name":"p"},"spec":{"containers":[]}})");
  s->applyDefaults(none, none.GetAllocator());
  EXPECT_EQ(validateFields(*s, none), std::vector<std::string>{"spec.containers: Required value"});
}

TEST(PodStrategy, SpecIsImmutableButImages) {
  auto s = kinds::podStrategy();
  auto old = parse(R"({"spec":{"containers":[{"name":"a","image":"x:1"}],"restartPolicy":"Always"}})");
  auto newImage = parse(R"({"spec":{"containers":[{"name":"a","image":"x:2"}],"restartPolicy":"Always"}})");
  s->applyDefaults(old, old.GetAllocator());
  s->applyDefaults(newImage, newImage.GetAllocator());
  FieldErrors ok;
  s->validateUpdate(newImage, old, ok);
  EXPECT_TRUE(ok.empty());
  auto newPolicy = parse(R"({"spec":{"containers":[{"name":"a","image":"x:1"}],"restartPolicy":"Never"}})");
  s->applyDefaults(newPolicy, newPolicy.GetAllocator());
  FieldErrors bad;
  s->validateUpdate(newPolicy, old, bad);
  ASSERT_FALSE(bad.empty());
  EXPECT_EQ(bad.causes()[0].field, "spec");
  EXPECT_EQ(bad.causes()[0].type, "FieldValueForbidden");
}

TEST(PodStrategy, GracePeriodOnlyForBoundRunningPods) {
  auto s = kinds::podStrategy();
  EXPECT_EQ(s->gracePeriod(parse(R"({"spec":{}})"), std::nullopt), 0);
  EXPECT_EQ(
      s->gracePeriod(parse(R"({"spec":{"nodeName":"n","terminationGracePeriodSeconds":45}})"), std::nullopt),
      45);
  EXPECT_EQ(s->gracePeriod(parse(R"({"spec":{"nodeName":"n"}})"), 5), 5);
  EXPECT_EQ(s->gracePeriod(parse(R"({"spec":{"nodeName":"n"},"status":{"phase":"Succeeded"}})"), 30), 0);
}

TEST(PodStrategy, TableRowMirrorsKubectl) {
  auto s = kinds::podStrategy();
  auto pod = parse(R"({"metadata":{"name":"p","creationTimestamp":"2020-01-01T00:00:00Z"},
    "spec":{"nodeName":"n1","containers":[{"name":"a"},{"name":"b"}]},
    "status":{"phase":"Running","podIP":"10.0.0.5","conditions":[{"type":"Ready","status":"False"}],
      "containerStatuses":[
        {"name":"a","ready":true,"restartCount":2,"state":{"running":{}}},
        {"name":"b","ready":false,"restartCount":1,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}})");
  json::Document cells;
  cells.SetArray();
  s->tableRow(pod, cells, cells.GetAllocator());
  ASSERT_EQ(cells.Size(), s->tableColumns().size());
  EXPECT_STREQ(cells[0].GetString(), "p");
  EXPECT_STREQ(cells[1].GetString(), "1/2");
  EXPECT_STREQ(cells[2].GetString(), "CrashLoopBackOff");
  EXPECT_STREQ(cells[3].GetString(), "3");
  EXPECT_STREQ(cells[5].GetString(), "10.0.0.5");
  EXPECT_STREQ(cells[6].GetString(), "n1");
  EXPECT_STREQ(cells[7].GetString(), "<none>");
}

TEST(PodStrategy, TableRowCountsSidecarsAsUpstreamsPrinter) {
  auto s = kinds::podStrategy();
  auto row = [&](const std::string& status) {
    auto pod = parse(R"({"metadata":{"name":"p","creationTimestamp":"2020-01-01T00:00:00Z"},
      "spec":{"initContainers":[{"name":"log","restartPolicy":"Always"},{"name":"setup"}],
              "containers":[{"name":"c"}]},"status":)" +
                     status + "}");
    json::Document cells;
    cells.SetArray();
    s->tableRow(pod, cells, cells.GetAllocator());
    return std::vector<std::string>{cells[1].GetString(), cells[2].GetString(), cells[3].GetString()};
  };
  // The sidecar started: it is skipped, the regular init container is the one waited for.
  EXPECT_EQ(row(R"({"phase":"Pending","initContainerStatuses":[
      {"name":"log","ready":true,"started":true,"restartCount":0,"state":{"running":{}}},
      {"name":"setup","ready":false,"restartCount":0,"state":{"running":{}}}],
    "containerStatuses":[{"name":"c","ready":false,"restartCount":0,"state":{"waiting":{"reason":"PodInitializing"}}}]})"),
            (std::vector<std::string>{"1/2", "Init:1/2", "0"}));
  // Running: the sidecar is one of the containers, its restarts count.
  EXPECT_EQ(
      row(R"({"phase":"Running","conditions":[{"type":"Initialized","status":"True"},{"type":"Ready","status":"True"}],
    "initContainerStatuses":[
      {"name":"log","ready":true,"started":true,"restartCount":2,"state":{"running":{}}},
      {"name":"setup","ready":true,"restartCount":0,"state":{"terminated":{"exitCode":0,"reason":"Completed"}}}],
    "containerStatuses":[{"name":"c","ready":true,"restartCount":1,"state":{"running":{}}}]})"),
      (std::vector<std::string>{"2/2", "Running", "3"}));
}

TEST(ConfigMapStrategy, KeysAndImmutability) {
  auto s = kinds::configMapStrategy();
  auto empty = parse(R"({"data":{"":"x"}})");
  auto errs = validateFields(*s, empty);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].substr(0, 33), "data[]: Invalid value: \"\": a vali");
  auto old = parse(R"({"immutable":true,"data":{"a":"1"}})");
  auto changed = parse(R"({"immutable":true,"data":{"a":"2"}})");
  FieldErrors e;
  s->validateUpdate(changed, old, e);
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e.causes()[0].field, "data");
  auto labelsOnly = parse(R"({"metadata":{"labels":{"x":"y"}},"immutable":true,"data":{"a":"1"}})");
  FieldErrors e2;
  s->validateUpdate(labelsOnly, old, e2);
  EXPECT_TRUE(e2.empty());
}

TEST(SecretStrategy, StringDataIsFoldedIntoData) {
  auto s = kinds::secretStrategy();
  auto sec = parse(R"({"stringData":{"user":"admin"},"data":{"x":"eHg="}})");
  s->applyDefaults(sec, sec.GetAllocator());
  EXPECT_EQ(json::getString(sec, "type"), "Opaque");
  EXPECT_EQ(json::getStringPath(sec, {"data", "user"}), "YWRtaW4=");
  EXPECT_EQ(json::find(sec, "stringData"), nullptr);
  // Bad base64 is the decoder's 400 (schema_test), not a validation error.
  auto bad = parse(R"({"type":"kubernetes.io/tls","data":{"tls.crt":"not base64!"}})");
  auto errs = validateFields(*s, bad);
  EXPECT_EQ(errs, std::vector<std::string>{"data[tls.key]: Required value"});
}

TEST(ServiceStrategy, DefaultsAndPorts) {
  auto s = kinds::serviceStrategy();
  auto svc = parse(
      R"({"spec":{"selector":{"app":"x"},"ports":[{"port":80},{"port":53,"protocol":"UDP","name":"dns","targetPort":"dns"}]}})");
  s->applyDefaults(svc, svc.GetAllocator());
  EXPECT_EQ(json::getStringPath(svc, {"spec", "type"}), "ClusterIP");
  EXPECT_EQ(json::getStringPath(svc, {"spec", "sessionAffinity"}), "None");
  EXPECT_EQ(json::getInt(svc["spec"]["ports"][0], "targetPort").value(), 80);
  EXPECT_EQ(json::getString(svc["spec"]["ports"][0], "protocol"), "TCP");
  auto errs = validateFields(*s, svc);
  ASSERT_EQ(errs.size(), 1u);  // two ports: the first needs a name
  EXPECT_EQ(errs[0], "spec.ports[0].name: Required value");
}

TEST(DeploymentStrategy, DefaultsAndSelectorMustMatchTemplate) {
  auto s = kinds::deploymentStrategy();
  auto d = parse(R"({"spec":{"selector":{"matchLabels":{"app":"a"}},
      "template":{"metadata":{"labels":{"app":"b"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})");
  s->applyDefaults(d, d.GetAllocator());
  EXPECT_EQ(json::getInt(d["spec"], "replicas").value(), 1);
  EXPECT_EQ(json::getStringPath(d, {"spec", "strategy", "type"}), "RollingUpdate");
  EXPECT_EQ(json::getStringPath(d, {"spec", "strategy", "rollingUpdate", "maxSurge"}), "25%");
  EXPECT_EQ(json::getInt(d["spec"], "revisionHistoryLimit").value(), 10);
  EXPECT_EQ(json::getStringPath(d, {"spec", "template", "spec", "restartPolicy"}), "Always");
  auto errs = validateFields(*s, d);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_NE(errs[0].find("spec.template.metadata.labels"), std::string::npos);
  EXPECT_NE(errs[0].find("`selector` does not match template `labels`"), std::string::npos);
}

TEST(EventsV1Strategy, ConvertsToAndFromTheCoreShape) {
  auto s = kinds::eventsV1EventStrategy();
  auto ev = parse(R"({"apiVersion":"events.k8s.io/v1","kind":"Event","regarding":{"kind":"Pod","name":"p"},
      "note":"hi","reportingController":"ctl","deprecatedCount":2})");
  s->toStorage(ev, ev.GetAllocator());
  EXPECT_EQ(json::getString(ev, "apiVersion"), "v1");
  EXPECT_EQ(json::getStringPath(ev, {"involvedObject", "name"}), "p");
  EXPECT_EQ(json::getString(ev, "message"), "hi");
  EXPECT_EQ(json::getString(ev, "reportingComponent"), "ctl");
  EXPECT_EQ(json::getInt(ev, "count").value(), 2);
  s->fromStorage(ev, ev.GetAllocator());
  EXPECT_EQ(json::getString(ev, "apiVersion"), "events.k8s.io/v1");
  EXPECT_EQ(json::getString(ev, "note"), "hi");
  EXPECT_EQ(json::find(ev, "message"), nullptr);
}

TEST(Catalog, ScopesNamesAndShortNames) {
  const auto& c = Catalog::instance();
  auto pods = c.find("", "v1", "pods");
  ASSERT_TRUE(pods);
  EXPECT_TRUE(pods->namespaced);
  EXPECT_EQ(pods->short_names, std::vector<std::string>{"po"});
  EXPECT_EQ(pods->categories, std::vector<std::string>{"all"});
  EXPECT_FALSE(c.find("", "v1", "nodes")->namespaced);
  EXPECT_FALSE(c.find("", "v1", "namespaces")->namespaced);
  EXPECT_TRUE(c.find("apps", "v1", "deployments")->hasSubresource("status"));
  EXPECT_EQ(c.find("events.k8s.io", "v1", "events")->storage_prefix,
            c.find("", "v1", "events")->storage_prefix);
  for (const auto& r : c.resources()) EXPECT_FALSE(r->strategy->tableColumns().empty()) << r->plural;
}
