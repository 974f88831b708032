#include "agent/logs/append_log.h"

#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

TEST(AppendLogTest, AppendsReopensAndDropsATornTail) {
  testing::TempDir dir;
  std::string path = dir.Sub("log");
  std::vector<std::string> lines;
  {
    auto log = AppendLog::Open(path, &lines).value();
    EXPECT_TRUE(lines.empty());
    ASSERT_TRUE(log->Append("one").ok());
    ASSERT_TRUE(log->Append("two").ok());
    ASSERT_TRUE(log->Sync().ok());
  }
  // A crash in the middle of a write leaves a line without its newline.
  ASSERT_TRUE(WriteFile(path, "one\ntwo\nthr", 0600).ok());
  {
    auto log = AppendLog::Open(path, &lines).value();
    EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
    ASSERT_TRUE(log->Append("three").ok());
  }
  auto log = AppendLog::Open(path, &lines).value();
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "three"}));
  ASSERT_TRUE(log->Rewrite({"only"}).ok());
  ASSERT_TRUE(log->Append("after").ok());
  EXPECT_EQ(testing::ReadAll(path), "only\nafter\n");
}

}  // namespace
}  // namespace paceline::agent
