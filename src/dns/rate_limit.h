#pragma once
// RateLimit: how many DNS queries each source may have answered, so that one client (or one
// forged source address) cannot take the server's time or use it to flood a victim with
// answers. A token bucket per source: `rate` queries a second, up to `burst` at once. It keeps
// at most `max_sources` buckets: a new source past that first removes the buckets that are
// full again (their sources have been quiet long enough to be as new; at most once per
// refill time), and if none is, shares
// one overflow bucket with the other sources it could not hold, so that memory stays bounded
// under a flood of forged addresses.
//
// A refused query is answered, one time in `slip`, by an empty truncated answer (TC): a real
// client then asks again over TCP, where forged addresses cannot go (as BIND's rate limiting
// does); the others get no answer. slip 0: never.
//
// Time is an argument. Thread-safety: not synchronized (one per receiving thread, or guarded).

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace paceline::dns {

struct RateLimitOptions {
  double rate = 1000;  // queries a second per source; 0: no limit
  double burst = 2000;
  size_t max_sources = 100'000;
  uint32_t slip = 2;
};

class RateLimit {
 public:
  enum class Verdict : uint8_t { kAnswer, kTruncate, kDrop };

  explicit RateLimit(RateLimitOptions options);

  // What to do with a query from `source` (its address, without the port) at `now`.
  Verdict Check(absl::string_view source, absl::Time now);

  size_t sources() const { return buckets_.size(); }
  uint64_t refused() const { return refused_; }

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time last;
  };
  bool Take(Bucket& bucket, absl::Time now);
  void Sweep(absl::Time now);

  RateLimitOptions options_;
  absl::flat_hash_map<std::string, Bucket> buckets_;
  Bucket overflow_;
  bool overflow_used_ = false;
  absl::Time last_sweep_ = absl::InfinitePast();
  uint64_t refused_ = 0;
};

}  // namespace paceline::dns
