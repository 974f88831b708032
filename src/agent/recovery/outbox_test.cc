#include "agent/recovery/outbox.h"

#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

TaskEvent Ev(uint32_t run) {
  TaskEvent e;
  e.run = testing::MakeRun(1, 0, run);
  e.type = TaskEventType::kRunning;
  e.time = absl::FromUnixSeconds(run);
  return e;
}

TEST(OutboxTest, NumbersEventsAndKeepsThemUntilAcked) {
  testing::TempDir dir;
  auto ob = Outbox::Open(dir.path()).value();
  EXPECT_EQ(ob->Append(Ev(1)).value(), 1u);
  EXPECT_EQ(ob->Append(Ev(2)).value(), 2u);
  EXPECT_EQ(ob->Append(Ev(3)).value(), 3u);
  EXPECT_EQ(ob->Pending().size(), 3u);
  EXPECT_EQ(ob->Pending(2).back().seq, 2u);
  ASSERT_TRUE(ob->Ack(2).ok());
  ASSERT_EQ(ob->Pending().size(), 1u);
  EXPECT_EQ(ob->Pending()[0].seq, 3u);
  EXPECT_TRUE(ob->Ack(1).ok());  // stale: no effect
  EXPECT_EQ(ob->Ack(9).code(), absl::StatusCode::kInvalidArgument);
}

TEST(OutboxTest, SurvivesRestartsAndNeverReusesSequenceNumbers) {
  testing::TempDir dir;
  {
    auto ob = Outbox::Open(dir.path()).value();
    for (uint32_t i = 1; i <= 5; ++i) ASSERT_TRUE(ob->Append(Ev(i)).ok());
    ASSERT_TRUE(ob->Ack(3).ok());
  }
  {
    auto ob = Outbox::Open(dir.path()).value();
    std::vector<TaskEvent> p = ob->Pending();
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0].seq, 4u);
    EXPECT_EQ(p[0], [] {
      TaskEvent e = Ev(4);
      e.seq = 4;
      return e;
    }());
    ASSERT_TRUE(ob->Ack(5).ok());
  }
  auto ob = Outbox::Open(dir.path()).value();
  EXPECT_TRUE(ob->Pending().empty());
  EXPECT_EQ(ob->Append(Ev(6)).value(), 6u);
}

TEST(OutboxTest, CompactionKeepsPendingEventsAndTheSequence) {
  testing::TempDir dir;
  uint64_t last = 0;
  {
    auto ob = Outbox::Open(dir.path()).value();
    for (uint32_t i = 0; i < 20000; ++i) {
      last = ob->Append(Ev(i)).value();
      if (i % 10 == 9) {
        ASSERT_TRUE(ob->Ack(last - 1).ok());
      }
      if (i % 1000 == 0) {
        ASSERT_TRUE(ob->Sync().ok());
      }
    }
    ASSERT_TRUE(ob->Sync().ok());
  }
  EXPECT_LT(testing::ReadAll(dir.Sub("events")).size(), 2u << 20);
  auto ob = Outbox::Open(dir.path()).value();
  ASSERT_EQ(ob->Pending().size(), 1u);
  EXPECT_EQ(ob->Pending()[0].seq, last);
  EXPECT_EQ(ob->Append(Ev(0)).value(), last + 1);
}

}  // namespace
}  // namespace paceline::agent
