#include "store/event_block.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline::store {
namespace {

std::vector<records::TaskEvent> Events() {
  return {
      {RunId{TaskId{JobId(9), 0}, 1}, absl::FromUnixMicros(1'800'000'000'000'000),
       TaskState::kLaunching, "host-1", "", ""},
      {RunId{TaskId{JobId(9), 4'000'000'000u}, 70'000}, absl::FromUnixMicros(-5),
       TaskState::kFailed, "", "EXIT_NONZERO", std::string("exit 1\0 and a nul", 17)},
  };
}

std::string Encode(const std::vector<records::TaskEvent>& events) {
  std::vector<const records::TaskEvent*> p;
  for (const auto& e : events) p.push_back(&e);
  return EncodeEventBlock(p);
}

TEST(EventBlock, RoundTripsEveryField) {
  std::vector<records::TaskEvent> out = {Events()[0]};  // decoding appends
  ASSERT_TRUE(DecodeEventBlock(JobId(9), Encode(Events()), out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1], Events()[0]);
  EXPECT_EQ(out[2], Events()[1]);
}

TEST(EventBlock, AnEmptyBlockHasNoEvents) {
  std::vector<records::TaskEvent> out;
  ASSERT_TRUE(DecodeEventBlock(JobId(1), Encode({}), out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(EventBlock, EveryCutAndCorruptionIsDataLossAndAppendsNothing) {
  const std::string block = Encode(Events());
  for (size_t n = 0; n < block.size(); ++n) {
    std::vector<records::TaskEvent> out;
    absl::Status s = DecodeEventBlock(JobId(9), block.substr(0, n), out);
    EXPECT_TRUE(absl::IsDataLoss(s)) << "cut at " << n;
    EXPECT_TRUE(out.empty());
  }
  std::vector<records::TaskEvent> out;
  EXPECT_THAT(DecodeEventBlock(JobId(9), block + "x", out).message(),
              ::testing::HasSubstr("events of job 9: bytes after the last event"));
  EXPECT_THAT(DecodeEventBlock(JobId(9), std::string("\x02", 1), out).message(),
              ::testing::HasSubstr("unknown block format"));
  EXPECT_TRUE(out.empty());
}

TEST(EventBlock, AnUnknownStateIsNamed) {
  records::TaskEvent e = Events()[0];
  e.host = "";
  std::string block = Encode({e});
  // The state is the byte before the three empty strings (one length byte each).
  block[block.size() - 4] = 42;
  std::vector<records::TaskEvent> out;
  EXPECT_THAT(DecodeEventBlock(JobId(9), block, out).message(),
              ::testing::HasSubstr("unknown state 42"));
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace paceline::store
