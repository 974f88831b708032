#include "store/task_row.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace paceline::store {
namespace {

records::TaskRecord Full() {
  records::TaskRecord t;
  t.id = TaskId{JobId(12), 7};
  t.run = 4;
  t.state = TaskState::kFailed;
  t.host = "host-00017";
  t.started_at = absl::FromUnixMicros(1'800'000'000'123'456);
  t.finished_at = absl::FromUnixMicros(1'800'000'060'000'001);
  t.exit_code = 137;
  t.signal = 9;
  t.reason = "OOM_KILLED";
  t.message = "memory limit of 64 MiB reached";
  t.failures = 3;
  t.not_before = absl::FromUnixMicros(-5);  // before the epoch: a negative varint
  t.restart_requested = true;
  t.spec_version = 5;
  t.next_spec_version = std::numeric_limits<uint64_t>::max();
  t.volume_host = "host-00002";
  t.gang_attempt = 3;
  t.health = "HEALTHY";
  t.readiness = "NOT_READY";
  t.ports = {31000, 65535, 0};
  return t;
}

TEST(TaskRow, EveryFieldRoundTrips) {
  for (const records::TaskRecord& t : {Full(), records::TaskRecord{TaskId{JobId(12), 7}}}) {
    records::TaskRecord back;
    ASSERT_TRUE(DecodeTaskRow(t.id, EncodeTaskRow(t), back).ok());
    EXPECT_EQ(back, t);
  }
  records::TaskRecord extremes = Full();
  extremes.exit_code = std::numeric_limits<int32_t>::min();
  extremes.signal = std::numeric_limits<int32_t>::max();
  extremes.run = std::numeric_limits<uint32_t>::max();
  extremes.failures = std::numeric_limits<uint32_t>::max();
  extremes.gang_attempt = std::numeric_limits<uint32_t>::max();
  records::TaskRecord back;
  ASSERT_TRUE(DecodeTaskRow(extremes.id, EncodeTaskRow(extremes), back).ok());
  EXPECT_EQ(back, extremes);
}

TEST(TaskRow, DecodingReplacesEveryFieldAndTakesTheGivenId) {
  records::TaskRecord reused = Full();
  records::TaskRecord empty{TaskId{JobId(1), 0}};
  ASSERT_TRUE(DecodeTaskRow(TaskId{JobId(3), 1}, EncodeTaskRow(empty), reused).ok());
  empty.id = TaskId{JobId(3), 1};
  EXPECT_EQ(reused, empty);
}

TEST(TaskRow, ARunningTasksRowIsSmall) {
  records::TaskRecord t{TaskId{JobId(1), 0}};
  t.run = 1;
  t.state = TaskState::kRunning;
  t.host = "host-00000";
  t.started_at = absl::FromUnixMicros(1'800'000'000'000'000);
  t.spec_version = 1;
  EXPECT_LE(EncodeTaskRow(t).size(), 32u);  // 10 of them the host name
}

TEST(TaskRow, ARowWithoutAGangAttemptHasNoFieldForItAndReadsAsZero) {
  records::TaskRecord t = Full();
  const std::string with = EncodeTaskRow(t);
  t.gang_attempt = 0;
  const std::string without = EncodeTaskRow(t);
  EXPECT_EQ(without.size() + 1, with.size());  // the flag, and one byte of varint
  EXPECT_EQ(without[1] & 0x10, 0);             // as every row written before gang restarts
  records::TaskRecord back;
  ASSERT_TRUE(DecodeTaskRow(t.id, without, back).ok());
  EXPECT_EQ(back.gang_attempt, 0u);
  ASSERT_TRUE(DecodeTaskRow(t.id, with, back).ok());
  EXPECT_EQ(back.gang_attempt, 3u);
}

TEST(TaskRow, ARowWrittenBeforeChecksAndPortsReadsThemEmpty) {
  records::TaskRecord t = Full();
  t.health.clear();
  t.readiness.clear();
  t.ports.clear();
  const std::string older = EncodeTaskRow(t);
  EXPECT_EQ(older[1] & 0x60, 0);  // no flag of either: as every row written before them
  records::TaskRecord back = Full();
  ASSERT_TRUE(DecodeTaskRow(t.id, older, back).ok());
  EXPECT_EQ(back, t);
  const std::string with = EncodeTaskRow(Full());
  EXPECT_EQ(with[1] & 0x60, 0x60);
  ASSERT_TRUE(DecodeTaskRow(t.id, with, back).ok());
  EXPECT_EQ(back.health, "HEALTHY");
  EXPECT_EQ(back.readiness, "NOT_READY");
  EXPECT_THAT(back.ports, ::testing::ElementsAre(31000, 65535, 0));
}

TEST(TaskRow, ABadRowIsDataLossNamingTheTaskAndWhatIsWrong) {
  const TaskId id{JobId(12), 7};
  const std::string good = EncodeTaskRow(Full());
  auto error_of = [&](const std::string& row) {
    records::TaskRecord out;
    absl::Status s = DecodeTaskRow(id, row, out);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    return std::string(s.message());
  };
  EXPECT_THAT(error_of(""), ::testing::HasSubstr("unknown row format"));
  std::string format = good;
  format[0] = '\x02';
  EXPECT_THAT(error_of(format), ::testing::HasSubstr("unknown row format"));
  std::string flags = good;
  flags[1] = static_cast<char>(flags[1] | 0x80);
  EXPECT_THAT(error_of(flags), ::testing::HasSubstr("unknown flags"));
  for (size_t cut = 2; cut < good.size(); ++cut) {
    EXPECT_THAT(error_of(good.substr(0, cut)), ::testing::HasSubstr("cut short")) << cut;
  }
  EXPECT_THAT(error_of(good + "x"), ::testing::HasSubstr("bytes after the last field"));
  std::string state = good;
  state[3] = static_cast<char>(kNumTaskStates);  // format, flags, run 4 (one byte), state
  EXPECT_THAT(error_of(state), ::testing::HasSubstr("unknown state"));
  const std::string wide_run =
      good.substr(0, 2) + std::string(4, '\xff') + '\x7f' + good.substr(3);  // a run of 35 bits
  EXPECT_THAT(error_of(wide_run), ::testing::HasSubstr("malformed"));
  EXPECT_THAT(error_of(""), ::testing::HasSubstr("store table tasks, row 12/7"));
}

}  // namespace
}  // namespace paceline::store
