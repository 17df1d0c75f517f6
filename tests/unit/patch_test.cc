// Patch engines against the examples in RFC 7386, RFC 6902 and upstream's strategic
// merge patch documentation.
#include <gtest/gtest.h>

#include "apis/schema.h"
#include "common/json_merge_patch.h"
#include "handlers/patch/json_patch.h"
#include "handlers/patch/strategic_merge.h"

using namespace shepherd;
using namespace shepherd::handlers::patch;

namespace {
json::Document doc(const std::string& s) {
  json::Document d;
  EXPECT_TRUE(json::parse(s, d).ok()) << s;
  return d;
}
std::string merge(const std::string& target, const std::string& patch) {
  auto t = doc(target);
  auto p = doc(patch);
  json::applyMergePatch(t, p, t.GetAllocator());
  return json::serialize(t);
}
std::string jsonPatch(const std::string& target, const std::string& ops, int* code = nullptr) {
  auto t = doc(target);
  auto o = doc(ops);
  auto st = applyJsonPatch(t, o);
  if (code) *code = st.ok() ? 0 : st.error().code;
  return st.ok() ? json::serialize(t) : "error";
}
const apis::SchemaNode* pod() {
  return apis::SchemaRegistry::instance().definition("io.k8s.api.core.v1.Pod");
}
std::string smp(const std::string& target, const std::string& patch, const apis::SchemaNode* s = pod()) {
  auto t = doc(target);
  auto p = doc(patch);
  auto st = applyStrategicMergePatch(t, p, s, t.GetAllocator());
  return st.ok() ? json::serialize(t) : "error: " + st.error().message;
}
}  // namespace

TEST(MergePatch, Rfc7386Examples) {
  EXPECT_EQ(merge(R"({"a":"b"})", R"({"a":"c"})"), R"({"a":"c"})");
  EXPECT_EQ(merge(R"({"a":"b"})", R"({"b":"c"})"), R"({"a":"b","b":"c"})");
  EXPECT_EQ(merge(R"({"a":"b"})", R"({"a":null})"), R"({})");
  EXPECT_EQ(merge(R"({"a":"b","b":"c"})", R"({"a":null})"), R"({"b":"c"})");
  EXPECT_EQ(merge(R"({"a":["b"]})", R"({"a":"c"})"), R"({"a":"c"})");
  EXPECT_EQ(merge(R"({"a":"c"})", R"({"a":["b"]})"), R"({"a":["b"]})");
  EXPECT_EQ(merge(R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})"), R"({"a":{"b":"d"}})");
  EXPECT_EQ(merge(R"({"a":[{"b":"c"}]})", R"({"a":[1]})"), R"({"a":[1]})");
  EXPECT_EQ(merge(R"({"e":null})", R"({"a":1})"), R"({"e":null,"a":1})");
  EXPECT_EQ(merge(R"({})", R"({"a":{"bb":{"ccc":null}}})"), R"({"a":{"bb":{}}})");
}

TEST(JsonPatch, Rfc6902Examples) {
  EXPECT_EQ(jsonPatch(R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux"}])"),
            R"({"foo":"bar","baz":"qux"})");
  EXPECT_EQ(jsonPatch(R"({"foo":["bar","baz"]})", R"([{"op":"add","path":"/foo/1","value":"qux"}])"),
            R"({"foo":["bar","qux","baz"]})");
  EXPECT_EQ(jsonPatch(R"({"baz":"qux","foo":"bar"})", R"([{"op":"remove","path":"/baz"}])"),
            R"({"foo":"bar"})");
  EXPECT_EQ(jsonPatch(R"({"foo":["bar","qux","baz"]})", R"([{"op":"remove","path":"/foo/1"}])"),
            R"({"foo":["bar","baz"]})");
  EXPECT_EQ(jsonPatch(R"({"baz":"qux","foo":"bar"})", R"([{"op":"replace","path":"/baz","value":"boo"}])"),
            R"({"baz":"boo","foo":"bar"})");
  EXPECT_EQ(jsonPatch(R"({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}})",
                      R"([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}])"),
            R"({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})");
  EXPECT_EQ(jsonPatch(R"({"foo":["all","grass","cows","eat"]})",
                      R"([{"op":"move","from":"/foo/1","path":"/foo/3"}])"),
            R"({"foo":["all","cows","eat","grass"]})");
  EXPECT_EQ(
      jsonPatch(R"({"baz":"qux","foo":["a",2,"c"]})",
                R"([{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}])"),
      R"({"baz":"qux","foo":["a",2,"c"]})");
  int code = 0;
  EXPECT_EQ(jsonPatch(R"({"baz":"qux"})", R"([{"op":"test","path":"/baz","value":"bar"}])", &code), "error");
  EXPECT_EQ(code, 422);
  EXPECT_EQ(jsonPatch(R"({"foo":"bar"})", R"([{"op":"add","path":"/baz/bat","value":"qux"}])", &code),
            "error");
  EXPECT_EQ(jsonPatch(R"({"foo":"bar"})", R"([{"op":"add","path":"/child","value":{"grandchild":{}}}])"),
            R"({"foo":"bar","child":{"grandchild":{}}})");
  EXPECT_EQ(jsonPatch(R"({"foo":["bar"]})", R"([{"op":"add","path":"/foo/-","value":["abc","def"]}])"),
            R"({"foo":["bar",["abc","def"]]})");
  EXPECT_EQ(jsonPatch(R"({"/":9,"~1":10})", R"([{"op":"test","path":"/~01","value":10}])"),
            R"({"/":9,"~1":10})");
  EXPECT_EQ(jsonPatch(R"({})", R"([{"op":"bogus","path":"/a"}])", &code), "error");
  EXPECT_EQ(code, 400);
}

