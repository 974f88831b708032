// schedule in job specs: parsing, defaults, errors at line:column (an invalid cron expression or
// time zone points at its value), the checks, printing, and the runs' names.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "spec/schedule_spec.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kHead =
    "name: nightly\ninstances: 1\ntask:\n  command: run\n  resources: {cpu: 1, memory: 1Gi}\n";

absl::StatusOr<JobSpec> Parse(absl::string_view rest, absl::string_view head = kHead) {
  return ParseJobSpec(absl::StrCat(head, rest), "c.yaml");
}

std::string ErrorOf(absl::string_view rest, absl::string_view head = kHead) {
  absl::StatusOr<JobSpec> spec = Parse(rest, head);
  EXPECT_FALSE(spec.ok()) << rest;
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(spec.status().message());
}

TEST(ScheduleSpecTest, ParsesEveryField) {
  absl::StatusOr<JobSpec> spec = Parse(
      "schedule: {cron: \"*/5 * * * *\", time_zone: Europe/Berlin, concurrency: forbid,\n"
      "           starting_deadline: 2m, keep_succeeded: 3, keep_failed: 1, suspend: false}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->schedule.has_value());
  EXPECT_EQ(*spec->schedule, (ScheduleSpec{.cron = "*/5 * * * *",
                                           .time_zone = "Europe/Berlin",
                                           .concurrency = ConcurrencyPolicy::kForbid,
                                           .starting_deadline = absl::Minutes(2),
                                           .keep_succeeded = 3,
                                           .keep_failed = 1,
                                           .suspend = false}));
}

TEST(ScheduleSpecTest, Defaults) {
  absl::StatusOr<JobSpec> spec = Parse("schedule:\n  cron: \"@daily\"\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(*spec->schedule, (ScheduleSpec{.cron = "@daily"}));
  EXPECT_EQ(spec->schedule->time_zone, "UTC");
  EXPECT_EQ(spec->schedule->concurrency, ConcurrencyPolicy::kAllow);
  EXPECT_FALSE(spec->schedule->starting_deadline.has_value());
  EXPECT_EQ(spec->schedule->keep_succeeded, 3u);
  EXPECT_EQ(spec->schedule->keep_failed, 1u);
  EXPECT_FALSE(Parse("")->schedule.has_value());
}

TEST(ScheduleSpecTest, ErrorsAtLineAndColumnOfTheValue) {
  EXPECT_THAT(ErrorOf("schedule:\n  cron: \"61 * * * *\"\n"),
              HasSubstr("c.yaml:7:9: schedule.cron: minute: '61' is out of range; expected "
                        "0-59"));
  EXPECT_THAT(ErrorOf("schedule: {cron: \"* * * *\"}\n"),
              HasSubstr("c.yaml:6:18: schedule.cron: has 4 fields; expected 5"));
  EXPECT_THAT(ErrorOf("schedule:\n  cron: \"@daily\"\n  time_zone: Europe/Berlinn\n"),
              HasSubstr("c.yaml:8:14: schedule.time_zone: unknown time zone 'Europe/Berlinn'; "
                        "expected an IANA name such as Europe/Berlin"));
  EXPECT_THAT(ErrorOf("schedule: {cron: \"@daily\", concurrency: never}\n"),
              HasSubstr("c.yaml:6:41: schedule.concurrency: 'never' is not valid; expected one "
                        "of: allow, forbid, replace"));
  EXPECT_THAT(ErrorOf("schedule: {cron: \"@daily\", starting_deadline: 0s}\n"),
              HasSubstr("c.yaml:6:47: schedule.starting_deadline: is 0s; expected at least 1s"));
  EXPECT_THAT(ErrorOf("schedule: {cron: \"@daily\", keep_failed: 1000}\n"),
              HasSubstr("schedule.keep_failed: is 1000; expected at most 100"));
  EXPECT_THAT(ErrorOf("schedule: {time_zone: UTC}\n"),
              HasSubstr("c.yaml:6:11: schedule.cron: is required; expected a cron expression"));
  EXPECT_THAT(ErrorOf("schedule: {cron: \"@daily\", every: 5m}\n"),
              HasSubstr("schedule.every: unknown key"));
  EXPECT_THAT(ErrorOf("schedule: \"*/5 * * * *\"\n"),
              HasSubstr("c.yaml:6:11: schedule: is a single value; expected a map such as {cron:"));
}

TEST(ScheduleSpecTest, OnlyBatchJobsWithoutDependencies) {
  EXPECT_THAT(ErrorOf("type: service\nschedule: {cron: \"@daily\"}\n"),
              HasSubstr("schedule: is set on a service job; only batch jobs run on a schedule"));
  EXPECT_THAT(ErrorOf("schedule: {cron: \"@daily\"}\ndepends_on: [{job: 3}]\n"),
              HasSubstr("schedule: is set with depends_on"));
  std::string long_head = absl::StrCat("name: ", std::string(101, 'n'),
                                       "\ninstances: 1\ntask:\n  command: run\n  resources: "
                                       "{cpu: 1, memory: 1Gi}\n");
  EXPECT_THAT(ErrorOf("schedule: {cron: \"@daily\"}\n", long_head),
              HasSubstr("name: is 101 characters long on a cron job; expected at most 100"));
  EXPECT_TRUE(Parse("", long_head).ok());
}

TEST(ScheduleSpecTest, PrintsAndParsesBack) {
  absl::StatusOr<JobSpec> spec = Parse(
      "schedule: {cron: \"*/2 * * * * *\", time_zone: America/New_York, concurrency: replace,\n"
      "           starting_deadline: 90s, keep_succeeded: 0, keep_failed: 5, suspend: true}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  std::string printed = PrintJobSpec(*spec);
  EXPECT_THAT(printed, HasSubstr("schedule:\n  cron: \"*/2 * * * * *\"\n"));
  EXPECT_THAT(printed, HasSubstr("starting_deadline: 1m30s"));
  absl::StatusOr<JobSpec> back = ParseJobSpec(printed, "printed.yaml");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << printed;
  EXPECT_EQ(*back, *spec);
  // Without a deadline and not suspended, neither is printed.
  spec->schedule->starting_deadline.reset();
  spec->schedule->suspend = false;
  printed = PrintJobSpec(*spec);
  EXPECT_THAT(printed, Not(HasSubstr("starting_deadline")));
  EXPECT_THAT(printed, Not(HasSubstr("suspend")));
  EXPECT_EQ(*ParseJobSpec(printed, "printed.yaml"), *spec);
}

TEST(ScheduleSpecTest, RunNames) {
  absl::Time tick = absl::FromCivil(absl::CivilSecond(2026, 3, 1, 22, 5, 7), absl::UTCTimeZone());
  absl::TimeZone berlin;
  ASSERT_TRUE(absl::LoadTimeZone("Europe/Berlin", &berlin));
  EXPECT_EQ(RunName("nightly", tick, absl::UTCTimeZone(), false), "nightly-202603012205");
  EXPECT_EQ(RunName("nightly", tick, berlin, false), "nightly-202603012305");
  EXPECT_EQ(RunName("nightly", tick, absl::UTCTimeZone(), true), "nightly-20260301220507");
}

}  // namespace
}  // namespace paceline
