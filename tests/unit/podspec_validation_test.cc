// Pod and pod template validation against upstream's messages and field paths
// (pkg/apis/core/validation ValidatePodSpec and the functions it calls). Objects are
// defaulted first, as the store does.
#include <gtest/gtest.h>

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

std::vector<std::string> lines(FieldErrors& errs) {
  std::vector<std::string> out;
  for (auto& c : errs.causes()) out.push_back(c.field + ": " + c.message);
  return out;
}

// A pod with `spec` merged over one valid container, defaulted and validated.
std::vector<std::string> podErrors(const std::string& spec) {
  auto s = kinds::podStrategy();
  auto pod = parse(R"({"metadata":{"name":"p","namespace":"default"},"spec":)" + spec + "}");
  s->applyDefaults(pod, pod.GetAllocator());
  FieldErrors errs;
  s->validate(pod, errs);
  return lines(errs);
}

// One container `c` (JSON members after name and image) in a pod with `rest`.
std::vector<std::string> containerErrors(const std::string& c, const std::string& rest = "") {
  return podErrors(R"({"containers":[{"name":"c","image":"busybox")" + (c.empty() ? "" : "," + c) + "}]" +
                   (rest.empty() ? "" : "," + rest) + "}");
}

using V = std::vector<std::string>;

const std::string kQualifiedNameError =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const std::string kLabelValueError =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

}  // namespace

TEST(PodSpecValidation, ValidPodHasNoErrors) {
  EXPECT_EQ(
      containerErrors(
          R"("ports":[{"containerPort":80,"name":"http"}],
      "env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
      "volumeMounts":[{"name":"data","mountPath":"/d"}],
      "resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"500m"}},
      "livenessProbe":{"httpGet":{"port":"http"}},"readinessProbe":{"tcpSocket":{"port":80}})",
          R"("volumes":[{"name":"data"}],"tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":5}])"),
      V{});
}

// G1
TEST(PodSpecValidation, VolumeMountMustNameAVolume) {
  EXPECT_EQ(containerErrors(R"("volumeMounts":[{"name":"data","mountPath":"/d"}])"),
            V{"spec.containers[0].volumeMounts[0].name: Not found: \"data\""});
  // A volume that failed its own checks is not there for its mounts either.
  EXPECT_EQ(containerErrors(R"("volumeMounts":[{"name":"data","mountPath":"/d"}])",
                            R"("volumes":[{"name":"data","configMap":{}}])"),
            V({"spec.volumes[0].configMap.name: Required value",
               "spec.containers[0].volumeMounts[0].name: Not found: \"data\""}));
  // Templates: the path has the template's prefix.
  auto d = kinds::deploymentStrategy();
  auto dep = parse(R"({"metadata":{"name":"x"},"spec":{"selector":{"matchLabels":{"a":"b"}},
      "template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i",
      "volumeMounts":[{"name":"data","mountPath":"/d"}]}]}}}})");
  d->applyDefaults(dep, dep.GetAllocator());
  FieldErrors errs;
  d->validate(dep, errs);
  EXPECT_EQ(lines(errs), V{"spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"data\""});
  EXPECT_EQ(errs.causes()[0].type, "FieldValueNotFound");
}

