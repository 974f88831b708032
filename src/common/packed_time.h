#pragma once
// PackedTime: an absl::Time in 8 bytes instead of 16, for the records the master keeps one of
// per task (ten million of them in one master: every byte is 10 MB).
//
// It holds nanoseconds since the Unix epoch, which spans the years 1678 to 2262; the infinite
// past and future are kept as such. A finite time outside that span saturates to the nearest
// end of it, and anything finer than a nanosecond is truncated towards the infinite past.
// Conversions both ways are implicit, so a field of this type reads and writes like an
// absl::Time: `rec.started = now;`, `absl::Time t = rec.started;`, `rec.started < now`. It has
// no operators of its own (they would be ambiguous with absl's): to compare or subtract two
// PackedTimes, convert one of them, `absl::Time(a) < b`.
//
// Thread-safety: a value type.

#include <cstdint>
#include <limits>

#include "absl/time/time.h"

namespace paceline {

class PackedTime {
 public:
  constexpr PackedTime() = default;                    // the infinite past
  PackedTime(absl::Time t) : ns_(Pack(t)) {}           // NOLINT(google-explicit-constructor)
  operator absl::Time() const { return Unpack(ns_); }  // NOLINT(google-explicit-constructor)

 private:
  static constexpr int64_t kPast = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kFuture = std::numeric_limits<int64_t>::max();

  static int64_t Pack(absl::Time t) {
    if (t == absl::InfinitePast()) return kPast;
    if (t == absl::InfiniteFuture()) return kFuture;
    // ToUnixNanos saturates; keep the two ends for the infinities.
    int64_t ns = absl::ToUnixNanos(t);
    if (ns == kPast) return kPast + 1;
    if (ns == kFuture) return kFuture - 1;
    return ns;
  }
  static absl::Time Unpack(int64_t ns) {
    if (ns == kPast) return absl::InfinitePast();
    if (ns == kFuture) return absl::InfiniteFuture();
    return absl::FromUnixNanos(ns);
  }

  int64_t ns_ = kPast;
};

}  // namespace paceline
