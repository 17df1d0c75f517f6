// Validation of the kinds other than pods and their templates, against upstream's
// messages and field paths; and how an Invalid answer words its errors.
#include <gtest/gtest.h>

#include "apis/kinds/kinds.h"
#include "common/api_error.h"
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

std::vector<std::string> validate(const std::shared_ptr<const Strategy>& s, const std::string& body) {
  auto obj = parse(body);
  s->applyDefaults(obj, obj.GetAllocator());
  FieldErrors errs;
  s->validate(obj, errs);
  return lines(errs);
}

using V = std::vector<std::string>;

}  // namespace

TEST(InvalidAnswer, MessagePrintsEachDistinctErrorOnce) {
  // ToAggregate drops repeated error strings; the causes keep every one.
  ApiError e = ApiError::invalid("", "Pod", "p",
                                 {{"FieldValueRequired", "Required value", "spec.a"},
                                  {"FieldValueRequired", "Required value", "spec.a"},
                                  {"FieldValueInvalid", "Invalid value: 1: bad", "spec.b"}});
  EXPECT_EQ(e.message, "Pod \"p\" is invalid: [spec.a: Required value, spec.b: Invalid value: 1: bad]");
  EXPECT_EQ(e.causes.size(), 3u);
  ApiError one = ApiError::invalid("apps", "Deployment", "d",
                                   {{"FieldValueRequired", "Required value", "spec.a"},
                                    {"FieldValueRequired", "Required value", "spec.a"}});
  EXPECT_EQ(one.message, "Deployment.apps \"d\" is invalid: spec.a: Required value");
  EXPECT_EQ(one.causes.size(), 2u);
}

TEST(InvalidAnswer, NotFoundCause) {
  FieldErrors errs;
  errs.notFound("spec.x", "\"data\"");
  ASSERT_EQ(errs.causes().size(), 1u);
  EXPECT_EQ(errs.causes()[0].type, "FieldValueNotFound");
  EXPECT_EQ(errs.causes()[0].message, "Not found: \"data\"");
}

// K3, K4, K5, K6
TEST(SecretValidation, TypeSpecificKeys) {
  auto s = kinds::secretStrategy();
  EXPECT_EQ(validate(s, R"({"type":"kubernetes.io/basic-auth","data":{}})"),
            V({"data[username]: Required value", "data[password]: Required value"}));
  EXPECT_EQ(validate(s, R"({"type":"kubernetes.io/ssh-auth","data":{"ssh-privatekey":""}})"),
            V{"data[ssh-privatekey]: Required value"});
  EXPECT_EQ(validate(s, R"({"type":"kubernetes.io/tls","data":{}})"),
            V({"data[tls.crt]: Required value", "data[tls.key]: Required value"}));
  // The 1 MiB limit counts decoded bytes: 1048575 + 1 bytes pass, 1048578 do not.
  std::string exact(1398100, 'A');
  exact += "AA==";
  EXPECT_EQ(validate(s, R"({"data":{"k":")" + exact + "\"}}"), V{});
  std::string over(1398104, 'A');  // 1048578 bytes
  EXPECT_EQ(validate(s, R"({"data":{"k":")" + over + "\"}}"),
            V{"data: Too long: must have at most 1048576 bytes"});
}

// C1, C2
TEST(ConfigMapValidation, BinaryDataCountsDecodedBytes) {
  auto s = kinds::configMapStrategy();
  // 1 MiB of binary data is 1398104 characters of base64: within the limit.
  std::string mib(1398100, 'A');
  mib += "AA==";
  EXPECT_EQ(validate(s, R"({"binaryData":{"b":")" + mib + "\"}}"), V{});
  EXPECT_EQ(validate(s, R"({"data":{"k":"v"},"binaryData":{"k":"YQ=="}})"),
            V{"data[k]: Invalid value: \"k\": duplicate of key present in binaryData"});
}

