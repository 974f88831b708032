#include "common/clock.h"

#include "common/check.h"

namespace paceline {

const RealClock& RealClock::Get() {
  static const RealClock clock;
  return clock;
}

void SimulatedClock::AdvanceBy(absl::Duration d) {
  PL_CHECK(d >= absl::ZeroDuration()) << "SimulatedClock cannot go back in time";
  now_ += d;
}

void SimulatedClock::AdvanceTo(absl::Time t) {
  PL_CHECK(t >= now_) << "SimulatedClock cannot go back in time";
  now_ = t;
}

}  // namespace paceline
