#include <gtest/gtest.h>

#include "common/json.h"
#include "common/yaml_json.h"

using namespace shepherd;

TEST(Json, RejectsMalformedAndTrailingGarbage) {
  json::Document d;
  EXPECT_FALSE(json::parse("{\"a\":", d).ok());
  EXPECT_FALSE(json::parse("{} {}", d).ok());
  auto st = json::parse("{\"a\":1}", d);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(json::getInt(d, "a").value(), 1);
}

TEST(Json, DeepNestingIsRefusedWithoutRecursion) {
  std::string deep(200000, '[');
  json::Document d;
  auto st = json::parse(deep, d);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, 400);
  std::string ok(json::kMaxDepth - 1, '[');
  ok += std::string(json::kMaxDepth - 1, ']');
  EXPECT_TRUE(json::parse(ok, d).ok());
  // Brackets inside strings do not count.
  EXPECT_TRUE(json::parse("{\"s\":\"" + std::string(1000, '[') + "\"}", d).ok());
}

TEST(Yaml, ResolvesScalarsLikeKubernetes) {
  json::Document d;
  ASSERT_TRUE(yamlToJson("a: 1\nb: true\nc: \"1\"\nd: null\ne: 1.5\nf: hello\ng: yes\nh: '007'\ni: 0x1F\nj: ~\n", d).ok());
  EXPECT_TRUE(d["a"].IsInt64());
  EXPECT_TRUE(d["b"].IsBool());
  EXPECT_TRUE(d["c"].IsString());
  EXPECT_TRUE(d["d"].IsNull());
  EXPECT_TRUE(d["e"].IsDouble());
  EXPECT_STREQ(d["f"].GetString(), "hello");
  EXPECT_TRUE(d["g"].IsBool());
  EXPECT_STREQ(d["h"].GetString(), "007");
  EXPECT_EQ(d["i"].GetInt64(), 31);
  EXPECT_TRUE(d["j"].IsNull());
}

TEST(Yaml, RejectsDuplicateKeysBadSyntaxAndBombs) {
  json::Document d;
  EXPECT_FALSE(yamlToJson("a: 1\na: 2\n", d).ok());
  EXPECT_FALSE(yamlToJson("a: [1, 2\n", d).ok());
  std::string deep;
  for (int i = 0; i < 500; ++i) deep += "[";
  EXPECT_FALSE(yamlToJson(deep, d).ok());
  // Exponential alias expansion ("billion laughs") is stopped by the node budget.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", *" : "*") + prev;
    bomb += "]\n";
    prev = c;
  }
  auto st = yamlToJson(bomb, d);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, 400);
}

TEST(Yaml, RoundTripsThroughJsonToYaml) {
  json::Document d;
  ASSERT_TRUE(json::parse(R"({"a":{"b":[1,"2",true,null]},"s":"yes","e":""})", d).ok());
  std::string y = jsonToYaml(d);
  json::Document back;
  ASSERT_TRUE(yamlToJson(y, back).ok()) << y;
  EXPECT_TRUE(back == d) << y;
}

// serializeFindingEnd reports where the top-level member's object closes (the write path
// splices the resourceVersion there); anything ambiguous reports none.
TEST(Json, SerializeFindingEndOfTopLevelMember) {
  auto endOf = [](const std::string& text) {
    json::Document d;
    d.Parse(text.data(), text.size());
    size_t end = 0;
    std::string out = json::serializeFindingEnd(d, "metadata", end);
    return std::make_pair(out, end);
  };
  auto [out, end] = endOf(R"({"kind":"Pod","metadata":{"name":"a","labels":{"metadata":"x"}},"spec":{"metadata":{}}})");
  ASSERT_NE(end, std::string::npos);
  // `end` is the offset of metadata's own closing brace.
  EXPECT_EQ(out.substr(0, end), R"({"kind":"Pod","metadata":{"name":"a","labels":{"metadata":"x"})");
  EXPECT_EQ(out[end], '}');
  auto empty = endOf(R"({"metadata":{},"spec":1})");
  EXPECT_EQ(empty.second, std::string(R"({"metadata":{)").size());
  EXPECT_EQ(endOf(R"({"metadata":"scalar","spec":{}})").second, std::string::npos);
  EXPECT_EQ(endOf(R"({"spec":{"metadata":{"name":"nested"}}})").second, std::string::npos);
  EXPECT_EQ(endOf(R"({"metadata":{"name":"a"},"metadata":{"name":"b"}})").second, std::string::npos);
  EXPECT_EQ(endOf(R"({"metadata":[1],"x":{"y":2}})").second, std::string::npos);
}
