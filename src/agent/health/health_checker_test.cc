#include "agent/health/health_checker.h"

#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

HealthSpec Spec(uint32_t failures) {
  HealthSpec s;
  s.check = TcpCheck{"p"};
  s.interval = absl::Seconds(10);
  s.timeout = absl::Seconds(2);
  s.failures = failures;
  s.initial_delay = absl::Seconds(30);
  return s;
}

TEST(HealthCheckerTest, FirstProbeAfterTheInitialDelayThenEveryInterval) {
  absl::Time t0 = absl::FromUnixSeconds(1000);
  HealthChecker h(Spec(3), t0);
  EXPECT_EQ(h.next_probe(), t0 + absl::Seconds(30));
  EXPECT_EQ(h.timeout(), absl::Seconds(2));
  h.Record(true, t0 + absl::Seconds(31));
  EXPECT_EQ(h.next_probe(), t0 + absl::Seconds(41));
}

TEST(HealthCheckerTest, UnknownToHealthyToUnhealthyAfterConsecutiveFailures) {
  absl::Time t = absl::FromUnixSeconds(1000);
  HealthChecker h(Spec(3), t);
  EXPECT_EQ(h.state(), HealthState::kUnknown);
  EXPECT_EQ(h.Record(true, t), HealthState::kHealthy);
  EXPECT_EQ(h.Record(true, t), std::nullopt);  // no change, no event
  EXPECT_EQ(h.Record(false, t), std::nullopt);
  EXPECT_EQ(h.Record(false, t), std::nullopt);
  EXPECT_EQ(h.Record(true, t), std::nullopt);  // the streak is broken
  EXPECT_EQ(h.consecutive_failures(), 0u);
  EXPECT_EQ(h.Record(false, t), std::nullopt);
  EXPECT_EQ(h.Record(false, t), std::nullopt);
  EXPECT_EQ(h.Record(false, t), HealthState::kUnhealthy);
  EXPECT_EQ(h.Record(false, t), std::nullopt);
  EXPECT_EQ(h.Record(true, t), HealthState::kHealthy);
}

TEST(HealthCheckerTest, UnknownToUnhealthyWithoutEverBeingHealthy) {
  absl::Time t = absl::FromUnixSeconds(1000);
  HealthChecker h(Spec(1), t);
  EXPECT_EQ(h.Record(false, t), HealthState::kUnhealthy);
}

}  // namespace
}  // namespace paceline::agent
