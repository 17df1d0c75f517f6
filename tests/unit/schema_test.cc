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
