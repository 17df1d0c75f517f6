#include <gtest/gtest.h>

#include "apis/fieldset.h"
#include "apis/schema.h"
#include "registry/managed_fields.h"

using namespace shepherd;
using namespace shepherd::registry;

namespace {
json::Document doc(const std::string& s) {
  json::Document d;
  EXPECT_TRUE(json::parse(s, d).ok()) << s;
  return d;
}
const apis::SchemaNode* deployment() {
  return apis::SchemaRegistry::instance().definition("io.k8s.api.apps.v1.Deployment");
}
std::string fieldsOf(const json::Value& obj, const std::string& manager) {
  for (auto& e : readManagedFields(obj))
    if (e.manager == manager) {
      json::Document d;
      d.SetObject();
      json::Value v = e.fields.toFieldsV1(d.GetAllocator());
      return json::serialize(v);
    }
  return "";
}
}  // namespace

TEST(FieldSet, KeyedListsSetsMapsAndAtomics) {
  auto d = doc(R"({"metadata":{"labels":{"a":"1"},"finalizers":["x"]},
      "spec":{"selector":{"matchLabels":{"app":"w"}},"template":{"spec":{"containers":[
        {"name":"c","image":"i","args":["1","2"],"ports":[{"containerPort":80}]}]}}}})");
  auto fs = apis::FieldSet::fromObject(d, deployment());
  json::Document out;
  out.SetObject();
  EXPECT_EQ(json::serialize(fs.toFieldsV1(out.GetAllocator())),
            R"({"f:metadata":{"f:finalizers":{"v:\"x\"":{}},"f:labels":{".":{},"f:a":{}}},)"
            R"("f:spec":{"f:selector":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},)"
            R"("f:args":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},)"
            R"("f:containerPort":{}}}}}}}}})");
  apis::FieldPath image = {"f:spec", "f:template", "f:spec", "f:containers", "k:{\"name\":\"c\"}", "f:image"};
  EXPECT_TRUE(fs.has(image));
  EXPECT_EQ(json::view(*apis::valueAt(d, image)), "i");
  EXPECT_EQ(apis::FieldSet::describe(image), ".spec.template.spec.containers[name=\"c\"].image");
  auto back = apis::FieldSet::fromFieldsV1(fs.toFieldsV1(out.GetAllocator()));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->paths(), fs.paths());
}

TEST(ManagedFields, UpdatesMoveOwnershipOfChangedFields) {
  auto obj = doc(R"({"metadata":{"name":"x","labels":{"a":"1"}},"data":{"k":"v","j":"w"}})");
  recordUpdate(nullptr, obj, "creator", "v1", Subresource::Main, nullptr, "t0");
  EXPECT_EQ(fieldsOf(obj, "creator"), R"({"f:data":{"f:j":{},"f:k":{}},"f:metadata":{"f:labels":{"f:a":{}}}})");
  json::Document old;
  old.CopyFrom(obj, old.GetAllocator());
  json::setString(obj["data"], "k", "changed", obj.GetAllocator());
  json::remove(obj["data"], "j");
  recordUpdate(&old, obj, "editor", "v1", Subresource::Main, nullptr, "t1");
  EXPECT_EQ(fieldsOf(obj, "creator"), R"({"f:metadata":{"f:labels":{"f:a":{}}}})");
  EXPECT_EQ(fieldsOf(obj, "editor"), R"({"f:data":{"f:k":{}}})");
}

TEST(ManagedFields, ApplyConflictsForcesAndRemovesUnappliedFields) {
  auto live = doc(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1","b":"2"}})");
  auto first = doc(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1","b":"2"}})");
  json::Document empty;
  empty.SetObject();
  live.SetObject();
  live.CopyFrom(first, live.GetAllocator());
  ASSERT_TRUE(applyConfiguration(live, first, "ci", false, "v1", nullptr, "t").ok());
  // Someone else changes a.
  json::Document before;
  before.CopyFrom(live, before.GetAllocator());
  json::setString(live["data"], "a", "9", live.GetAllocator());
  recordUpdate(&before, live, "human", "v1", Subresource::Main, nullptr, "t");
  // Applying a different value for a conflicts.
  auto second = doc(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"3"}})");
  auto st = applyConfiguration(live, second, "ci", false, "v1", nullptr, "t");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, 409);
  EXPECT_EQ(st.error().message, "Apply failed with 1 conflict: conflict with \"human\" using v1: .data.a");
  ASSERT_EQ(st.error().causes.size(), 1u);
  EXPECT_EQ(st.error().causes[0].field, ".data.a");
  // Forced: ci takes a; b, no longer applied and owned by nobody else, is removed.
  ASSERT_TRUE(applyConfiguration(live, second, "ci", true, "v1", nullptr, "t").ok());
  EXPECT_EQ(json::serialize(live["data"]), R"({"a":"3"})");
  EXPECT_EQ(fieldsOf(live, "human"), "");
  // Applying the same value as another owner shares ownership without conflict.
  json::Document b2;
  b2.CopyFrom(live, b2.GetAllocator());
  json::setString(live["data"], "z", "1", live.GetAllocator());
  recordUpdate(&b2, live, "human", "v1", Subresource::Main, nullptr, "t");
  auto third = doc(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"3","z":"1"}})");
  ASSERT_TRUE(applyConfiguration(live, third, "ci", false, "v1", nullptr, "t").ok());
  EXPECT_NE(fieldsOf(live, "human"), "");
}

// unite/minus/intersect combine the trees node by node; they must equal the set
// operations on member paths (a path is a member when FieldSet::has says so).
TEST(FieldSetOps, EqualPathwiseSetOperations) {
  const std::vector<apis::FieldPath> universe = {
      {"f:a"}, {"f:a", "."}, {"f:a", "f:b"}, {"f:a", "f:c"}, {"f:a", "f:b", "f:d"}, {"f:e"}, {"f:e", "k:{\"name\":\"x\"}"},
      {"f:e", "k:{\"name\":\"x\"}", "f:image"}, {"f:g", "v:1"}, {"f:g", "v:2"}};
  unsigned seed = 7;
  auto next = [&] { return seed = seed * 1103515245 + 12345, (seed >> 16) & 0x7fff; };
  auto members = [&](const apis::FieldSet& s) {
    std::vector<bool> in;
    for (auto& p : universe) in.push_back(s.has(p));
    return in;
  };
  for (int round = 0; round < 500; ++round) {
    apis::FieldSet a, b;
    for (auto& p : universe) {
      if (next() % 3 == 0) a.insert(p);
      if (next() % 3 == 0) b.insert(p);
    }
    auto ma = members(a), mb = members(b);
    auto mu = members(a.unite(b)), mm = members(a.minus(b)), mi = members(a.intersect(b));
    for (size_t i = 0; i < universe.size(); ++i) {
      SCOPED_TRACE("round " + std::to_string(round) + " path " + apis::FieldSet::describe(universe[i]));
      EXPECT_EQ(mu[i], ma[i] || mb[i]);
      EXPECT_EQ(mm[i], ma[i] && !mb[i]);
      EXPECT_EQ(mi[i], ma[i] && mb[i]);
    }
    // No empty branches are left behind: an empty result serializes as {}.
    json::Document d;
    d.SetObject();
    EXPECT_TRUE(a.minus(a).empty());
    EXPECT_EQ(json::serialize(a.minus(a).toFieldsV1(d.GetAllocator())), "{}");
    EXPECT_EQ(a.minus(a).paths().size(), 0u);
    EXPECT_EQ(a.unite(b).paths().size(), b.unite(a).paths().size());
  }
}
