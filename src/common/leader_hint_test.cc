#include "common/leader_hint.h"

#include <gtest/gtest.h>

namespace paceline {
namespace {

TEST(LeaderHintTest, TheLastMarkerOfTheMessageNamesTheLeader) {
  EXPECT_EQ(LeaderFromMessage("this master is a standby; leader: 10.0.0.2:5390"), "10.0.0.2:5390");
  EXPECT_EQ(LeaderFromMessage("leader: a:1 then (leader: b:2)"), "b:2");
  EXPECT_EQ(LeaderFromMessage("leader: host:5390; more"), "host:5390");
  EXPECT_EQ(LeaderFromMessage("no hint here"), std::nullopt);
  EXPECT_EQ(LeaderFromMessage("leader: nohostport"), std::nullopt);
  EXPECT_EQ(LeaderFromMessage("leader: :5390"), std::nullopt);
  EXPECT_EQ(LeaderFromMessage("leader: host:"), std::nullopt);
  EXPECT_EQ(LeaderFromMessage("leader: host:53x0"), std::nullopt);
}

TEST(LeaderHintTest, OnlyARefusalRedirectsAndTheTrailerComesFirst) {
  EXPECT_EQ(RedirectedLeader(absl::StatusCode::kUnavailable, " m1:5390 ", "leader: m2:5390"),
            "m1:5390");
  EXPECT_EQ(RedirectedLeader(absl::StatusCode::kFailedPrecondition, "garbage", "leader: m2:5390"),
            "m2:5390");
  EXPECT_EQ(RedirectedLeader(absl::StatusCode::kUnavailable, std::nullopt, "leader: m2:5390"),
            "m2:5390");
  EXPECT_EQ(RedirectedLeader(absl::StatusCode::kPermissionDenied, "m1:5390", "leader: m2:5390"),
            std::nullopt);
  EXPECT_EQ(RedirectedLeader(absl::StatusCode::kUnavailable, std::nullopt, "down"), std::nullopt);
}

}  // namespace
}  // namespace paceline
