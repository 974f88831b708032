#include "hostmgr/host_tracker.h"

#include <gtest/gtest.h>

namespace paceline::hostmgr {
namespace {

placement::HostSpec Spec(const std::string& name, int64_t cpu_milli) {
  placement::HostSpec s;
  s.name = name;
  s.capacity = Resources::Of(cpu_milli, 1 << 30);
  return s;
}

class HostTrackerTest : public ::testing::Test {
 protected:
  absl::Time T(int seconds) { return absl::FromUnixSeconds(1'000'000 + seconds); }
  HostTracker tracker_{absl::Seconds(30)};
};

TEST_F(HostTrackerTest, AHostExpiresOnlyWhenItsLatestHeartbeatIsOlderThanTheTimeout) {
  tracker_.Register(Spec("a", 1000), T(0));
  tracker_.Register(Spec("b", 1000), T(0));
  ASSERT_TRUE(tracker_.Heartbeat("a", T(20)));
  EXPECT_TRUE(tracker_.Expire(T(30)).empty());  // exactly the timeout: not yet
  std::vector<HostId> gone = tracker_.Expire(T(31));
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(tracker_.Get(gone[0]).spec.name, "b");
  EXPECT_FALSE(tracker_.Get(gone[0]).connected);
  EXPECT_TRUE(tracker_.Expire(T(50)).empty());  // a's beat at 20 is still fresh
  EXPECT_EQ(tracker_.Expire(T(51)).size(), 1u);
  EXPECT_TRUE(tracker_.Expire(T(500)).empty());   // nothing is expired twice
  EXPECT_FALSE(tracker_.Heartbeat("a", T(501)));  // it must register again
}

TEST_F(HostTrackerTest, ReRegisteringRevivesAHostAndRestartsItsClock) {
  auto [id, fresh] = tracker_.Register(Spec("a", 1000), T(0));
  EXPECT_TRUE(fresh);
  ASSERT_EQ(tracker_.Expire(T(31)).size(), 1u);
  auto [again, fresh_again] = tracker_.Register(Spec("a", 1000), T(40));
  EXPECT_EQ(again, id);
  EXPECT_FALSE(fresh_again);
  EXPECT_TRUE(tracker_.Expire(T(70)).empty());
  EXPECT_EQ(tracker_.Expire(T(71)).size(), 1u);
}

TEST_F(HostTrackerTest, TheConnectedCapacityFollowsRegistrationsAndExpiries) {
  tracker_.Register(Spec("a", 1000), T(0));
  tracker_.Register(Spec("b", 2000), T(10));
  EXPECT_EQ(tracker_.connected_capacity()[Dim::kCpu], 3000);
  tracker_.Register(Spec("a", 4000), T(11));  // re-registered with more cores
  EXPECT_EQ(tracker_.connected_capacity()[Dim::kCpu], 6000);
  ASSERT_EQ(tracker_.Expire(T(41)).size(), 1u);  // b
  EXPECT_EQ(tracker_.connected_capacity()[Dim::kCpu], 4000);
  tracker_.Disconnect("a");
  tracker_.Disconnect("a");
  EXPECT_EQ(tracker_.connected_capacity()[Dim::kCpu], 0);
  EXPECT_TRUE(tracker_.Expire(T(1000)).empty());
}

TEST_F(HostTrackerTest, ARestoredHostIsReconnectingUntilItRegistersOrTimesOut) {
  HostId a = tracker_.Restore(Spec("a", 1000), T(0));
  HostId b = tracker_.Restore(Spec("b", 2000), T(0));
  EXPECT_FALSE(tracker_.Get(a).connected);
  EXPECT_TRUE(tracker_.Get(a).reconnecting);
  EXPECT_EQ(tracker_.connected_capacity()[Dim::kCpu], 3000);  // a restart keeps the capacity
  EXPECT_FALSE(tracker_.Heartbeat("a", T(5)));                // it must register first
  auto [again, fresh] = tracker_.Register(Spec("a", 1000), T(10));
  EXPECT_EQ(again, a);
  EXPECT_FALSE(fresh);
  EXPECT_TRUE(tracker_.Get(a).connected);
  EXPECT_FALSE(tracker_.Get(a).reconnecting);
  EXPECT_EQ(tracker_.connected_capacity()[Dim::kCpu], 3000);
  std::vector<HostId> gone = tracker_.Expire(T(31));  // b never came back
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0], b);
  EXPECT_FALSE(tracker_.Get(b).reconnecting);
  EXPECT_EQ(tracker_.connected_capacity()[Dim::kCpu], 1000);
  EXPECT_TRUE(tracker_.Expire(T(40)).empty());  // a registered at 10
  EXPECT_EQ(tracker_.Expire(T(41)).size(), 1u);
}

}  // namespace
}  // namespace paceline::hostmgr