// P7
TEST(PodSpecValidation, VolumeMountPaths) {
  EXPECT_EQ(
      containerErrors(R"("volumeMounts":[{"name":"v"},{"name":"v","mountPath":"/a","subPath":"/abs"},
      {"name":"v","mountPath":"/a","subPath":"x","subPathExpr":"../y"}])",
                      R"("volumes":[{"name":"v"}])"),
      V({"spec.containers[0].volumeMounts[0].mountPath: Required value",
         "spec.containers[0].volumeMounts.subPath: Invalid value: \"/abs\": must be a relative path",
         "spec.containers[0].volumeMounts[2].mountPath: Invalid value: \"/a\": must be unique",
         "spec.containers[0].volumeMounts[2].subPathExpr: Invalid value: \"../y\": subPathExpr and subPath "
         "are mutually exclusive",
         "spec.containers[0].volumeMounts.subPathExpr: Invalid value: \"../y\": must not contain '..'"}));
  EXPECT_EQ(
      containerErrors(R"("volumeMounts":[{"name":"v","mountPath":"/a","mountPropagation":"Bidirectional"},
      {"name":"v","mountPath":"/b","mountPropagation":"Both","recursiveReadOnly":"Enabled"}])",
                      R"("volumes":[{"name":"v"}])"),
      V({"spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount propagation is "
         "available only to privileged containers",
         "spec.containers[0].volumeMounts.mountPropagation: Unsupported value: \"Both\": supported values: "
         "\"Bidirectional\", \"HostToContainer\", \"None\"",
         "spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden: may only be specified when readOnly "
         "is "
         "true",
         "spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden: may only be specified when "
         "mountPropagation is None or not specified"}));
}

// G2
TEST(PodSpecValidation, Tolerations) {
  EXPECT_EQ(
      podErrors(R"({"containers":[{"name":"c","image":"i"}],"tolerations":[
      {"key":"a b","operator":"Exists"},
      {"operator":"Equal","value":"v"},
      {"key":"k","effect":"NoSchedule","tolerationSeconds":5},
      {"key":"k","value":"bad value"},
      {"key":"k","operator":"Exists","value":"bar"},
      {"key":"k","operator":"In"},
      {"key":"k","effect":"Foo"},
      {"value":""}]})"),
      V({"spec.tolerations[0].key: Invalid value: \"a b\": " + kQualifiedNameError,
         "spec.tolerations[1].operator: Invalid value: \"Equal\": operator must be Exists when `key` is "
         "empty, "
         "which means \"match all values and all keys\"",
         "spec.tolerations[2].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
         "`tolerationSeconds` is set",
         "spec.tolerations[3].operator: Invalid value: \"bad value\": " + kLabelValueError,
         "spec.tolerations[4].operator: Invalid value: \"bar\": value must be empty when `operator` is "
         "'Exists'",
         "spec.tolerations[5].operator: Unsupported value: \"In\": supported values: \"Equal\", \"Exists\"",
         "spec.tolerations[6].effect: Unsupported value: \"Foo\": supported values: \"NoSchedule\", "
         "\"PreferNoSchedule\", \"NoExecute\"",
         "spec.tolerations[7].operator: Invalid value: \"\": operator must be Exists when `key` is empty, "
         "which means \"match all values and all keys\""}));
}

TEST(PodSpecValidation, TolerationsMayOnlyBeAddedOnUpdate) {
  auto s = kinds::podStrategy();
  auto old = parse(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}],
      "tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":5}]}})");
  s->applyDefaults(old, old.GetAllocator());
  auto update = [&](const std::string& tolerations) {
    json::Document now;
    now.CopyFrom(old, now.GetAllocator());
    json::Document t = parse(tolerations);
    json::set(now["spec"], "tolerations", json::Value(t, now.GetAllocator()), now.GetAllocator());
    s->applyDefaults(now, now.GetAllocator());
    FieldErrors errs;
    s->validateUpdate(now, old, errs);
    return lines(errs);
  };
  // tolerationSeconds may change, and new tolerations may come.
  EXPECT_EQ(update(R"([{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":60},
      {"key":"x","operator":"Exists"}])"),
            V{});
  EXPECT_EQ(
      update(R"([{"key":"other","operator":"Exists","effect":"NoExecute","tolerationSeconds":5}])"),
      V{"spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"});
}

