#pragma once
// DurationHistogram: durations counted in power-of-two buckets of microseconds (bucket i holds
// [2^i, 2^(i+1)) us; bucket 0 also those under 1 us), with their count, sum and maximum; for
// commit times and scheduling cycles, where a factor of two is precision enough and the record
// must cost nothing.
//
// Thread-safety: a value type.

#include <array>
#include <cstdint>

#include "absl/time/time.h"
#include "absl/types/span.h"

namespace paceline {

// The bucket of `d`.
int DurationBucket(absl::Duration d, int buckets);
// The upper bound of the bucket holding the q-quantile (0 < q <= 1) of the durations counted in
// `buckets`: within a factor of two, never an underestimate; `max` when q lands past the last
// bucket; zero when nothing was counted.
absl::Duration BucketQuantile(absl::Span<const uint64_t> buckets, double q, absl::Duration max);

struct DurationHistogram {
  static constexpr int kBuckets = 32;
  std::array<uint64_t, kBuckets> buckets{};
  uint64_t count = 0;
  absl::Duration total;
  absl::Duration max;

  void Add(absl::Duration d) {
    ++buckets[DurationBucket(d, kBuckets)];
    ++count;
    total += d;
    if (d > max) max = d;
  }
  absl::Duration Quantile(double q) const { return BucketQuantile(buckets, q, max); }
  // What was counted after `before` (an earlier copy of this histogram); `max` stays the
  // longest of all, which a difference cannot tell.
  DurationHistogram Since(const DurationHistogram& before) const {
    DurationHistogram d = *this;
    for (int i = 0; i < kBuckets; ++i) d.buckets[i] -= before.buckets[i];
    d.count -= before.count;
    d.total -= before.total;
    return d;
  }
  absl::Duration Mean() const {
    return count == 0 ? absl::ZeroDuration() : total / static_cast<int64_t>(count);
  }
};

}  // namespace paceline
