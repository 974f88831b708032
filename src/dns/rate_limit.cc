#include "dns/rate_limit.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace paceline::dns {

RateLimit::RateLimit(RateLimitOptions options) : options_(options) {}

bool RateLimit::Take(Bucket& bucket, absl::Time now) {
  const double elapsed = std::max(0.0, absl::ToDoubleSeconds(now - bucket.last));
  bucket.tokens = std::min(options_.burst, bucket.tokens + elapsed * options_.rate);
  bucket.last = std::max(bucket.last, now);
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

void RateLimit::Sweep(absl::Time now) {
  const absl::Duration refill = absl::Seconds(options_.burst / options_.rate);
  // At most once per refill time: a flood of new sources must not make every query a sweep.
  if (now - last_sweep_ < refill) return;
  last_sweep_ = now;
  absl::erase_if(buckets_, [&](const auto& entry) { return now - entry.second.last >= refill; });
}

RateLimit::Verdict RateLimit::Check(absl::string_view source, absl::Time now) {
  if (options_.rate <= 0) return Verdict::kAnswer;
  Bucket* bucket = nullptr;
  auto it = buckets_.find(source);
  if (it != buckets_.end()) {
    bucket = &it->second;
  } else {
    if (buckets_.size() >= options_.max_sources) Sweep(now);
    if (buckets_.size() < options_.max_sources) {
      bucket = &buckets_[source];
      *bucket = Bucket{.tokens = options_.burst, .last = now};
    } else {
      if (!overflow_used_) overflow_ = Bucket{.tokens = options_.burst, .last = now};
      overflow_used_ = true;
      bucket = &overflow_;
    }
  }
  if (Take(*bucket, now)) return Verdict::kAnswer;
  ++refused_;
  return options_.slip != 0 && refused_ % options_.slip == 0 ? Verdict::kTruncate : Verdict::kDrop;
}

}  // namespace paceline::dns
