#include "common/packed_time.h"

#include <gtest/gtest.h>

#include "absl/time/time.h"

namespace paceline {
namespace {

TEST(PackedTime, IsHalfTheSizeOfAnAbslTime) {
  static_assert(sizeof(PackedTime) == 8);
  static_assert(sizeof(absl::Time) == 16);
}

TEST(PackedTime, KeepsTheInfinitiesAndDefaultsToThePast) {
  EXPECT_EQ(absl::Time(PackedTime()), absl::InfinitePast());
  EXPECT_EQ(absl::Time(PackedTime(absl::InfinitePast())), absl::InfinitePast());
  EXPECT_EQ(absl::Time(PackedTime(absl::InfiniteFuture())), absl::InfiniteFuture());
}

TEST(PackedTime, RoundTripsEveryNanosecondTimeExactly) {
  for (int64_t ns : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{1795000000123456789},
                     int64_t{-2000000000000000000}}) {
    absl::Time t = absl::FromUnixNanos(ns);
    EXPECT_EQ(absl::Time(PackedTime(t)), t) << ns;
  }
  absl::Time now = absl::Now();
  EXPECT_EQ(absl::Time(PackedTime(now)), absl::FromUnixNanos(absl::ToUnixNanos(now)));
}

TEST(PackedTime, SaturatesFiniteTimesBeyondItsSpanWithoutBecomingInfinite) {
  absl::Time far_future = absl::FromUnixSeconds(int64_t{1} << 40);
  absl::Time far_past = absl::FromUnixSeconds(-(int64_t{1} << 40));
  absl::Time f = PackedTime(far_future);
  absl::Time p = PackedTime(far_past);
  EXPECT_LT(f, absl::InfiniteFuture());
  EXPECT_GT(f, absl::FromUnixSeconds(int64_t{9000000000}));  // 2255
  EXPECT_GT(p, absl::InfinitePast());
  EXPECT_LT(p, absl::FromUnixSeconds(-int64_t{9000000000}));  // 1684
}

TEST(PackedTime, ReadsAndComparesLikeAnAbslTime) {
  absl::Time t0 = absl::FromUnixSeconds(100);
  PackedTime a = t0;
  PackedTime b = t0 + absl::Seconds(1);
  EXPECT_LT(absl::Time(a), b);
  EXPECT_EQ(absl::Time(b) - a, absl::Seconds(1));
  EXPECT_TRUE(a == t0);
  EXPECT_TRUE(t0 + absl::Seconds(1) == b);
  EXPECT_FALSE(a == absl::Time(b));
}

}  // namespace
}  // namespace paceline