// P1
TEST(PodSpecValidation, ResourceRequirements) {
  EXPECT_EQ(
      containerErrors(R"("resources":{"limits":{"cpu":"1"},"requests":{"cpu":"1.5"}})"),
      V{"spec.containers[0].resources.requests: Invalid value: \"1500m\": must be less than or equal to cpu "
        "limit of 1"});
  EXPECT_EQ(
      containerErrors(R"("resources":{"limits":{"example.com/gpu":"2"},"requests":{"example.com/gpu":"1"}})"),
      V{"spec.containers[0].resources.requests: Invalid value: \"1\": must be equal to example.com/gpu limit "
        "of 2"});
  EXPECT_EQ(containerErrors(R"("resources":{"requests":{"example.com/gpu":"1"}})"),
            V{"spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable "
              "resources"});
  // Requests default to limits, so both report.
  EXPECT_EQ(
      containerErrors(R"("resources":{"limits":{"example.com/gpu":"500m"}})"),
      V({"spec.containers[0].resources.limits[example.com/gpu]: Invalid value: 500m: must be an integer",
         "spec.containers[0].resources.requests[example.com/gpu]: Invalid value: 500m: must be an integer"}));
  EXPECT_EQ(containerErrors(R"("resources":{"limits":{"cpus":"1","pods":"1","memory":"-1"},
      "requests":{"cpus":"1","pods":"1","memory":"-1"}})")
                .size(),
            8u);
  EXPECT_EQ(
      containerErrors(R"("resources":{"requests":{"cpus":"1","pods":"1","memory":"-1"}})"),
      V({"spec.containers[0].resources.requests[cpus]: Invalid value: \"cpus\": must be a standard resource "
         "type or fully qualified",
         "spec.containers[0].resources.requests[cpus]: Invalid value: \"cpus\": must be a standard resource "
         "for "
         "containers",
         "spec.containers[0].resources.requests[pods]: Invalid value: \"pods\": must be a standard resource "
         "for "
         "containers",
         "spec.containers[0].resources.requests[memory]: Invalid value: \"-1\": must be greater than or "
         "equal to "
         "0"}));
  EXPECT_EQ(containerErrors(R"("resources":{"limits":{"hugepages-2Mi":"2Mi"}})"),
            V{"spec.containers[0].resources: Forbidden: HugePages require cpu or memory"});
}

// P3
TEST(PodSpecValidation, EnvironmentVariables) {
  const std::string envNameError =
      "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
      "and "
      "must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for "
      "validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')";
  EXPECT_EQ(
      containerErrors(R"("env":[{"name":"1FOO"},{"name":""},{"name":"..x"},
      {"name":"A","valueFrom":{}},
      {"name":"B","value":"v","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}},
      {"name":"C","valueFrom":{"secretKeyRef":{"name":"s","key":"k"},"configMapKeyRef":{"name":"c","key":"k"}}},
      {"name":"D","valueFrom":{"configMapKeyRef":{"name":"c"}}},
      {"name":"E","valueFrom":{"fieldRef":{"fieldPath":"spec.schedulerName"}}},
      {"name":"F","valueFrom":{"resourceFieldRef":{"resource":"limits.gpu"}}}])"),
      V({"spec.containers[0].env[0].name: Invalid value: \"1FOO\": " + envNameError,
         "spec.containers[0].env[1].name: Required value",
         "spec.containers[0].env[2].name: Invalid value: \"..x\": must not start with '..'",
         "spec.containers[0].env[3].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, "
         "`resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
         "spec.containers[0].env[4].valueFrom: Invalid value: \"\": may not be specified when `value` is not "
         "empty",
         "spec.containers[0].env[5].valueFrom: Invalid value: \"\": may not have more than one field "
         "specified "
         "at a time",
         "spec.containers[0].env[6].valueFrom.configMapKeyRef.key: Required value",
         "spec.containers[0].env[7].valueFrom.fieldRef.fieldPath: Unsupported value: \"spec.schedulerName\": "
         "supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", \"spec.nodeName\", "
         "\"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", \"status.podIP\", "
         "\"status.podIPs\"",
         "spec.containers[0].env[8].valueFrom.resourceFieldRef.resource: Unsupported value: \"limits.gpu\": "
         "supported values: \"limits.cpu\", \"limits.ephemeral-storage\", \"limits.memory\", "
         "\"requests.cpu\", \"requests.ephemeral-storage\", \"requests.memory\""}));
  EXPECT_EQ(containerErrors(R"("envFrom":[{"prefix":"1x","configMapRef":{}},{}])"),
            V({"spec.containers[0].envFrom[0].prefix: Invalid value: \"1x\": " + envNameError,
               "spec.containers[0].envFrom[0].configMapRef.name: Required value",
               "spec.containers[0].envFrom: Invalid value: \"\": must specify one of: `configMapRef` or "
               "`secretRef`"}));
}

