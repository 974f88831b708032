#include "common/duration_histogram.h"

#include <gtest/gtest.h>

namespace paceline {
namespace {

TEST(DurationHistogram, QuantilesAreTheUpperBoundOfTheirPowerOfTwoBucket) {
  DurationHistogram h;
  EXPECT_EQ(h.Quantile(0.99), absl::ZeroDuration());
  EXPECT_EQ(h.Mean(), absl::ZeroDuration());
  for (int i = 0; i < 98; ++i) h.Add(absl::Microseconds(300));  // bucket [256, 512)
  h.Add(absl::Milliseconds(3));                                 // [2048, 4096)
  h.Add(absl::Nanoseconds(10));                                 // bucket 0
  EXPECT_EQ(h.count, 100u);
  EXPECT_EQ(h.max, absl::Milliseconds(3));
  EXPECT_EQ(h.Quantile(0.5), absl::Microseconds(512));
  EXPECT_EQ(h.Quantile(0.99), absl::Microseconds(512));
  EXPECT_EQ(h.Quantile(1.0), absl::Microseconds(4096));
  EXPECT_EQ(h.Quantile(0.005), absl::Microseconds(2));
  EXPECT_EQ(h.total, 98 * absl::Microseconds(300) + absl::Milliseconds(3) + absl::Nanoseconds(10));
}

TEST(DurationHistogram, SinceCountsOnlyWhatCameAfter) {
  DurationHistogram h;
  h.Add(absl::Milliseconds(3));
  const DurationHistogram before = h;
  h.Add(absl::Microseconds(300));
  h.Add(absl::Microseconds(300));
  DurationHistogram d = h.Since(before);
  EXPECT_EQ(d.count, 2u);
  EXPECT_EQ(d.total, absl::Microseconds(600));
  EXPECT_EQ(d.Quantile(1.0), absl::Microseconds(512));
  EXPECT_EQ(d.max, absl::Milliseconds(3)) << "the longest of all";
}

TEST(DurationHistogram, ALongDurationLandsInTheLastBucket) {
  EXPECT_EQ(DurationBucket(absl::Hours(100), DurationHistogram::kBuckets),
            DurationHistogram::kBuckets - 1);
  EXPECT_EQ(DurationBucket(absl::Microseconds(1), 32), 0);
  EXPECT_EQ(DurationBucket(absl::Microseconds(2), 32), 1);
  EXPECT_EQ(DurationBucket(absl::Microseconds(3), 32), 1);
}

}  // namespace
}  // namespace paceline
