// The master's token files (master.h, LoadOrCreateToken): made once, whole and private, and
// read back by every later caller.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "masterd/master.h"

namespace paceline::masterd {
namespace {

std::string TempDir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("pl-token-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(LoadOrCreateToken, MakesAPrivateRandomTokenOnceAndReadsItBackAfterwards) {
  const std::string dir = TempDir();
  const std::string path = dir + "/token";
  auto first = LoadOrCreateToken(path);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(*first, ::testing::MatchesRegex("[0-9a-f]{64}"));
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LoadOrCreateToken(path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *first);
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1);
  EXPECT_NE(*LoadOrCreateToken(dir + "/other"), *first);
  std::filesystem::remove_all(dir);
}

TEST(LoadOrCreateToken, AnExistingFileIsKeptAndAnEmptyOneIsRefused) {
  const std::string dir = TempDir();
  std::ofstream(dir + "/given") << "  s3cret \n";
  EXPECT_EQ(*LoadOrCreateToken(dir + "/given"), "s3cret");
  std::ofstream(dir + "/empty") << "\n";
  auto empty = LoadOrCreateToken(dir + "/empty");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(empty.status().message(), ::testing::HasSubstr("is empty"));
  std::filesystem::remove_all(dir);
}

TEST(LoadOrCreateToken, AnUnwritableDirectoryIsUnavailableNamingTheFile) {
  auto s = LoadOrCreateToken("/proc/paceline-no-such-dir/token");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.status().message(), ::testing::HasSubstr("cannot write token file"));
}

}  // namespace
}  // namespace paceline::masterd