// P4
TEST(PodSpecValidation, ProbesAndLifecycle) {
  EXPECT_EQ(
      containerErrors(R"("livenessProbe":{"periodSeconds":-1},
      "readinessProbe":{"exec":{"command":[]},"tcpSocket":{"port":0},"terminationGracePeriodSeconds":5},
      "startupProbe":{"httpGet":{"port":"HTTP","httpHeaders":[{"name":"a b","value":"x"}]},"successThreshold":2},
      "lifecycle":{"preStop":{"sleep":{"seconds":60}},"postStart":{}})"),
      V({"spec.containers[0].lifecycle.postStart: Required value: must specify a handler type",
         "spec.containers[0].lifecycle.preStop.sleep: Invalid value: 60: must be greater than 0 and less "
         "than "
         "terminationGracePeriodSeconds (30)",
         "spec.containers[0].livenessProbe: Required value: must specify a handler type",
         "spec.containers[0].livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal "
         "to 0",
         "spec.containers[0].readinessProbe.exec.command: Required value",
         "spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type",
         "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set "
         "for readinessProbes",
         "spec.containers[0].startupProbe.httpGet.port: Invalid value: \"HTTP\": must contain only "
         "alpha-numeric characters (a-z, 0-9), and hyphens (-)",
         "spec.containers[0].startupProbe.httpGet.port: Invalid value: \"HTTP\": must contain at least one "
         "letter (a-z)",
         "spec.containers[0].startupProbe.httpGet.httpHeaders: Invalid value: \"a b\": a valid HTTP header "
         "must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is "
         "'[-A-Za-z0-9]+')",
         "spec.containers[0].startupProbe.successThreshold: Invalid value: 2: must be 1"}));
}

// P5
TEST(PodSpecValidation, ContainerPorts) {
  EXPECT_EQ(
      podErrors(R"({"containers":[
      {"name":"a","image":"i","ports":[{"containerPort":80,"name":"http_port"},{"containerPort":81,"name":"web"},
                                      {"containerPort":82,"name":"web","hostPort":70000}]},
      {"name":"b","image":"i","ports":[{"containerPort":8080,"hostPort":8080},{"containerPort":8081,"hostPort":8080}]}]})"),
      V({"spec.containers[0].ports[0].name: Invalid value: \"http_port\": must contain only alpha-numeric "
         "characters (a-z, 0-9), and hyphens (-)",
         "spec.containers[0].ports[2].name: Duplicate value: \"web\"",
         "spec.containers[0].ports[2].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
         "spec.containers[1].ports[1].hostPort: Duplicate value: \"TCP//8080\""}));
  // hostNetwork: a pod's host ports default to the container ports, and must equal them.
  EXPECT_EQ(containerErrors(R"("ports":[{"containerPort":80},{"containerPort":81,"hostPort":82}])",
                            R"("hostNetwork":true)"),
            V{"spec.containers[0].ports[1].hostPort: Invalid value: 82: must match `containerPort` when "
              "`hostNetwork` "
              "is true"});
}

