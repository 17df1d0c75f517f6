#include "apis/schema.h"

#include <gtest/gtest.h>

#include "apis/catalog.h"

using namespace shepherd;
using namespace shepherd::apis;

TEST(Schema, EveryServedKindHasAResolvedSchema) {
  const auto& reg = SchemaRegistry::instance();
  for (const auto& r : Catalog::instance().resources()) {
    const SchemaNode* n = reg.definition(r->schema_name);
    ASSERT_NE(n, nullptr) << r->schema_name;
    EXPECT_NE(n->property("metadata"), nullptr) << r->schema_name;
    if (r->stored) {
      EXPECT_NE(reg.definition(r->schema_name + "List"), nullptr) << r->schema_name;
    }
  }
  const SchemaNode* spec = reg.definition("io.k8s.api.core.v1.PodSpec");
  ASSERT_NE(spec, nullptr);
  const SchemaNode* containers = spec->property("containers");
  ASSERT_NE(containers, nullptr);
  EXPECT_EQ(containers->patch_merge_key, "name");
  EXPECT_EQ(containers->patch_strategy, "merge");
  EXPECT_EQ(spec->property("volumes")->patch_strategy, "merge,retainKeys");
}

TEST(Schema, FindsUnknownDuplicateAndMistypedFields) {
  const auto& reg = SchemaRegistry::instance();
  json::Document d;
  ASSERT_TRUE(json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"any":"thing"}},
      "spec":{"containers":[{"name":"c","image":"x","imagee":"y","resources":{"limits":{"cpu":2}}}],
              "replicas":3,"terminationGracePeriodSeconds":"30"},"spec":{}})",
                          d)
                  .ok());
  std::vector<SchemaFinding> f;
  reg.check(d, reg.definition("io.k8s.api.core.v1.Pod"), f);
  std::vector<std::string> msgs;
  for (auto& x : f) msgs.push_back(x.message);
  auto has = [&](const std::string& m) { return std::find(msgs.begin(), msgs.end(), m) != msgs.end(); };
  EXPECT_TRUE(has("unknown field \"spec.containers[0].imagee\""));
  EXPECT_TRUE(has("unknown field \"spec.replicas\""));
  EXPECT_TRUE(has("duplicate field \"spec\""));
  bool typeError = false;
  for (auto& x : f)
    if (x.kind == SchemaFinding::Kind::TypeMismatch && x.path == "spec.terminationGracePeriodSeconds")
      typeError = true;
  EXPECT_TRUE(typeError);
  // Quantities accept numbers; labels accept any key.
  for (auto& x : f) EXPECT_EQ(x.path.find("resources"), std::string::npos) << x.message;
  for (auto& x : f) EXPECT_EQ(x.path.find("labels"), std::string::npos) << x.message;

  reg.prune(d, reg.definition("io.k8s.api.core.v1.Pod"));
  std::vector<SchemaFinding> after;
  reg.check(d, reg.definition("io.k8s.api.core.v1.Pod"), after);
  for (auto& x : after) EXPECT_EQ(x.kind, SchemaFinding::Kind::TypeMismatch) << x.message;
}

namespace {

// The 400 message checkAgainstSchema would answer with: the first decode error.
std::vector<std::string> decodeErrors(const std::string& body, const std::string& definition) {
  const auto& reg = SchemaRegistry::instance();
  json::Document d;
  EXPECT_TRUE(json::parse(body, d).ok()) << body;
  std::vector<SchemaFinding> f;
  reg.check(d, reg.definition(definition), f);
  std::vector<std::string> out;
  for (auto& x : f)
    if (x.kind == SchemaFinding::Kind::TypeMismatch) out.push_back(x.path + ": " + x.message);
  return out;
}

}  // namespace

TEST(Schema, SecretDataMustBeGoBase64) {
  const std::string secret = "io.k8s.api.core.v1.Secret";
  // Go's StdEncoding: the offset of the first bad byte, or of the incomplete last group.
  EXPECT_EQ(decodeErrors(R"({"data":{"password":"admin"}})", secret),
            std::vector<std::string>{"data.password: illegal base64 data at input byte 4"});
  EXPECT_EQ(decodeErrors(R"({"data":{"k":"abc"}})", secret),
            std::vector<std::string>{"data.k: illegal base64 data at input byte 0"});
  EXPECT_EQ(decodeErrors(R"({"data":{"k":"APIKEY_BASE64"}})", secret),
            std::vector<std::string>{"data.k: illegal base64 data at input byte 6"});
  EXPECT_EQ(decodeErrors(R"({"data":{"k":"YQ=x"}})", secret),
            std::vector<std::string>{"data.k: illegal base64 data at input byte 2"});
  EXPECT_EQ(decodeErrors(R"({"data":{"k":"YQ==YQ=="}})", secret),
            std::vector<std::string>{"data.k: illegal base64 data at input byte 4"});
  // Line breaks are skipped; padding and empty values are fine.
  EXPECT_TRUE(decodeErrors(R"({"data":{"a":"YWRt\naW4=","b":"YQ==","c":""}})", secret).empty());
  // ConfigMap binaryData is []byte too.
  EXPECT_EQ(decodeErrors(R"({"binaryData":{"bin":"not base64"}})", "io.k8s.api.core.v1.ConfigMap"),
            std::vector<std::string>{"binaryData.bin: illegal base64 data at input byte 3"});
}

TEST(Schema, MalformedQuantitiesAreDecodeErrors) {
  const std::string pod = "io.k8s.api.core.v1.Pod";
  const std::string regex =
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  EXPECT_EQ(
      decodeErrors(R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"memory":"12x"}}}]}})", pod),
      std::vector<std::string>{"spec.containers[0].resources.limits.memory: " + regex});
  EXPECT_EQ(
      decodeErrors(R"({"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"abc"}}}]}})", pod),
      std::vector<std::string>{"spec.containers[0].resources.requests.cpu: " + regex});
  EXPECT_EQ(
      decodeErrors(R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"192i"}}}]}})", pod),
      std::vector<std::string>{"spec.containers[0].resources.limits.cpu: unable to parse quantity's suffix"});
  EXPECT_TRUE(decodeErrors(R"({"spec":{"containers":[{"name":"c","resources":{"limits":{
      "cpu":"1.5","memory":"1Gi","ephemeral-storage":"2e3","example.com/gpu":2,"x/y":"-1"}}}]}})",
                           pod)
                  .empty());
}
