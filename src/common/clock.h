#pragma once
// Clock: the injected source of time. The pure cores (resource manager, placement, job state
// machines) never read the wall clock; they take `absl::Time now` or a `const Clock&`.
//
//   RealClock       the wall clock; used only at the edges (master event loop, agent).
//   SimulatedClock  time moves only when told (AdvanceBy / AdvanceTo); used by tests and
//                   `paceline sim`. Starts at a fixed epoch so runs are reproducible.
//
// Thread-safety: RealClock is thread-safe. SimulatedClock is single-threaded by design: it
// belongs to the thread that drives the simulation.

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace paceline {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  // A process-wide instance for the edges that need one.
  static const RealClock& Get();
};

class SimulatedClock final : public Clock {
 public:
  // 2020-01-01T00:00:00Z: an arbitrary, fixed start so reports do not depend on the wall clock.
  static constexpr int64_t kDefaultEpochSeconds = 1577836800;

  explicit SimulatedClock(absl::Time start = absl::FromUnixSeconds(kDefaultEpochSeconds))
      : now_(start) {}
  absl::Time Now() const override { return now_; }
  // Moves time forward; a negative step is a programming error (crash).
  void AdvanceBy(absl::Duration d);
  // Moves time to `t`, which must not be in the past.
  void AdvanceTo(absl::Time t);

 private:
  absl::Time now_;
};

}  // namespace paceline
