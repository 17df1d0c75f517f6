// The name/label validators match by hand (std::regex was a hot spot on the create path);
// this pins them to the upstream regular expressions they replaced, over every short
// string of a small alphabet that exercises each rule's edge cases.
#include <gtest/gtest.h>

#include <regex>

#include "meta/validation.h"

namespace shepherd::meta::validation {
namespace {

bool full(const std::string& re, const std::string& s) {
  return std::regex_match(s, std::regex("^" + re + "$"));
}

// Every string up to length 4 over the alphabet: edge characters at each position.
std::vector<std::string> corpus() {
  const std::string alphabet = "aZ9-._/";
  std::vector<std::string> out{""};
  std::vector<std::string> frontier{""};
  for (int len = 1; len <= 4; ++len) {
    std::vector<std::string> next;
    for (auto& p : frontier)
      for (char c : alphabet) next.push_back(p + c);
    out.insert(out.end(), next.begin(), next.end());
    frontier = std::move(next);
  }
  return out;
}

TEST(ValidationFormats, MatchUpstreamRegexes) {
  const std::string labelRe = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
  const std::string subdomainRe = labelRe + "(\\." + labelRe + ")*";
  const std::string dns1035Re = "[a-z]([-a-z0-9]*[a-z0-9])?";
  const std::string qualifiedRe = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
  const std::string labelValueRe = "(" + qualifiedRe + ")?";
  const std::string cmKeyRe = "[-._a-zA-Z0-9]+";
  int checked = 0;
  for (const auto& s : corpus()) {
    SCOPED_TRACE("input '" + s + "'");
    EXPECT_EQ(dns1123Label(s).empty(), full(labelRe, s));
    EXPECT_EQ(dns1123Subdomain(s).empty(), full(subdomainRe, s));
    EXPECT_EQ(dns1035Label(s).empty(), full(dns1035Re, s));
    EXPECT_EQ(labelValue(s).empty(), full(labelValueRe, s));
    // qualifiedName allows one "prefix/" (a subdomain); without '/' it is the name rule.
    if (s.find('/') == std::string::npos) {
      EXPECT_EQ(qualifiedName(s).empty(), full(qualifiedRe, s));
    }
    EXPECT_EQ(configMapKey(s).empty(), full(cmKeyRe, s) && s != "." && s.rfind("..", 0) != 0);
    ++checked;
  }
  EXPECT_GT(checked, 2000);
  EXPECT_TRUE(qualifiedName("example.com/My_name.1").empty());
  EXPECT_FALSE(qualifiedName("Example.com/name").empty());
  EXPECT_FALSE(dns1123Subdomain("a..b").empty());
}

}  // namespace
}  // namespace shepherd::meta::validation
