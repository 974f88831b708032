#include "agent/launch/wrapper_protocol.h"

#include "gtest/gtest.h"

namespace paceline::agent::wrapper {
namespace {

TEST(WrapperProtocolTest, StatusLinesRoundTripAndLaterRecordsWin) {
  ExitStatus started;
  started.kind = ExitStatus::Kind::kRunning;
  started.task_pid = 123;
  started.task_start = 456789;
  ExitStatus exited;
  exited.kind = ExitStatus::Kind::kExited;
  exited.value = 3;
  std::string text = FormatStatusLine(started) + FormatStatusLine(exited);
  EXPECT_EQ(text, "started 123 456789\nexit_code 3\n");
  ExitStatus s = ParseStatus(text);
  EXPECT_EQ(s.kind, ExitStatus::Kind::kExited);
  EXPECT_EQ(s.value, 3);
  EXPECT_EQ(s.task_pid, 123);
  EXPECT_EQ(s.task_start, 456789u);
}

TEST(WrapperProtocolTest, AnIncompleteLastLineDoesNotCount) {
  ExitStatus s = ParseStatus("started 5 6\nexit_sig");
  EXPECT_EQ(s.kind, ExitStatus::Kind::kRunning);
  EXPECT_EQ(s.task_pid, 5);
  EXPECT_EQ(ParseStatus("").kind, ExitStatus::Kind::kUnknown);
  EXPECT_EQ(ParseStatus("started 5 6").kind, ExitStatus::Kind::kUnknown);
}

TEST(WrapperProtocolTest, LaunchErrorsAndSignals) {
  ExitStatus e;
  e.kind = ExitStatus::Kind::kLaunchError;
  e.error = "exec /bin/sh:\nNo such file";
  ExitStatus parsed = ParseStatus(FormatStatusLine(e));
  EXPECT_EQ(parsed.kind, ExitStatus::Kind::kLaunchError);
  EXPECT_EQ(parsed.error, "exec /bin/sh: No such file");
  EXPECT_EQ(ParseStatus("started 1 2\nexit_signal 9\n").value, 9);
  EXPECT_EQ(ParseStatus("started 1 2\nexit_signal 9\n").kind, ExitStatus::Kind::kSignaled);
}

}  // namespace
}  // namespace paceline::agent::wrapper
