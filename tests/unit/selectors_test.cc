#include "meta/selectors.h"

#include <gtest/gtest.h>

using namespace shepherd;
using namespace shepherd::meta;

namespace {
StringPairs labels(std::initializer_list<std::pair<std::string, std::string>> l) {
  StringPairs v(l.begin(), l.end());
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

TEST(LabelSelector, AllOperators) {
  auto l = labels({{"app", "web"}, {"tier", "front"}, {"n", "5"}});
  auto m = [&](const char* s) {
    auto sel = meta::LabelSelector::parse(s);
    EXPECT_TRUE(sel.ok()) << s;
    return sel.ok() && sel->matches(l);
  };
  EXPECT_TRUE(m(""));
  EXPECT_TRUE(m("app=web"));
  EXPECT_TRUE(m("app==web"));
  EXPECT_FALSE(m("app!=web"));
  EXPECT_TRUE(m("app in (web, db)"));
  EXPECT_FALSE(m("app notin (web,db)"));
  EXPECT_TRUE(m("tier"));
  EXPECT_FALSE(m("!tier"));
  EXPECT_TRUE(m("!missing"));
  EXPECT_TRUE(m("app=web,tier in (front)"));
  EXPECT_FALSE(m("app=web,tier=back"));
  EXPECT_TRUE(m("missing!=x"));
  EXPECT_TRUE(m("n>4"));
  EXPECT_FALSE(m("n<4"));
}

TEST(LabelSelector, SyntaxErrorsAre400) {
  for (const char* bad : {"app=", "=web", "app in web", "app in (a", "a b", "app=we b", "app=web,", "x>y"}) {
    auto sel = meta::LabelSelector::parse(bad);
    if (std::string(bad) == "app=") {
      // An empty value is valid (matches an empty label value).
      EXPECT_TRUE(sel.ok());
      continue;
    }
    ASSERT_FALSE(sel.ok()) << bad;
    EXPECT_EQ(sel.error().code, 400) << bad;
  }
}

TEST(FieldSelector, KnownFieldsAndEscapes) {
  std::vector<std::string> allowed = {"spec.nodeName", "status.phase"};
  StringPairs fields = {{"spec.nodeName", "n,1"}, {"status.phase", "Running"}};
  auto sel =
      meta::FieldSelector::parse("spec.nodeName=n\\,1,status.phase!=Pending,metadata.name=p1", allowed, true);
  ASSERT_TRUE(sel.ok()) << sel.error().message;
  EXPECT_TRUE(sel->matches("p1", "default", fields));
  EXPECT_EQ(*sel->exactValue("metadata.name"), "p1");
  auto other = meta::FieldSelector::parse("metadata.namespace=kube-system", allowed, true);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->matches("p1", "default", fields));
  auto bad = meta::FieldSelector::parse("spec.unknown=x", allowed, true);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, 400);
  EXPECT_NE(bad.error().message.find("field label not supported: spec.unknown"), std::string::npos);
  EXPECT_FALSE(meta::FieldSelector::parse("justtext", allowed, true).ok());
}
