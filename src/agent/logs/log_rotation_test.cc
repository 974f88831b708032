// RotatingLog (the wrapper's writer) and the readers of log_reader.h, together.

#include "agent/logs/log_rotation.h"

#include <sys/stat.h>
#include <unistd.h>

#include "agent/file_util.h"
#include "agent/logs/log_reader.h"
#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

int64_t SizeOf(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 ? st.st_size : -1;
}

std::string Lines(int from, int to) {
  std::string s;
  for (int i = from; i < to; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

TEST(LogRotationTest, KeepsAtMostTheCapAndTheNewestBytes) {
  testing::TempDir dir;
  LogFiles f{dir.Sub("stdout"), dir.Sub("stdout.1"), dir.Sub("stdout.base")};
  RotatingLog log(f.current, f.base_file, /*max_bytes=*/1000, -1, -1);
  std::string all = Lines(0, 1000);  // ~9 KB
  for (size_t i = 0; i < all.size(); i += 37)
    log.Write(all.data() + i, std::min<size_t>(37, all.size() - i));
  EXPECT_LE(SizeOf(f.current), 500);
  EXPECT_LE(SizeOf(f.rotated), 500);
  EXPECT_EQ(log.base() + log.size(), static_cast<int64_t>(all.size()));

  // The kept window is exactly the end of what was written.
  absl::StatusOr<LogChunk> c = ReadLogFrom(f, 0, 1 << 20);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->offset + c->data.size(), all.size());
  EXPECT_EQ(c->skipped, c->offset);
  EXPECT_EQ(c->data, all.substr(c->offset));
  EXPECT_EQ(c->next_offset, static_cast<int64_t>(all.size()));

  // Follow: reading from the end returns nothing until more is written.
  absl::StatusOr<LogChunk> more = ReadLogFrom(f, c->next_offset, 1 << 20);
  EXPECT_TRUE(more->data.empty());
  log.Write("tail\n", 5);
  more = ReadLogFrom(f, c->next_offset, 1 << 20);
  EXPECT_EQ(more->data, "tail\n");
  EXPECT_EQ(more->skipped, 0);
}

TEST(LogReaderTest, TailReturnsTheLastLinesAcrossTheRotation) {
  testing::TempDir dir;
  LogFiles f{dir.Sub("stdout"), dir.Sub("stdout.1"), dir.Sub("stdout.base")};
  RotatingLog log(f.current, f.base_file, 400, -1, -1);
  std::string all = Lines(0, 100);
  log.Write(all.data(), all.size());
  absl::StatusOr<LogChunk> t = ReadLogTail(f, 3, 1 << 20);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->data, Lines(97, 100));
  // More lines than the current file holds: the rotated file supplies the rest.
  int64_t current_lines = 0;
  for (char ch : testing::ReadAll(f.current)) current_lines += ch == '\n';
  t = ReadLogTail(f, current_lines + 2, 1 << 20);
  EXPECT_EQ(t->data, Lines(98 - static_cast<int>(current_lines), 100));
  EXPECT_EQ(ReadLogTail(f, 0, 1 << 20)->data, "");
  EXPECT_EQ(ReadLogTail(f, 3, 8)->data.size(), 8u);  // bounded by max_bytes
}

TEST(LogReaderTest, SmallLogWithoutRotationAndMissingFile) {
  testing::TempDir dir;
  LogFiles f{dir.Sub("stdout"), dir.Sub("stdout.1"), dir.Sub("stdout.base")};
  RotatingLog log(f.current, f.base_file, 1 << 20, -1, -1);
  // Nothing written, no file: the log is created by its first byte.
  EXPECT_FALSE(PathExists(f.current));
  EXPECT_EQ(ReadLogFrom(f, 0, 10).status().code(), absl::StatusCode::kNotFound);
  log.Write("a\nb\nc", 5);
  EXPECT_EQ(ReadLogTail(f, 2, 1 << 20)->data, "b\nc");
  absl::StatusOr<LogChunk> c = ReadLogFrom(f, 2, 2);
  EXPECT_EQ(c->data, "b\n");
  EXPECT_EQ(c->next_offset, 4);
}

}  // namespace
}  // namespace paceline::agent

namespace paceline::agent {
namespace {

TEST(LogRotationTest, NeverWritesThroughWhatTheTaskPlantedAndNeverReadsIt) {
  testing::TempDir dir;
  std::string secret = dir.Sub("secret");
  ASSERT_TRUE(WriteFile(secret, "do not touch\n").ok());
  LogFiles f{dir.Sub("stdout"), dir.Sub("stdout.1"), dir.Sub("stdout.base")};
  ASSERT_EQ(::symlink(secret.c_str(), f.current.c_str()), 0);
  RotatingLog log(f.current, f.base_file, 100, -1, -1);
  log.Write("0123456789", 10);  // replaces the symlink with a fresh file
  EXPECT_EQ(testing::ReadAll(secret), "do not touch\n");
  struct stat st;
  ASSERT_EQ(::lstat(f.current.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(testing::ReadAll(f.current), "0123456789");
  // The task swaps its log for a symlink to a file it may not read: the reader refuses it.
  ASSERT_EQ(::unlink(f.current.c_str()), 0);
  ASSERT_EQ(::symlink(secret.c_str(), f.current.c_str()), 0);
  absl::StatusOr<LogChunk> c = ReadLogFrom(f, 0, 1 << 20);
  EXPECT_TRUE(!c.ok() || c->data.find("touch") == std::string::npos);
  // A hard link is refused too.
  ASSERT_EQ(::unlink(f.current.c_str()), 0);
  ASSERT_EQ(::link(secret.c_str(), f.current.c_str()), 0);
  c = ReadLogFrom(f, 0, 1 << 20);
  EXPECT_TRUE(!c.ok() || c->data.find("touch") == std::string::npos);
}

}  // namespace
}  // namespace paceline::agent
