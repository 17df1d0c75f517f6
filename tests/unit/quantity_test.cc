#include <gtest/gtest.h>

#include "apis/quantity.h"

using namespace shepherd::apis;

TEST(Quantity, ParsesSuffixes) {
  EXPECT_DOUBLE_EQ(static_cast<double>(*parseQuantity("100m")), 0.1);
  EXPECT_DOUBLE_EQ(static_cast<double>(*parseQuantity("0.1")), 0.1);
  EXPECT_DOUBLE_EQ(static_cast<double>(*parseQuantity("1Gi")), 1073741824.0);
  EXPECT_DOUBLE_EQ(static_cast<double>(*parseQuantity("1G")), 1e9);
  EXPECT_DOUBLE_EQ(static_cast<double>(*parseQuantity("2e3")), 2000.0);
  EXPECT_DOUBLE_EQ(static_cast<double>(*parseQuantity("64Mi")), 67108864.0);
  EXPECT_FALSE(parseQuantity("").has_value());
  EXPECT_FALSE(parseQuantity("1X").has_value());
  EXPECT_FALSE(parseQuantity("abc").has_value());
  EXPECT_FALSE(parseQuantity(".").has_value());
}
