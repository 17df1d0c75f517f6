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