// S2-S10
TEST(ServiceValidation, SpecFields) {
  auto s = kinds::serviceStrategy();
  EXPECT_EQ(validate(s, R"({"spec":{"clusterIP":"abc","ports":[{"port":80}]}})"),
            V{"spec.clusterIPs[0]: Invalid value: \"abc\": must be a valid IP address, (e.g. 10.9.8.7 or "
              "2001:db8::ffff)"});
  EXPECT_EQ(
      validate(s, R"({"spec":{"clusterIP":"10.96.0.5","clusterIPs":["10.96.0.6"],"ports":[{"port":80}]}})"),
      V{"spec.clusterIPs: Invalid value: []string{\"10.96.0.6\"}: first value must match `clusterIP`"});
  EXPECT_EQ(
      validate(s, R"({"spec":{"ports":[{"name":"a","port":80,"targetPort":70000},
      {"name":"b","port":81,"targetPort":"http_web"},{"name":"c","port":80},{"name":"d"}]}})"),
      V({"spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
         "spec.ports[1].targetPort: Invalid value: \"http_web\": must contain only alpha-numeric characters "
         "(a-z, 0-9), and hyphens (-)",
         "spec.ports[3].port: Invalid value: 0: must be between 1 and 65535, inclusive",
         "spec.ports[3].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
         "spec.ports[2]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", "
         "AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, "
         "NodePort:0}"}));
  EXPECT_EQ(validate(s, R"({"spec":{"type":"NodePort","ports":[{"name":"a","port":80,"nodePort":30080},
      {"name":"b","port":81,"nodePort":30080}]}})"),
            V{"spec.ports[1].nodePort: Duplicate value: 30080"});
  EXPECT_EQ(
      validate(s, R"({"spec":{"sessionAffinity":"Sticky","ports":[{"port":80}]}})"),
      V{"spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\""});
  EXPECT_EQ(
      validate(
          s,
          R"({"spec":{"sessionAffinity":"ClientIP","sessionAffinityConfig":{"clientIP":{"timeoutSeconds":0}},
      "ports":[{"port":80}]}})"),
      V{"spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and "
        "less "
        "than 86400"});
  EXPECT_EQ(
      validate(
          s,
          R"({"spec":{"sessionAffinityConfig":{"clientIP":{"timeoutSeconds":10}},"ports":[{"port":80}]}})"),
      V{"spec.sessionAffinityConfig: Forbidden: must not be set when session affinity is None"});
  EXPECT_EQ(
      validate(s, R"({"spec":{"type":"ExternalName","externalName":"my_db","clusterIP":"10.96.0.9"}})"),
      V({"spec.clusterIPs: Forbidden: may not be set for ExternalName services",
         "spec.externalName: Invalid value: \"my_db\": a lowercase RFC 1123 subdomain must consist of lower "
         "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
         "(e.g. 'example.com', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}));
  EXPECT_EQ(validate(s, R"({"spec":{"type":"ExternalName","externalName":"db.example.com."}})"), V{});
  EXPECT_EQ(validate(s, R"({"spec":{"type":"NodePort","clusterIP":"None","ports":[{"port":80}]}})"),
            V{"spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services"});
  EXPECT_EQ(
      validate(s, R"({"spec":{"externalIPs":["127.0.0.1","x"],"externalTrafficPolicy":"Local",
      "loadBalancerSourceRanges":["10.0.0.0"],"selector":{"app":"a b"},"ports":[{"port":80,"appProtocol":"a b"}]}})"),
      V({"spec.ports[0].appProtocol: Invalid value: \"a b\": name part must consist of alphanumeric "
         "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', "
         " "
         "or 'my.name',  or '123-abc', regex used for validation is "
         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
         "spec.selector: Invalid value: \"a b\": a valid label must be an empty string or consist of "
         "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
         "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
         "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
         "spec.externalIPs[0]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, "
         "::1/128)",
         "spec.externalIPs[1]: Invalid value: \"x\": must be a valid IP address, (e.g. 10.9.8.7 or "
         "2001:db8::ffff)",
         "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'",
         "spec.LoadBalancerSourceRanges[0]: Invalid value: \"10.0.0.0\": must be a valid CIDR value, (e.g. "
         "10.9.8.0/24 or 2001:db8::/64)"}));
  EXPECT_EQ(
      validate(s, R"({"spec":{"externalTrafficPolicy":"Local","ports":[{"port":80}]}})"),
      V{"spec.externalTrafficPolicy: Invalid value: \"Local\": may only be set for externally-accessible "
        "services"});
  // targetPort 0 means port, as upstream defaults it.
  auto svc = parse(R"({"spec":{"ports":[{"port":80,"targetPort":0}]}})");
  s->applyDefaults(svc, svc.GetAllocator());
  EXPECT_EQ(json::getInt(svc["spec"]["ports"][0], "targetPort"), 80);
}

