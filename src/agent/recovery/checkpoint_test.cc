#include "agent/recovery/checkpoint.h"

#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

RunContext Ctx(uint32_t run, int pid) {
  RunContext c;
  c.request = testing::Req(1, 0, run, "true");
  c.key = RunKey(c.request.run);
  c.wrapper_pid = pid;
  return c;
}

TEST(CheckpointTest, KeepsTheLatestRecordOfEachLiveRun) {
  testing::TempDir dir;
  {
    auto cp = Checkpoint::Open(dir.path()).value();
    EXPECT_TRUE(cp->TakeLoaded().empty());
    ASSERT_TRUE(cp->Put(Ctx(1, 100)).ok());
    ASSERT_TRUE(cp->Put(Ctx(2, 200)).ok());
    ASSERT_TRUE(cp->Put(Ctx(1, 101)).ok());  // update
    ASSERT_TRUE(cp->Remove("1_0_2").ok());
    ASSERT_TRUE(cp->Put(Ctx(3, 300)).ok());
    // No Sync: an agent crash (not a machine crash) must not lose the records.
  }
  auto cp = Checkpoint::Open(dir.path()).value();
  std::vector<RunContext> loaded = cp->TakeLoaded();
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].key, "1_0_1");
  EXPECT_EQ(loaded[0].wrapper_pid, 101);
  EXPECT_EQ(loaded[1].key, "1_0_3");
  EXPECT_EQ(cp->live(), 2u);
  EXPECT_EQ(cp->skipped_records(), 0u);
}

TEST(CheckpointTest, CompactsWithoutLosingRecords) {
  testing::TempDir dir;
  {
    auto cp = Checkpoint::Open(dir.path()).value();
    for (uint32_t i = 0; i < 6000; ++i) {
      ASSERT_TRUE(cp->Put(Ctx(i, 1)).ok());
      if (i % 100 != 0) {
        ASSERT_TRUE(cp->Remove(RunKey(testing::MakeRun(1, 0, i))).ok());
      }
      if (i % 500 == 0) {
        ASSERT_TRUE(cp->Sync().ok());
      }
    }
    ASSERT_TRUE(cp->Sync().ok());
  }
  auto cp = Checkpoint::Open(dir.path()).value();
  EXPECT_EQ(cp->TakeLoaded().size(), 60u);
  EXPECT_LT(testing::ReadAll(dir.Sub("runs")).size(), 4u << 20);
}

TEST(CheckpointTest, SkipsMalformedRecords) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFile(dir.Sub("runs"), "P {broken\nX what\n").ok());
  auto cp = Checkpoint::Open(dir.path()).value();
  EXPECT_TRUE(cp->TakeLoaded().empty());
  EXPECT_EQ(cp->skipped_records(), 2u);
}

}  // namespace
}  // namespace paceline::agent
