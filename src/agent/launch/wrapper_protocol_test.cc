#include "agent/launch/wrapper_protocol.h"

#include <string>
#include <vector>

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

TEST(WrapperProtocolTest, ASupervisorsLastRunIsMarked) {
  EXPECT_FALSE(ParseStatus("started 1 2\nexit_code 0\n").last_run);
  ExitStatus s = ParseStatus("started 1 2\nlast_run 1\nexit_code 0\n");
  EXPECT_TRUE(s.last_run);
  EXPECT_EQ(s.kind, ExitStatus::Kind::kExited);
}

TEST(WrapperProtocolTest, RequestsRoundTrip) {
  std::vector<std::string> argv = {"/bin/w", "--mode=supervise", "", "--", "sh", "-c", "a b"};
  std::vector<std::string> env = {"A=1", "EMPTY=", "X=y=z"};
  std::string req = EncodeRequest(argv, env);
  std::vector<std::string> a, e;
  ASSERT_TRUE(DecodeRequest(req.data(), req.size(), &a, &e));
  EXPECT_EQ(a, argv);
  EXPECT_EQ(e, env);
  req = EncodeRequest({}, {});
  ASSERT_TRUE(DecodeRequest(req.data(), req.size(), &a, &e));
  EXPECT_TRUE(a.empty() && e.empty());
}

TEST(WrapperProtocolTest, AMalformedRequestIsRefused) {
  std::string good = EncodeRequest({"a", "b"}, {"K=V"});
  std::vector<std::string> a, e;
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(DecodeRequest(good.data(), n, &a, &e)) << "truncated to " << n;
  }
  std::string trailing = good + "x";
  EXPECT_FALSE(DecodeRequest(trailing.data(), trailing.size(), &a, &e));
  for (std::string bad :
       {std::string("x\0", 2), std::string("-1\0", 3), std::string("99999999\0", 9),
        std::string("3\0a\0\0\0", 7), std::string("\0\0", 2),
        std::string("01\0a\0"
                    "0\0",
                    7)}) {  // a count with a leading zero
    EXPECT_FALSE(DecodeRequest(bad.data(), bad.size(), &a, &e)) << bad;
  }
}

}  // namespace
}  // namespace paceline::agent::wrapper