// E1-E3
TEST(EndpointsValidation, SubsetsAddressesPorts) {
  auto s = kinds::endpointsStrategy();
  EXPECT_EQ(
      validate(s, R"({"subsets":[{"ports":[{"port":80}]},
      {"addresses":[{"ip":"169.254.1.1"},{"ip":"x","hostname":"A"}],"notReadyAddresses":[{"ip":"0.0.0.0"}],
       "ports":[{"port":0,"name":"a"},{"port":80,"protocol":"ICMP"}]}]})"),
      V({"subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`",
         "subsets[1].addresses[0].ip: Invalid value: \"169.254.1.1\": may not be in the link-local range "
         "(169.254.0.0/16, fe80::/10)",
         "subsets[1].addresses[1].ip: Invalid value: \"x\": must be a valid IP address, (e.g. 10.9.8.7 or "
         "2001:db8::ffff)",
         "subsets[1].addresses[1].hostname: Invalid value: \"A\": a lowercase RFC 1123 label must consist of "
         "lower case alphanumeric characters or '-', and must start and end with an alphanumeric character "
         "(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
         "subsets[1].addresses[1].ip: Invalid value: \"x\": must be a valid IP address",
         "subsets[1].notReadyAddresses[0].ip: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)",
         "subsets[1].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
         "subsets[1].ports[1].name: Required value",
         "subsets[1].ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", "
         "\"UDP\""}));
  // Loopback passes (Shepherd's single-host default writes it).
  EXPECT_EQ(
      validate(s,
               R"({"subsets":[{"addresses":[{"ip":"10.0.0.1"},{"ip":"127.0.0.1"}],"ports":[{"port":80}]}]})"),
      V{});
}

// N1-N3
TEST(NodeValidation, TaintsAndPodCIDRs) {
  auto s = kinds::nodeStrategy();
  EXPECT_EQ(
      validate(s,
               R"({"spec":{"taints":[{"effect":"NoSchedule"},{"key":"k","value":"a b","effect":"NoSchedule"},
      {"key":"k","effect":"NoSchedule"}],"podCIDRs":["10.0.0.0","10.1.0.0/16"]}})"),
      V({"metadata.taints[0].key: Invalid value: \"\": name part must be non-empty",
         "metadata.taints[0].key: Invalid value: \"\": name part must consist of alphanumeric characters, "
         "'-', "
         "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
         "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
         "metadata.taints[1].value: Invalid value: \"a b\": a valid label must be an empty string or consist "
         "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
         "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
         "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
         "metadata.taints[2]: Duplicate value: core.Taint{Key:\"k\", Value:\"\", Effect:\"NoSchedule\", "
         "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair",
         "spec.podCIDRs[0]: Invalid value: \"10.0.0.0\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or "
         "2001:db8::/64)",
         "spec.podCIDRs: Invalid value: []string{\"10.0.0.0\", \"10.1.0.0/16\"}: may specify no more than "
         "one "
         "CIDR for each IP family"}));
  auto old = parse(R"({"spec":{"podCIDRs":["10.0.0.0/24"],"providerID":"p1"}})");
  auto now = parse(R"({"spec":{"podCIDRs":["10.0.1.0/24"],"providerID":"p2"}})");
  FieldErrors errs;
  s->validateUpdate(now, old, errs);
  EXPECT_EQ(lines(errs),
            V({"spec.podCIDRs: Forbidden: node updates may not change podCIDR except from \"\" to valid",
               "spec.providerID: Forbidden: node updates may not change providerID except from \"\" to "
               "valid"}));
}

namespace {

std::vector<std::string> validateUpdate(const std::shared_ptr<const Strategy>& s, const std::string& now,
                                        const std::string& before) {
  auto obj = parse(now), old = parse(before);
  s->applyDefaults(obj, obj.GetAllocator());
  s->applyDefaults(old, old.GetAllocator());
  FieldErrors errs;
  s->validateUpdate(obj, old, errs);
  return lines(errs);
}

}  // namespace

TEST(PersistentVolumeClaimValidation, AccessModesAndSize) {
  auto s = kinds::persistentVolumeClaimStrategy();
  EXPECT_EQ(validate(s, R"({"metadata": {"name": "c"}, "spec": {}})"),
            (V{"spec.accessModes: Required value: at least 1 access mode is required",
               "spec.resources[storage]: Required value"}));
  EXPECT_EQ(
      validate(s, R"({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOncePod", "Sideways"],
                          "resources": {"requests": {"storage": "0"}}, "volumeMode": "Tape"}})"),
      (V{"spec.accessModes: Unsupported value: \"Sideways\": supported values: \"ReadOnlyMany\", "
         "\"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
         "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
         "spec.resources[storage]: Invalid value: \"0\": must be greater than zero",
         "spec.volumeMode: Unsupported value: \"Tape\": supported values: \"Block\", \"Filesystem\""}));
  EXPECT_EQ(validate(s, R"({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"],
                          "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "Bad_Name"}})")
                .size(),
            1u);
}

