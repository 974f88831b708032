#include "common/resources.h"

#include <gtest/gtest.h>

namespace paceline {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

TEST(Resources, DefaultIsZero) {
  Resources r;
  EXPECT_TRUE(r.IsZero());
  EXPECT_TRUE(r.IsNonNegative());
  for (Dim d : kAllDims) EXPECT_EQ(r[d], 0);
}

TEST(Resources, Arithmetic) {
  Resources a = Resources::Of(1500, 2 * kGi, kGi, 500);
  Resources b = Resources::Of(500, kGi, 0, 500);
  EXPECT_EQ(a + b, Resources::Of(2000, 3 * kGi, kGi, 1000));
  EXPECT_EQ(a - b, Resources::Of(1000, kGi, kGi, 0));
  EXPECT_EQ(b * 3, Resources::Of(1500, 3 * kGi, 0, 1500));
  Resources c = a;
  c -= a;
  EXPECT_TRUE(c.IsZero());
  EXPECT_FALSE((b - a).IsNonNegative());
  EXPECT_EQ(SubtractClamped(b, a), Resources::Of(0, 0, 0, 0));
  EXPECT_EQ(Min(a, b), b - Resources::Of(0, 0, 0, 0));
  EXPECT_EQ(Max(a, b), a);
}

TEST(Resources, FitsAndDominates) {
  Resources host = Resources::Of(4000, 8 * kGi, 100 * kGi, 1000);
  EXPECT_TRUE(Resources::Of(4000, 8 * kGi, 100 * kGi, 1000).FitsIn(host));  // exact fit
  EXPECT_FALSE(Resources::Of(4001, 0, 0, 0).FitsIn(host));
  EXPECT_FALSE(Resources::Of(0, 0, 0, 1001).FitsIn(host));  // fractional gpu over a device
  EXPECT_TRUE(Resources().FitsIn(host));
  EXPECT_TRUE(host.Dominates(Resources::Of(1, 1, 1, 1)));
  EXPECT_FALSE(Resources::Of(1, 0, 0, 0).Dominates(Resources::Of(0, 1, 0, 0)));
  EXPECT_FALSE(Resources().FitsIn(Resources::Of(-1, 0, 0, 0)));
}

TEST(Resources, FirstExceedingNamesTheDimension) {
  Resources cap = Resources::Of(1000, kGi, 0, 0);
  EXPECT_EQ(Resources::Of(0, 2 * kGi, 0, 0).FirstExceeding(cap), Dim::kMemory);
  EXPECT_EQ(Resources::Of(0, 0, 1, 0).FirstExceeding(cap), Dim::kDisk);
  EXPECT_EQ(Resources::Of(500, kGi, 0, 0).FirstExceeding(cap), std::nullopt);
}

TEST(Resources, CheckedArithmeticDetectsOverflow) {
  Resources big = Resources::Filled(INT64_MAX - 1);
  EXPECT_FALSE(CheckedAdd(big, Resources::Of(2, 0, 0, 0)).has_value());
  EXPECT_EQ(CheckedAdd(big, Resources::Of(1, 1, 1, 1)), Resources::Filled(INT64_MAX));
  EXPECT_FALSE(CheckedMultiply(Resources::Of(0, kGi, 0, 0), int64_t{1} << 34).has_value());
  EXPECT_EQ(CheckedMultiply(Resources::Of(1, 2, 3, 4), 10), Resources::Of(10, 20, 30, 40));
  EXPECT_FALSE(CheckedMultiply(Resources::Of(1, 0, 0, 0), -1).has_value());
}

TEST(Resources, ToStringUsesHumanUnits) {
  EXPECT_EQ(Resources::Of(1500, 2 * kGi, 0, 500).ToString(), "cpu=1.5 memory=2Gi disk=0 gpu=0.5");
}

TEST(Dims, NamesRoundTrip) {
  for (Dim d : kAllDims) EXPECT_EQ(DimFromName(DimName(d)), d);
  EXPECT_EQ(DimFromName("cores"), std::nullopt);
}

TEST(Resources, IsSmallAndTrivial) {
  static_assert(sizeof(Resources) == 32);
  static_assert(std::is_trivially_copyable_v<Resources>);
}

}  // namespace
}  // namespace paceline
