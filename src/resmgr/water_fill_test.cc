#include "resmgr/water_fill.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "common/resources.h"

namespace paceline::resmgr {
namespace {

using ::testing::ElementsAre;

struct Result {
  std::vector<int64_t> grant;
  int64_t left;
};

Result Fill(int64_t amount, std::vector<int64_t> headroom, std::vector<double> weight) {
  WaterFiller f;
  std::vector<int64_t> grant(headroom.size(), 0);
  int64_t left = f.Fill(amount, headroom, weight, grant);
  return {grant, left};
}

TEST(WaterFillTest, EveryoneFitsAndTheRestIsReturned) {
  Result r = Fill(100, {10, 20, 30}, {1, 1, 1});
  EXPECT_THAT(r.grant, ElementsAre(10, 20, 30));
  EXPECT_EQ(r.left, 40);
}

TEST(WaterFillTest, DividesByWeight) {
  Result r = Fill(100, {1000, 1000}, {3, 1});
  EXPECT_THAT(r.grant, ElementsAre(75, 25));
  EXPECT_EQ(r.left, 0);
}

TEST(WaterFillTest, CappedEntriesLeaveTheirPartToOthers) {
  Result r = Fill(100, {10, kUnlimited, kUnlimited}, {1, 1, 1});
  EXPECT_THAT(r.grant, ElementsAre(10, 45, 45));
  EXPECT_EQ(r.left, 0);
}

TEST(WaterFillTest, FlooringRemainderGoesToEntriesInIndexOrder) {
  Result r = Fill(10, {100, 100, 100}, {1, 1, 1});
  EXPECT_THAT(r.grant, ElementsAre(4, 3, 3));
  Result z = Fill(0, {100, 100}, {1, 1});
  EXPECT_THAT(z.grant, ElementsAre(0, 0));
}

TEST(WaterFillTest, AddsToExistingGrants) {
  WaterFiller f;
  std::vector<int64_t> headroom = {50, 50};
  std::vector<double> weight = {1, 1};
  std::vector<int64_t> grant = {7, 9};
  EXPECT_EQ(f.Fill(20, headroom, weight, grant), 0);
  EXPECT_THAT(grant, ElementsAre(17, 19));
}

TEST(WaterFillTest, ExactForExabyteScaleAmounts) {
  const int64_t amount = int64_t{3} << 60;  // ~3.5e18
  Result r = Fill(amount, {kUnlimited, kUnlimited, amount / 7}, {1, 2, 1});
  EXPECT_EQ(r.grant[2], amount / 7);
  EXPECT_EQ(r.grant[0] + r.grant[1] + r.grant[2] + r.left, amount);
  EXPECT_NEAR(static_cast<double>(r.grant[1]) / r.grant[0], 2.0, 1e-9);
}

// Max-min property over random inputs: conservation, caps, and equal level for the uncapped.
TEST(WaterFillTest, RandomInputsAreMaxMinFair) {
  const uint64_t seed = 20240601;
  SCOPED_TRACE(::testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  WaterFiller f;
  for (int iter = 0; iter < 5000; ++iter) {
    SCOPED_TRACE(::testing::Message() << "iteration " << iter);
    const int n = 1 + static_cast<int>(rng() % 12);
    std::vector<int64_t> headroom(n), grant(n, 0);
    std::vector<double> weight(n);
    for (int i = 0; i < n; ++i) {
      headroom[i] = rng() % 4 == 0 ? kUnlimited : static_cast<int64_t>(rng() % 100000);
      weight[i] = 0.25 * (1 + rng() % 8);
    }
    const int64_t amount = static_cast<int64_t>(rng() % 300000);
    const int64_t left = f.Fill(amount, headroom, weight, grant);
    int64_t sum = 0;
    for (int i = 0; i < n; ++i) {
      ASSERT_GE(grant[i], 0);
      ASSERT_LE(grant[i], headroom[i]);
      sum += grant[i];
    }
    ASSERT_EQ(sum + left, amount);
    if (left > 0) {
      for (int i = 0; i < n; ++i) ASSERT_EQ(grant[i], headroom[i]) << "left over while " << i;
    }
    // The level of an uncapped entry is the maximum level (within one unit of rounding).
    double level = 0, max_step = 0;
    for (int i = 0; i < n; ++i) {
      level = std::max(level, grant[i] / weight[i]);
      max_step = std::max(max_step, 1.0 / weight[i]);
    }
    for (int i = 0; i < n; ++i) {
      if (grant[i] < headroom[i]) {
        ASSERT_GE(grant[i] / weight[i], level - 1.0 / weight[i] - max_step - 1e-9) << "entry " << i;
      }
    }
  }
}

}  // namespace
}  // namespace paceline::resmgr