// P6
TEST(PodSpecValidation, VolumeSources) {
  EXPECT_EQ(
      podErrors(R"({"containers":[{"name":"c","image":"i"}],"volumes":[
      {"name":"a","emptyDir":{},"secret":{"secretName":"s"}},
      {"name":"b","secret":{"defaultMode":777,"items":[{"key":"k","path":"/etc/x"},{"path":"../up"}]}},
      {"name":"c","persistentVolumeClaim":{}},
      {"name":"d","hostPath":{"path":"/x/../y","type":"Dir"}},
      {"name":"e","projected":{"sources":[{"serviceAccountToken":{"path":"t","expirationSeconds":60}}]}},
      {"name":"f","downwardAPI":{"items":[{"path":"l","fieldRef":{"fieldPath":"spec.nodeName"}}]}}]})"),
      V({"spec.volumes[0].secret: Forbidden: may not specify more than 1 volume type",
         "spec.volumes[1].secret.secretName: Required value",
         "spec.volumes[1].secret.defaultMode: Invalid value: 777: must be a number between 0 and 0777 "
         "(octal), "
         "both inclusive",
         "spec.volumes[1].secret.items[0].path: Invalid value: \"/etc/x\": must be a relative path",
         "spec.volumes[1].secret.items[1].key: Required value",
         "spec.volumes[1].secret.items[1].path: Invalid value: \"../up\": must not contain '..'",
         "spec.volumes[2].persistentVolumeClaim.claimName: Required value",
         "spec.volumes[3].hostPath.path: Invalid value: \"/x/../y\": must not contain '..'",
         "spec.volumes[3].hostPath.type: Unsupported value: \"Dir\": supported values: \"\", "
         "\"BlockDevice\", "
         "\"CharDevice\", \"Directory\", \"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\"",
         "spec.volumes[4].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may "
         "not specify a duration less than 10 minutes",
         "spec.volumes[5].downwardAPI.fieldRef.fieldPath: Unsupported value: \"spec.nodeName\": supported "
         "values: \"metadata.annotations\", \"metadata.labels\", \"metadata.name\", \"metadata.namespace\", "
         "\"metadata.uid\""}));
}

// P8
TEST(PodSpecValidation, OtherContainerFields) {
  EXPECT_EQ(
      podErrors(R"({"containers":[{"name":"c","image":" nginx","terminationMessagePolicy":"Foo",
      "restartPolicy":"Always","securityContext":{"runAsUser":-1,"seccompProfile":{"type":"Localhost"}}}],
      "initContainers":[{"name":"i","image":"i","restartPolicy":"Never","livenessProbe":{"exec":{"command":["x"]}}},
                        {"name":"s","image":"i","restartPolicy":"Always","readinessProbe":{}}]})"),
      V({"spec.containers[0].terminationMessagePolicy: Unsupported value: \"Foo\": supported values: "
         "\"File\", "
         "\"FallbackToLogsOnError\"",
         "spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 4294967295, "
         "inclusive",
         "spec.containers[0].securityContext.seccompProfile.localhostProfile: Required value: must be set "
         "when "
         "seccomp type is Localhost",
         "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers",
         "spec.initContainers[0].restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
         "spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without "
         "restartPolicy=Always",
         "spec.initContainers[1].readinessProbe: Required value: must specify a handler type",
         "spec.containers[0].image: Invalid value: \" nginx\": must not have leading or trailing "
         "whitespace"}));
}

