#include "common/ids.h"

#include <gtest/gtest.h>

#include "absl/container/flat_hash_set.h"

namespace paceline {
namespace {

TEST(Ids, CompareAndHash) {
  EXPECT_LT(JobId(1), JobId(2));
  EXPECT_EQ(JobId(7), JobId(7));
  absl::flat_hash_set<TaskId> set = {TaskId{JobId(1), 0}, TaskId{JobId(1), 1}};
  EXPECT_TRUE(set.contains(TaskId{JobId(1), 1}));
  EXPECT_FALSE(set.contains(TaskId{JobId(2), 1}));
}

TEST(Ids, PrintAndParse) {
  TaskId t{JobId(42), 7};
  EXPECT_EQ(t.ToString(), "42/7");
  EXPECT_EQ((RunId{t, 3}.ToString()), "42/7/3");
  EXPECT_EQ(TaskId::Parse("42/7"), t);
  EXPECT_EQ(TaskId::Parse("42"), std::nullopt);
  EXPECT_EQ(TaskId::Parse("a/1"), std::nullopt);
  EXPECT_EQ(TaskId::Parse("1/-1"), std::nullopt);
  EXPECT_EQ(TaskId::Parse("1/99999999999"), std::nullopt);
}

}  // namespace
}  // namespace paceline
