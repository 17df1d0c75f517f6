// Validation of the kinds other than pods and their templates, against upstream's
// messages and field paths; and how an Invalid answer words its errors.
#include <gtest/gtest.h>

#include "apis/resource.h"
#include "common/api_error.h"

using namespace shepherd;
using namespace shepherd::apis;

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
