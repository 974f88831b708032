// The CLI's revision of its last write (write_revision.h): kept per set of masters, only ever
// raised, the oldest sets forgotten; no HOME or a broken file is no revision.

#include "cli/write_revision.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace paceline::cli {
namespace {

class WriteRevisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = std::filesystem::temp_directory_path() / absl::StrCat("pl-rev-", getpid());
    std::filesystem::create_directories(home_);
    const char* old = getenv("HOME");
    old_home_ = old == nullptr ? "" : old;
    setenv("HOME", home_.c_str(), 1);
  }
  void TearDown() override {
    setenv("HOME", old_home_.c_str(), 1);
    std::filesystem::remove_all(home_);
  }
  std::filesystem::path home_;
  std::string old_home_;
};

TEST_F(WriteRevisionTest, KeptPerSetOfMastersAndOnlyRaised) {
  const std::vector<std::string> ab = {"a:1", "b:1"}, ba = {"b:1", "a:1"};
  EXPECT_EQ(LoadWriteRevision(ab), -1);
  SaveWriteRevision(ab, 12);
  SaveWriteRevision(ba, 3);
  EXPECT_EQ(LoadWriteRevision(ab), 12);
  EXPECT_EQ(LoadWriteRevision(ba), 3);
  SaveWriteRevision(ab, 9);  // an older write (another command) does not lower it
  EXPECT_EQ(LoadWriteRevision(ab), 12);
  SaveWriteRevision(ab, 20);
  EXPECT_EQ(LoadWriteRevision(ab), 20);
  // A leader of another database behind the same addresses: lowered on purpose.
  SaveWriteRevision(ab, 4, /*may_lower=*/true);
  EXPECT_EQ(LoadWriteRevision(ab), 4);
  EXPECT_EQ(LoadWriteRevision(ba), 3);
}

TEST_F(WriteRevisionTest, TheOldestSetsAreForgottenAndBadLinesIgnored) {
  for (int i = 0; i < 40; ++i) SaveWriteRevision({absl::StrCat("m", i, ":1")}, i);
  EXPECT_EQ(LoadWriteRevision({"m0:1"}), -1);
  EXPECT_EQ(LoadWriteRevision({"m39:1"}), 39);
  {
    std::ofstream out(home_ / ".paceline" / "revisions", std::ios::app);
    out << "garbage\nx:1 notanumber\ny:1 -5\n";
  }
  EXPECT_EQ(LoadWriteRevision({"x:1"}), -1);
  EXPECT_EQ(LoadWriteRevision({"y:1"}), -1);
  EXPECT_EQ(LoadWriteRevision({"m39:1"}), 39);
  setenv("HOME", "", 1);
  EXPECT_EQ(LoadWriteRevision({"m39:1"}), -1);
  SaveWriteRevision({"m39:1"}, 100);  // nowhere to keep it: ignored
}

}  // namespace
}  // namespace paceline::cli