TEST(PersistentVolumeClaimValidation, SpecIsFixedButABoundClaimMayGrow) {
  auto s = kinds::persistentVolumeClaimStrategy();
  auto claim = [](std::string_view size, std::string_view volume, std::string_view phase) {
    return std::string(
               R"({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": ")") +
           std::string(volume) + R"(", "resources": {"requests": {"storage": ")" + std::string(size) +
           R"("}}}, "status": {"phase": ")" + std::string(phase) + R"("}})";
  };
  const std::string fixed =
      "spec: Forbidden: spec is immutable after creation except resources.requests and "
      "volumeAttributesClassName "
      "for bound claims";
  EXPECT_EQ(validateUpdate(s, claim("1Gi", "pv-1", "Pending"), claim("1Gi", "", "Pending")), V{});
  EXPECT_EQ(validateUpdate(s, claim("1Gi", "pv-2", "Bound"), claim("1Gi", "pv-1", "Bound")), V{fixed});
  EXPECT_EQ(validateUpdate(s, claim("2Gi", "pv-1", "Pending"), claim("1Gi", "pv-1", "Pending")), V{fixed});
  EXPECT_EQ(validateUpdate(s, claim("2Gi", "pv-1", "Bound"), claim("1Gi", "pv-1", "Bound")), V{});
  EXPECT_EQ(validateUpdate(s, claim("1Gi", "pv-1", "Bound"), claim("2Gi", "pv-1", "Bound")),
            V{"spec.resources.requests.storage: Forbidden: field can not be less than previous value"});
}

TEST(PersistentVolumeValidation, CapacityModesAndOneVolumeType) {
  auto s = kinds::persistentVolumeStrategy();
  EXPECT_EQ(validate(s, R"({"metadata": {"name": "v"}, "spec": {}})"),
            (V{"spec.accessModes: Required value", "spec.capacity: Required value",
               "spec: Required value: must specify a volume type"}));
  EXPECT_EQ(
      validate(s, R"({"metadata": {"name": "v"}, "spec": {"accessModes": ["ReadWriteOnce"],
                          "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/tmp/v"}, "nfs": {"server": "s",
                          "path": "/"}, "persistentVolumeReclaimPolicy": "Keep"}})"),
      (V{"spec.persistentVolumeReclaimPolicy: Unsupported value: \"Keep\": supported values: \"Delete\", "
         "\"Recycle\", \"Retain\"",
         "spec.nfs: Forbidden: may not specify more than 1 volume type"}));
  EXPECT_EQ(validate(s, R"({"metadata": {"name": "v"}, "spec": {"accessModes": ["ReadWriteOnce"],
                          "capacity": {"storage": "1Gi"}, "local": {"path": "/mnt/disk"}}})"),
            V{"spec.nodeAffinity: Required value: Local volume requires node affinity"});
  auto pv = [](std::string_view path) {
    return std::string(R"({"metadata": {"name": "v"}, "spec": {"accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "1Gi"}, "hostPath": {"path": ")") +
           std::string(path) + R"("}}})";
  };
  EXPECT_EQ(
      validateUpdate(s, pv("/b"), pv("/a")),
      V{"spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation"});
  EXPECT_EQ(validateUpdate(s, pv("/a"), pv("/a")), V{});
}

TEST(StorageClassValidation, ProvisionerAndImmutableFields) {
  auto s = kinds::storageClassStrategy();
  EXPECT_EQ(validate(s, R"({"metadata": {"name": "sc"}})"), V{"provisioner: Required value"});
  EXPECT_EQ(validate(s, R"({"metadata": {"name": "sc"}, "provisioner": "rancher.io/local-path",
                          "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"})"),
            (V{"reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"",
               "volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", "
               "\"WaitForFirstConsumer\""}));
  EXPECT_EQ(validateUpdate(s, R"({"metadata": {"name": "sc"}, "provisioner": "b", "parameters": {"x": "1"}})",
                           R"({"metadata": {"name": "sc"}, "provisioner": "a"})"),
            (V{"parameters: Forbidden: updates to parameters are forbidden.",
               "provisioner: Forbidden: updates to provisioner are forbidden."}));
}
