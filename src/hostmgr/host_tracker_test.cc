#include "hostmgr/host_tracker.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

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
  // b never comes back: it expires once no restored host has come back for a whole timeout
  // (a at 10), and a, silent since it registered at 10, at the same time.
  EXPECT_TRUE(tracker_.Expire(T(31)).empty());
  EXPECT_TRUE(tracker_.Expire(T(40)).empty());
  std::vector<HostId> gone = tracker_.Expire(T(41));
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_FALSE(tracker_.Get(b).reconnecting);
  EXPECT_FALSE(tracker_.Get(b).connected);
  EXPECT_FALSE(tracker_.Get(a).connected);
  EXPECT_EQ(tracker_.connected_capacity()[Dim::kCpu], 0);
  EXPECT_TRUE(tracker_.Expire(T(500)).empty());
}

TEST_F(HostTrackerTest, RestoredHostsDoNotExpireWhileTheFleetIsStillComingBack) {
  // 12 restored hosts re-register one every 20 s (a large fleet the master works through
  // slowly), well past the 30 s timeout; "z" never comes back.
  const int n = 12;
  for (int i = 0; i < n; ++i) tracker_.Restore(Spec(absl::StrCat("h", i), 1000), T(0));
  HostId z = tracker_.Restore(Spec("z", 1000), T(0));
  for (int i = 0; i < n; ++i) {
    const int t = 20 * (i + 1);
    auto [id, fresh] = tracker_.Register(Spec(absl::StrCat("h", i), 1000), T(t));
    ASSERT_FALSE(fresh);
    // Connected hosts keep heartbeating; only z is still reconnecting.
    for (int j = 0; j <= i; ++j) ASSERT_TRUE(tracker_.Heartbeat(absl::StrCat("h", j), T(t)));
    EXPECT_TRUE(tracker_.Expire(T(t + 10)).empty()) << "after h" << i;
  }
  for (int j = 0; j < n; ++j) ASSERT_TRUE(tracker_.Heartbeat(absl::StrCat("h", j), T(260)));
  // The last restored host came back at 240; z has waited since 0 and expires at 271.
  EXPECT_TRUE(tracker_.Get(z).reconnecting);
  EXPECT_TRUE(tracker_.Expire(T(270)).empty());
  std::vector<HostId> gone = tracker_.Expire(T(271));
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0], z);
}

TEST_F(HostTrackerTest, ARestoresGraceEndsAtItsLongestWhateverStillComesBack) {
  // Restored hosts keep coming back every 20 s for longer than kMaxRestoreGrace timeouts: z
  // expires at the cap, 10 x 30 s after the restore.
  const int n = 30;
  for (int i = 0; i < n; ++i) tracker_.Restore(Spec(absl::StrCat("h", i), 1000), T(0));
  HostId z = tracker_.Restore(Spec("z", 1000), T(0));
  std::vector<HostId> gone;
  int t = 0;
  for (int i = 0; i < n && gone.empty(); ++i) {
    t = 20 * (i + 1);
    tracker_.Register(Spec(absl::StrCat("h", i), 1000), T(t));
    for (int j = 0; j <= i; ++j) tracker_.Heartbeat(absl::StrCat("h", j), T(t));
    gone = tracker_.Expire(T(t));
  }
  ASSERT_FALSE(gone.empty());
  EXPECT_EQ(t, 320) << "the first check past 300 s";
  // The hosts not yet back when the grace ended expire with z.
  EXPECT_NE(std::find(gone.begin(), gone.end(), z), gone.end());
  EXPECT_EQ(gone.size(), 1u + (n - 16)) << "h16..h29 and z";
}

}  // namespace
}  // namespace paceline::hostmgr