TEST(StrategicMergePatch, MergesContainersByName) {
  std::string live = R"({"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}})";
  EXPECT_EQ(smp(live, R"({"spec":{"containers":[{"name":"b","image":"b:2"}]}})"),
            R"({"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:2"}]}})");
  // Upstream's order after a merge: a new item from the patch goes before the live-only
  // ones (the ReplicaSet "Replace and Patch" conformance test relies on it).
  EXPECT_EQ(
      smp(live, R"({"spec":{"containers":[{"name":"c","image":"c:1"}]}})"),
      R"({"spec":{"containers":[{"name":"c","image":"c:1"},{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}})");
  // Items of the patch keep the patch's order; a live item that came first in the live list
  // stays in front of a patch item that was live too.
  EXPECT_EQ(
      smp(live, R"({"spec":{"containers":[{"name":"b","image":"b:2"},{"name":"c","image":"c:1"}]}})"),
      R"({"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:2"},{"name":"c","image":"c:1"}]}})");
  EXPECT_EQ(smp(live, R"({"spec":{"containers":[{"name":"a","$patch":"delete"}]}})"),
            R"({"spec":{"containers":[{"name":"b","image":"b:1"}]}})");
  EXPECT_EQ(smp(live, R"({"spec":{"containers":[{"name":"z","image":"z"},{"$patch":"replace"}]}})"),
            R"({"spec":{"containers":[{"name":"z","image":"z"}]}})");
  // What kubectl apply sends: $setElementOrder gives the final order.
  EXPECT_EQ(smp(live, R"({"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],
                               "containers":[{"name":"a","image":"a:2"}]}})"),
            R"({"spec":{"containers":[{"name":"b","image":"b:1"},{"name":"a","image":"a:2"}]}})");
  EXPECT_NE(smp(live, R"({"spec":{"containers":[{"image":"nokey"}]}})").find("error"), std::string::npos);
}

TEST(StrategicMergePatch, MapsPrimitiveListsAndDirectives) {
  // Maps merge; null deletes.
  EXPECT_EQ(
      smp(R"({"metadata":{"labels":{"a":"1","b":"2"}}})", R"({"metadata":{"labels":{"a":null,"c":"3"}}})"),
      R"({"metadata":{"labels":{"b":"2","c":"3"}}})");
  // finalizers: primitive list with strategy merge -> union; $deleteFromPrimitiveList.
  // (in upstream's order: the patch's items in its order, then the live-only ones)
  EXPECT_EQ(smp(R"({"metadata":{"finalizers":["x","y"]}})", R"({"metadata":{"finalizers":["z","x"]}})"),
            R"({"metadata":{"finalizers":["z","x","y"]}})");
  EXPECT_EQ(smp(R"({"metadata":{"finalizers":["x","y"]}})",
                R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["x"]}})"),
            R"({"metadata":{"finalizers":["y"]}})");
  // args has no merge strategy: replaced.
  EXPECT_EQ(smp(R"({"spec":{"containers":[{"name":"a","args":["1","2"]}]}})",
                R"({"spec":{"containers":[{"name":"a","args":["3"]}]}})"),
            R"({"spec":{"containers":[{"name":"a","args":["3"]}]}})");
  // $patch: replace on a map.
  EXPECT_EQ(
      smp(R"({"metadata":{"labels":{"a":"1"}}})", R"({"metadata":{"labels":{"$patch":"replace","b":"2"}}})"),
      R"({"metadata":{"labels":{"b":"2"}}})");
  // $retainKeys on volumes (merge,retainKeys): switching a volume's source drops the old one.
  EXPECT_EQ(
      smp(R"({"spec":{"volumes":[{"name":"v","emptyDir":{}}]}})",
          R"({"spec":{"volumes":[{"name":"v","hostPath":{"path":"/x"},"$retainKeys":["hostPath","name"]}]}})"),
      R"({"spec":{"volumes":[{"name":"v","hostPath":{"path":"/x"}}]}})");
  // Without a schema it behaves as a merge patch with list replacement.
  EXPECT_EQ(smp(R"({"x":[1,2],"y":{"a":1}})", R"({"x":[3],"y":{"b":2}})", nullptr),
            R"({"x":[3],"y":{"a":1,"b":2}})");
}