// P9
TEST(PodSpecValidation, PodLevelFields) {
  EXPECT_EQ(
      podErrors(R"({"containers":[{"name":"c","image":"i"}],"nodeSelector":{"disk":"a b"},
      "dnsPolicy":"None","hostname":"My_Host","activeDeadlineSeconds":4294967296,"preemptionPolicy":"Sometimes",
      "readinessGates":[{"conditionType":"a b"}],"hostAliases":[{"ip":"1.2.3","hostnames":["x"]}],
      "securityContext":{"fsGroupChangePolicy":"Never","sysctls":[{"name":"net.a"},{"name":"net.a"}]}})"),
      V({"spec.nodeSelector: Invalid value: \"a b\": " + kLabelValueError,
         "spec.securityContext.sysctls[1].name: Duplicate value: \"net.a\"",
         "spec.securityContext.fsGroupChangePolicy: Unsupported value: \"Never\": supported values: "
         "\"Always\", \"OnRootMismatch\"",
         "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None",
         "spec.readinessGates[0].conditionType: Invalid value: \"a b\": " + kQualifiedNameError,
         "spec.activeDeadlineSeconds: Invalid value: 4294967296: must be between 1 and 2147483647, inclusive",
         "spec.hostname: Invalid value: \"My_Host\": a lowercase RFC 1123 label must consist of lower case "
         "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
         "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
         "spec.hostAliases[0].ip: Invalid value: \"1.2.3\": must be a valid IP address, (e.g. 10.9.8.7 or "
         "2001:db8::ffff)",
         "spec.preemptionPolicy: Unsupported value: \"Sometimes\": supported values: "
         "\"PreemptLowerPriority\", "
         "\"Never\""}));
  EXPECT_EQ(podErrors(R"({"containers":[{"name":"c","image":"i"}],"affinity":{
      "nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[]},
        "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":0,"preference":{"matchExpressions":[{"key":"k","operator":"Foo"}]}}]},
      "podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{}}]}},
      "topologySpreadConstraints":[{"maxSkew":0,"topologyKey":"zone","whenUnsatisfiable":"Maybe"}]})"),
            V({"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
               "Required value: must have at least one node selector term",
               "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
               "Invalid value: "
               "0: must be in the range 1-100",
               "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference."
               "matchExpressions[0].operator: Invalid value: \"Foo\": not a valid selector operator",
               "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
               "Required value: can not be empty",
               "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
               "Invalid value: \"\": name part must be non-empty",
               "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
               "Invalid value: \"\": " +
                   kQualifiedNameError,
               "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
               "spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: \"Maybe\": supported "
               "values: \"DoNotSchedule\", \"ScheduleAnyway\""}));
  EXPECT_EQ(
      podErrors(
          R"({"containers":[{"name":"c","image":"i"}],"ephemeralContainers":[{"name":"e","image":"i"}]})"),
      V{"spec.ephemeralContainers: Forbidden: cannot be set on create"});
}

TEST(PodSpecValidation, PodDeletionCostAnnotation) {
  auto s = kinds::podStrategy();
  auto pod =
      parse(R"({"metadata":{"name":"p","annotations":{"controller.kubernetes.io/pod-deletion-cost":"abc"}},
      "spec":{"containers":[{"name":"c","image":"i"}]}})");
  s->applyDefaults(pod, pod.GetAllocator());
  FieldErrors errs;
  s->validate(pod, errs);
  EXPECT_EQ(lines(errs), V{"metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "
                           "\"abc\": must be a 32bit integer"});
}

// P10
TEST(PodSpecValidation, PodUpdateRules) {
  auto s = kinds::podStrategy();
  auto old = parse(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}],
      "activeDeadlineSeconds":300,"terminationGracePeriodSeconds":-1}})");
  s->applyDefaults(old, old.GetAllocator());
  auto update = [&](const std::string& field, const std::string& value) {
    json::Document now;
    now.CopyFrom(old, now.GetAllocator());
    if (value.empty()) {
      json::remove(now["spec"], field);
    } else {
      json::Document v = parse(value);
      json::set(now["spec"], field, json::Value(v, now.GetAllocator()), now.GetAllocator());
    }
    FieldErrors errs;
    s->validateUpdate(now, old, errs);
    return lines(errs);
  };
  EXPECT_EQ(
      update("activeDeadlineSeconds", "600"),
      V{"spec.activeDeadlineSeconds: Invalid value: 600: must be less than or equal to previous value"});
  EXPECT_EQ(update("activeDeadlineSeconds", "100"), V{});
  EXPECT_EQ(update("activeDeadlineSeconds", ""), V{"spec.activeDeadlineSeconds: Invalid value: \"null\": "
                                                   "must not update from a positive integer to nil value"});
  EXPECT_EQ(update("terminationGracePeriodSeconds", "1"), V{});
  EXPECT_EQ(update("terminationGracePeriodSeconds", "5").size(), 1u);
  EXPECT_EQ(update("containers", R"([{"name":"c","image":"i"},{"name":"d","image":"i"}])").back(),
            "spec.containers: Forbidden: pod updates may not add or remove containers");
}

