#include "meta/quantity.h"

#include <gtest/gtest.h>

using namespace shepherd;

TEST(Quantity, ParsesSuffixes) {
  EXPECT_DOUBLE_EQ(static_cast<double>(*meta::parseQuantity("100m")), 0.1);
  EXPECT_DOUBLE_EQ(static_cast<double>(*meta::parseQuantity("0.1")), 0.1);
  EXPECT_DOUBLE_EQ(static_cast<double>(*meta::parseQuantity("1Gi")), 1073741824.0);
  EXPECT_DOUBLE_EQ(static_cast<double>(*meta::parseQuantity("1G")), 1e9);
  EXPECT_DOUBLE_EQ(static_cast<double>(*meta::parseQuantity("2e3")), 2000.0);
  EXPECT_DOUBLE_EQ(static_cast<double>(*meta::parseQuantity("64Mi")), 67108864.0);
  EXPECT_FALSE(meta::parseQuantity("").has_value());
  EXPECT_FALSE(meta::parseQuantity("1X").has_value());
  EXPECT_FALSE(meta::parseQuantity("abc").has_value());
  EXPECT_FALSE(meta::parseQuantity(".").has_value());
}
