#include <gtest/gtest.h>

#include "apis/protobuf_decode.h"

using namespace shepherd;

namespace {
// Minimal protobuf writer for building test envelopes.
std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}
std::string field(int num, const std::string& bytes) { return varint((num << 3) | 2) + varint(bytes.size()) + bytes; }
std::string vfield(int num, uint64_t v) { return varint((num << 3) | 0) + varint(v); }
std::string entry(const std::string& k, const std::string& v) { return field(1, k) + field(2, v); }
std::string envelope(const std::string& apiVersion, const std::string& kind, const std::string& raw) {
  std::string unknown = field(1, field(1, apiVersion) + field(2, kind)) + field(2, raw) + field(4, "application/vnd.kubernetes.protobuf");
  return std::string("k8s\0", 4) + unknown;
}
}  // namespace

TEST(ProtobufDecode, NamespaceAsKubectlSendsIt) {
  // ObjectMeta{name=1, labels=11, creationTimestamp=8 (empty)}, spec{} status{}
  std::string meta = field(1, "team") + field(8, "") + field(11, entry("a", "b")) + vfield(7, 0);
  std::string ns = field(1, meta) + field(2, "") + field(3, "");
  json::Document d;
  auto st = apis::decodeProtobufEnvelope(envelope("v1", "Namespace", ns), d);
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(json::serialize(d),
            R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team","labels":{"a":"b"}},"spec":{},"status":{}})");
}

TEST(ProtobufDecode, SecretDataBecomesBase64AndImmutableFalseIsKept) {
  std::string sec = field(1, field(1, "s")) + field(2, entry("k", std::string("\x00\xff", 2))) + field(3, "Opaque") +
                    vfield(5, 0);
  json::Document d;
  ASSERT_TRUE(apis::decodeProtobufEnvelope(envelope("v1", "Secret", sec), d).ok());
  EXPECT_EQ(json::getStringPath(d, {"data", "k"}), "AP8=");
  EXPECT_EQ(json::getString(d, "type"), "Opaque");
  ASSERT_NE(json::find(d, "immutable"), nullptr);
  EXPECT_FALSE(d["immutable"].GetBool());
}

TEST(ProtobufDecode, RejectsGarbageAndUnknownKinds) {
  json::Document d;
  EXPECT_EQ(apis::decodeProtobufEnvelope("nope", d).error().code, 400);
  EXPECT_EQ(apis::decodeProtobufEnvelope(std::string("k8s\0\x0a\xff", 6), d).error().code, 400);
  auto st = apis::decodeProtobufEnvelope(envelope("v1", "Pod", field(1, field(1, "p"))), d);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, 415);
  // Truncated nested message.
  std::string bad = field(1, std::string("\x0a\x05" "ab", 4));
  EXPECT_EQ(apis::decodeProtobufEnvelope(envelope("v1", "ConfigMap", bad), d).error().code, 400);
}

TEST(ProtobufDecode, DeploymentWithPodTemplateAndPointerZero) {
  // Deployment{metadata{name}, spec{replicas=0 (pointer: kept), selector{matchLabels},
  //   template{metadata{labels}, spec{containers[{name,image,ports[{containerPort}],
  //   resources{limits{cpu: 100m}}, livenessProbe{handler{exec{command}}}}]}},
  //   strategy{type, rollingUpdate{maxSurge: "25%"}}}}
  std::string quantity = field(1, "100m");
  std::string resources = field(1, field(1, "cpu") + field(2, quantity));
  std::string probe = field(1, field(1, field(1, "true"))) + vfield(4, 5);
  std::string container = field(1, "c") + field(2, "nginx:1") + field(6, vfield(3, 80)) + field(8, resources) +
                          field(10, probe);
  std::string podSpec = field(2, container);
  std::string tmpl = field(1, field(11, entry("app", "w"))) + field(2, podSpec);
  std::string intOrString = vfield(1, 1) + vfield(2, 0) + field(3, "25%");
  std::string strategy = field(1, "RollingUpdate") + field(2, field(2, intOrString));
  std::string spec = vfield(1, 0) + field(2, field(1, entry("app", "w"))) + field(3, tmpl) + field(4, strategy);
  std::string dep = field(1, field(1, "web")) + field(2, spec);
  json::Document d;
  auto st = apis::decodeProtobufEnvelope(envelope("apps/v1", "Deployment", dep), d);
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(json::serialize(d["spec"]),
            R"({"replicas":0,"selector":{"matchLabels":{"app":"w"}},"template":{"metadata":{"labels":{"app":"w"}},)"
            R"("spec":{"containers":[{"name":"c","image":"nginx:1","ports":[{"containerPort":80}],)"
            R"("resources":{"limits":{"cpu":"100m"}},"livenessProbe":{"exec":{"command":["true"]},"periodSeconds":5}}]}},)"
            R"("strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%"}}})");
}
