#include "common/clock.h"

#include <gtest/gtest.h>

namespace paceline {
namespace {

TEST(SimulatedClock, MovesOnlyWhenTold) {
  SimulatedClock clock;
  absl::Time start = clock.Now();
  EXPECT_EQ(start, absl::FromUnixSeconds(SimulatedClock::kDefaultEpochSeconds));
  EXPECT_EQ(clock.Now(), start);
  clock.AdvanceBy(absl::Seconds(5));
  EXPECT_EQ(clock.Now(), start + absl::Seconds(5));
  clock.AdvanceTo(start + absl::Minutes(1));
  EXPECT_EQ(clock.Now() - start, absl::Minutes(1));
}

TEST(SimulatedClockDeathTest, RefusesToGoBack) {
  SimulatedClock clock;
  EXPECT_DEATH(clock.AdvanceBy(absl::Seconds(-1)), "cannot go back");
  EXPECT_DEATH(clock.AdvanceTo(clock.Now() - absl::Seconds(1)), "cannot go back");
}

TEST(RealClock, IsCloseToAbslNow) {
  const Clock& clock = RealClock::Get();
  EXPECT_LT(absl::AbsDuration(clock.Now() - absl::Now()), absl::Seconds(5));
}

}  // namespace
}  // namespace paceline