// W1, W2, W3
TEST(PodSpecValidation, WorkloadTemplates) {
  auto validate = [](const std::shared_ptr<const Strategy>& s, const std::string& body) {
    auto obj = parse(body);
    s->applyDefaults(obj, obj.GetAllocator());
    FieldErrors errs;
    s->validate(obj, errs);
    return lines(errs);
  };
  EXPECT_EQ(
      validate(kinds::replicaSetStrategy(), R"({"metadata":{"name":"x"},"spec":{"minReadySeconds":-1,
      "selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b","c":"d e"}},
      "spec":{"restartPolicy":"Never","activeDeadlineSeconds":5,"containers":[{"name":"c","image":"i"}]}}}})"),
      V({"spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
         "spec.template.labels: Invalid value: \"d e\": " + kLabelValueError,
         "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
         "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not "
         "Supported"}));
  EXPECT_EQ(
      validate(kinds::replicationControllerStrategy(), R"({"metadata":{"name":"x"},"spec":{
      "selector":{"a":"b"},"template":{"metadata":{"labels":{"a":"c"}},
      "spec":{"restartPolicy":"OnFailure","containers":[{"name":"c","image":"i"}]}}}})"),
      V({"spec.template.metadata.labels: Invalid value: map[string]string{\"a\":\"c\"}: `selector` does not "
         "match template `labels`",
         "spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: "
         "\"Always\""}));
  // An invalid selector stops there: upstream skips the template.
  EXPECT_EQ(
      validate(kinds::deploymentStrategy(), R"({"metadata":{"name":"x"},"spec":{
      "selector":{"matchExpressions":[{"key":"a","operator":"Foo"},{"key":"b","operator":"In"}]},
      "template":{"spec":{"containers":[]}}}})"),
      V({"spec.selector.matchExpressions[0].operator: Invalid value: \"Foo\": not a valid selector operator",
         "spec.selector.matchExpressions[1].values: Required value: must be specified when `operator` is "
         "'In' "
         "or 'NotIn'",
         "spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]"
         "LabelSelectorRequirement{LabelSelectorRequirement{Key:a,Operator:Foo,Values:[],},"
         "LabelSelectorRequirement{Key:b,Operator:In,Values:[],},},}: invalid label selector"}));
  EXPECT_EQ(
      validate(kinds::deploymentStrategy(), R"({"metadata":{"name":"x"},"spec":{"selector":{},
      "template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}})"),
      V{"spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]"
        "LabelSelectorRequirement{},}: empty selector is invalid for deployment"});
  EXPECT_EQ(validate(kinds::podTemplateStrategy(), R"({"metadata":{"name":"x"},"template":{
      "metadata":{"annotations":{"a b":"c"}},"spec":{"containers":[{"name":"c","image":"i"}]}}})"),
            V{"template.annotations: Invalid value: \"a b\": " + kQualifiedNameError});
}

// W4
TEST(PodSpecValidation, DeploymentStrategy) {
  auto s = kinds::deploymentStrategy();
  auto validate = [&](const std::string& extra) {
    auto obj = parse(R"({"metadata":{"name":"x"},"spec":{"selector":{"matchLabels":{"a":"b"}},
        "template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}})" +
                     extra + "}}");
    s->applyDefaults(obj, obj.GetAllocator());
    FieldErrors errs;
    s->validate(obj, errs);
    return lines(errs);
  };
  EXPECT_EQ(
      validate(R"(,"strategy":{"rollingUpdate":{"maxSurge":"25","maxUnavailable":"110%"}})"),
      V({"spec.strategy.rollingUpdate.maxSurge: Invalid value: 25: a valid percent string must be a numeric "
         "string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
         "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 110%: must not be greater than 100%"}));
  EXPECT_EQ(
      validate(R"(,"strategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":0}})"),
      V{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"});
  EXPECT_EQ(validate(R"(,"strategy":{"type":"Foo"})"),
            V{"spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:\"Foo\", "
              "RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: \"Recreate\", "
              "\"RollingUpdate\""});
  EXPECT_EQ(validate(R"(,"minReadySeconds":5,"progressDeadlineSeconds":5)"),
            V{"spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds"});
}
