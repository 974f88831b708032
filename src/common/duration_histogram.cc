#include "common/duration_histogram.h"

#include <algorithm>
#include <bit>

namespace paceline {

int DurationBucket(absl::Duration d, int buckets) {
  const int64_t us = absl::ToInt64Microseconds(d);
  const int bucket = us <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<uint64_t>(us))) - 1;
  return std::min(bucket, buckets - 1);
}

absl::Duration BucketQuantile(absl::Span<const uint64_t> buckets, double q, absl::Duration max) {
  uint64_t total = 0;
  for (uint64_t n : buckets) total += n;
  if (total == 0) return absl::ZeroDuration();
  const double want = q * static_cast<double>(total);
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    seen += buckets[i];
    if (static_cast<double>(seen) >= want) return absl::Microseconds(int64_t{1} << (i + 1));
  }
  return max;
}

}  // namespace paceline
