#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using ::testing::HasSubstr;

// A file of this process's own (the temporary directory is shared by the test processes that
// run at once).
std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + std::to_string(getpid()) + "-" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(LoadSpecFileTest, ParsesAndLabelsErrorsWithThePath) {
  std::string good = WriteTemp("good-pool.yaml", "type: static\n");
  absl::StatusOr<PoolSpec> pool = LoadPoolSpecFile(good);
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ(pool->type, PoolType::kStatic);

  std::string bad = WriteTemp("bad-job.yaml", "name: x\nnope: 1\n");
  absl::StatusOr<JobSpec> job = LoadJobSpecFile(bad);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(job.status().message()), HasSubstr(bad + ":2:1: nope: unknown key"));
}

TEST(LoadSpecFileTest, MissingFile) {
  absl::StatusOr<JobSpec> job = LoadJobSpecFile("/nonexistent/dir/job.yaml");
  EXPECT_EQ(job.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(job.status().message(),
            "cannot read job spec '/nonexistent/dir/job.yaml': no such file");
}

TEST(LoadSpecFileTest, Directory) {
  absl::StatusOr<PoolSpec> pool = LoadPoolSpecFile(::testing::TempDir());
  EXPECT_EQ(pool.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(pool.status().message()), HasSubstr("is a directory"));
}

TEST(LoadSpecFileTest, TooLarge) {
  std::string path = WriteTemp("huge.yaml", std::string(kMaxSpecFileBytes + 1, '#'));
  absl::StatusOr<PoolSpec> pool = LoadPoolSpecFile(path);
  EXPECT_EQ(pool.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(pool.status().message()), HasSubstr("larger than 16 MiB"));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace paceline
