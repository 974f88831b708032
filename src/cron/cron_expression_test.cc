// CronExpression: the syntax (lists, ranges, steps, names, macros, the seconds field), errors
// that name the field, Vixie cron's day rule, and NextTick across months, years and DST.

#include "cron/cron_expression.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "absl/time/civil_time.h"

namespace paceline::cron {
namespace {

using ::testing::HasSubstr;

CronExpression Parsed(absl::string_view text) {
  absl::StatusOr<CronExpression> e = CronExpression::Parse(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status();
  return *std::move(e);
}

std::string Error(absl::string_view text) {
  absl::StatusOr<CronExpression> e = CronExpression::Parse(text);
  EXPECT_FALSE(e.ok()) << text;
  if (e.ok()) return "";
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(e.status().message());
}

absl::TimeZone Zone(absl::string_view name) {
  absl::StatusOr<absl::TimeZone> z = LoadZone(name);
  EXPECT_TRUE(z.ok()) << z.status();
  return z.value_or(absl::UTCTimeZone());
}

absl::Time At(absl::CivilSecond c, const absl::TimeZone& z = absl::UTCTimeZone()) {
  return absl::FromCivil(c, z);
}

// The first `n` ticks after `from`, as local civil times in `z`.
std::vector<absl::CivilSecond> Ticks(absl::string_view expr, absl::CivilSecond from, int n,
                                     const absl::TimeZone& z = absl::UTCTimeZone()) {
  CronExpression e = Parsed(expr);
  std::vector<absl::CivilSecond> out;
  absl::Time t = absl::FromCivil(from, z);
  for (int i = 0; i < n; ++i) {
    std::optional<absl::Time> next = e.NextTick(t, z);
    if (!next) break;
    EXPECT_GT(*next, t);
    out.push_back(absl::ToCivilSecond(*next, z));
    t = *next;
  }
  return out;
}

using CS = absl::CivilSecond;

TEST(CronExpressionTest, EveryFiveMinutes) {
  EXPECT_THAT(Ticks("*/5 * * * *", CS(2026, 1, 1, 10, 58, 30), 3),
              ::testing::ElementsAre(CS(2026, 1, 1, 11, 0, 0), CS(2026, 1, 1, 11, 5, 0),
                                     CS(2026, 1, 1, 11, 10, 0)));
}

TEST(CronExpressionTest, AfterIsExclusive) {
  // A time exactly on a tick gives the next one.
  EXPECT_THAT(Ticks("0 * * * *", CS(2026, 1, 1, 10, 0, 0), 1),
              ::testing::ElementsAre(CS(2026, 1, 1, 11, 0, 0)));
}

TEST(CronExpressionTest, ListsRangesStepsAndNames) {
  EXPECT_THAT(Ticks("0,30 9-10 * * MON-fri", CS(2026, 3, 6, 10, 0, 0), 4),  // a Friday
              ::testing::ElementsAre(CS(2026, 3, 6, 10, 30, 0), CS(2026, 3, 9, 9, 0, 0),
                                     CS(2026, 3, 9, 9, 30, 0), CS(2026, 3, 9, 10, 0, 0)));
  EXPECT_THAT(Ticks("15 0 1 jan,JUL *", CS(2026, 2, 1, 0, 0, 0), 2),
              ::testing::ElementsAre(CS(2026, 7, 1, 0, 15, 0), CS(2027, 1, 1, 0, 15, 0)));
  EXPECT_THAT(Ticks("10-40/15 * * * *", CS(2026, 1, 1, 0, 0, 0), 3),
              ::testing::ElementsAre(CS(2026, 1, 1, 0, 10, 0), CS(2026, 1, 1, 0, 25, 0),
                                     CS(2026, 1, 1, 0, 40, 0)));
  // "50/5" runs from 50 to the end by 5.
  EXPECT_THAT(Ticks("50/5 * * * *", CS(2026, 1, 1, 0, 0, 0), 3),
              ::testing::ElementsAre(CS(2026, 1, 1, 0, 50, 0), CS(2026, 1, 1, 0, 55, 0),
                                     CS(2026, 1, 1, 1, 50, 0)));
}

TEST(CronExpressionTest, SundayIsZeroAndSeven) {
  // 2026-03-01 is a Sunday.
  EXPECT_THAT(Ticks("0 12 * * 7", CS(2026, 2, 26, 0, 0, 0), 1),
              ::testing::ElementsAre(CS(2026, 3, 1, 12, 0, 0)));
  EXPECT_THAT(Ticks("0 12 * * 0", CS(2026, 2, 26, 0, 0, 0), 1),
              ::testing::ElementsAre(CS(2026, 3, 1, 12, 0, 0)));
  EXPECT_THAT(Ticks("0 12 * * 6-7", CS(2026, 2, 26, 0, 0, 0), 2),
              ::testing::ElementsAre(CS(2026, 2, 28, 12, 0, 0), CS(2026, 3, 1, 12, 0, 0)));
}

TEST(CronExpressionTest, DayOfMonthAndDayOfWeekAreOredWhenBothRestricted) {
  // The 13th, or any Friday (Vixie cron): 2026-02-13 is a Friday, 2026-03-06 the next Friday.
  EXPECT_THAT(Ticks("0 0 13 * FRI", CS(2026, 2, 10, 0, 0, 0), 4),
              ::testing::ElementsAre(CS(2026, 2, 13, 0, 0, 0), CS(2026, 2, 20, 0, 0, 0),
                                     CS(2026, 2, 27, 0, 0, 0), CS(2026, 3, 6, 0, 0, 0)));
  // With `*` in day-of-month, only Fridays; with `*/1` (it starts with `*`), the same.
  EXPECT_THAT(Ticks("0 0 */1 * FRI", CS(2026, 2, 10, 0, 0, 0), 1),
              ::testing::ElementsAre(CS(2026, 2, 13, 0, 0, 0)));
  EXPECT_THAT(Ticks("0 0 * * FRI", CS(2026, 2, 13, 0, 0, 0), 1),
              ::testing::ElementsAre(CS(2026, 2, 20, 0, 0, 0)));
}

TEST(CronExpressionTest, Macros) {
  EXPECT_THAT(Ticks("@hourly", CS(2026, 1, 1, 10, 1, 0), 1),
              ::testing::ElementsAre(CS(2026, 1, 1, 11, 0, 0)));
  EXPECT_THAT(Ticks("@daily", CS(2026, 1, 1, 10, 1, 0), 1),
              ::testing::ElementsAre(CS(2026, 1, 2, 0, 0, 0)));
  EXPECT_THAT(Ticks("@Weekly", CS(2026, 3, 2, 0, 0, 0), 1),  // a Monday -> Sunday
              ::testing::ElementsAre(CS(2026, 3, 8, 0, 0, 0)));
  EXPECT_THAT(Ticks("@monthly", CS(2026, 1, 31, 0, 0, 0), 1),
              ::testing::ElementsAre(CS(2026, 2, 1, 0, 0, 0)));
  EXPECT_THAT(Ticks("@yearly", CS(2026, 1, 1, 0, 0, 0), 1),
              ::testing::ElementsAre(CS(2027, 1, 1, 0, 0, 0)));
  EXPECT_EQ(Ticks("@annually", CS(2026, 5, 1, 0, 0, 0), 1),
            Ticks("@yearly", CS(2026, 5, 1, 0, 0, 0), 1));
  EXPECT_EQ(Ticks("@midnight", CS(2026, 5, 1, 3, 0, 0), 1),
            Ticks("@daily", CS(2026, 5, 1, 3, 0, 0), 1));
}

TEST(CronExpressionTest, SecondsFieldExtension) {
  CronExpression e = Parsed("*/2 * * * * *");
  EXPECT_TRUE(e.has_seconds());
  EXPECT_FALSE(Parsed("* * * * *").has_seconds());
  EXPECT_THAT(Ticks("*/2 * * * * *", CS(2026, 1, 1, 0, 0, 59), 3),
              ::testing::ElementsAre(CS(2026, 1, 1, 0, 1, 0), CS(2026, 1, 1, 0, 1, 2),
                                     CS(2026, 1, 1, 0, 1, 4)));
  // Seconds within a minute of time: sub-second `after` still gives the next whole tick.
  absl::Time after = At(CS(2026, 1, 1, 0, 0, 1)) + absl::Milliseconds(500);
  EXPECT_EQ(e.NextTick(after, absl::UTCTimeZone()), At(CS(2026, 1, 1, 0, 0, 2)));
}

TEST(CronExpressionTest, LeapDay) {
  EXPECT_THAT(Ticks("0 0 29 2 *", CS(2026, 1, 1, 0, 0, 0), 2),
              ::testing::ElementsAre(CS(2028, 2, 29, 0, 0, 0), CS(2032, 2, 29, 0, 0, 0)));
}

TEST(CronExpressionTest, ErrorsNameTheFieldAndWhatWasExpected) {
  EXPECT_EQ(Error("61 * * * *"), "minute: '61' is out of range; expected 0-59");
  EXPECT_EQ(Error("* 24 * * *"), "hour: '24' is out of range; expected 0-23");
  EXPECT_EQ(Error("* * 0 * *"), "day-of-month: '0' is out of range; expected 1-31");
  EXPECT_EQ(Error("* * * 13 *"), "month: '13' is out of range; expected 1-12 or a name JAN-DEC");
  EXPECT_EQ(Error("* * * * 8"),
            "day-of-week: '8' is out of range; expected 0-7 or a name SUN-SAT (0 and 7 are "
            "Sunday)");
  EXPECT_EQ(Error("* * * * MONDAY"),
            "day-of-week: 'MONDAY' is not a value; expected 0-7 or a name SUN-SAT (0 and 7 are "
            "Sunday)");
  EXPECT_EQ(Error("*/0 * * * *"),
            "minute: '*/0' has a bad step; expected a step of 1-60 after '/', such as */5");
  EXPECT_EQ(Error("30-10 * * * *"),
            "minute: '30-10' is a range that runs backwards; expected start <= end");
  EXPECT_EQ(Error("1,,2 * * * *"), "minute: '' is an empty list item; expected 0-59");
  EXPECT_EQ(Error("60 * * * * *"), "second: '60' is out of range; expected 0-59");
  EXPECT_THAT(Error("* * * *"), HasSubstr("has 4 fields; expected 5 (minute hour"));
  EXPECT_THAT(Error(""), HasSubstr("has 0 fields; expected 5"));
  EXPECT_THAT(Error("* * * * * * *"), HasSubstr("has 7 fields"));
  EXPECT_THAT(Error("@reboot"), HasSubstr("'@reboot' is not a schedule; expected @yearly"));
  EXPECT_EQ(Error("0 0 30 2 *"),
            "day-of-month: '30' never occurs in the months FEB; expected a day that one of "
            "them has");
  EXPECT_THAT(Error("0 0 31 4,6 *"), HasSubstr("never occurs in the months APR,JUN"));
  // With a weekday too, the days are OR'ed: it runs on Mondays of February.
  EXPECT_TRUE(CronExpression::Parse("0 0 30 2 MON").ok());
  EXPECT_THAT(Error(std::string(300, '*')), HasSubstr("expected at most 256"));
}

TEST(CronExpressionTest, LoadZone) {
  EXPECT_TRUE(LoadZone("UTC").ok());
  EXPECT_TRUE(LoadZone("Europe/Berlin").ok());
  EXPECT_TRUE(LoadZone("America/Argentina/Buenos_Aires").ok());
  for (absl::string_view bad : {"", "Mars/Olympus", "/etc/passwd", "../../etc/passwd", "localtime",
                                "Europe/Berlin ", "file:/etc/localtime"}) {
    absl::StatusOr<absl::TimeZone> z = LoadZone(bad);
    ASSERT_FALSE(z.ok()) << bad;
    EXPECT_THAT(z.status().message(), HasSubstr("unknown time zone"));
    EXPECT_THAT(z.status().message(), HasSubstr("expected an IANA name such as Europe/Berlin"));
  }
}

TEST(CronExpressionTest, TimeZoneShiftsTheTick) {
  absl::TimeZone berlin = Zone("Europe/Berlin");
  CronExpression e = Parsed("0 9 * * *");
  // 09:00 in Berlin in winter is 08:00 UTC, in summer 07:00 UTC.
  EXPECT_EQ(e.NextTick(At(CS(2026, 1, 10, 0, 0, 0)), berlin), At(CS(2026, 1, 10, 8, 0, 0)));
  EXPECT_EQ(e.NextTick(At(CS(2026, 7, 10, 0, 0, 0)), berlin), At(CS(2026, 7, 10, 7, 0, 0)));
}

TEST(CronExpressionTest, SpringForwardRunsSkippedTicksOnceAtTheEndOfTheGap) {
  // Europe/Berlin, 2026-03-29: 02:00 local jumps to 03:00 (01:00 UTC).
  absl::TimeZone berlin = Zone("Europe/Berlin");
  absl::Time gap_end = At(CS(2026, 3, 29, 1, 0, 0));
  // A daily 02:30 runs at 03:00 that day, and at 02:30 the next.
  CronExpression daily = Parsed("30 2 * * *");
  EXPECT_EQ(daily.NextTick(At(CS(2026, 3, 28, 12, 0, 0)), berlin), gap_end);
  EXPECT_EQ(daily.NextTick(gap_end, berlin), absl::FromCivil(CS(2026, 3, 30, 2, 30, 0), berlin));
  // Every 15 minutes: the gap's ticks and the 03:00 tick run once, at 03:00.
  EXPECT_THAT(Ticks("*/15 * * * *", CS(2026, 3, 29, 1, 40, 0), 4, berlin),
              ::testing::ElementsAre(CS(2026, 3, 29, 1, 45, 0), CS(2026, 3, 29, 3, 0, 0),
                                     CS(2026, 3, 29, 3, 15, 0), CS(2026, 3, 29, 3, 30, 0)));
}

TEST(CronExpressionTest, FallBackRunsTheRepeatedHourOnce) {
  // Europe/Berlin, 2026-10-25: 03:00 local goes back to 02:00; 02:xx happens twice (00:xx
  // and 01:xx UTC).
  absl::TimeZone berlin = Zone("Europe/Berlin");
  CronExpression daily = Parsed("30 2 * * *");
  absl::Time first = At(CS(2026, 10, 25, 0, 30, 0));
  EXPECT_EQ(daily.NextTick(At(CS(2026, 10, 24, 12, 0, 0)), berlin), first);
  EXPECT_EQ(daily.NextTick(first, berlin), absl::FromCivil(CS(2026, 10, 26, 2, 30, 0), berlin));
  // Asked during the second pass, the repeated ticks are not given again.
  EXPECT_EQ(daily.NextTick(At(CS(2026, 10, 25, 1, 10, 0)), berlin),
            absl::FromCivil(CS(2026, 10, 26, 2, 30, 0), berlin));
  // Every 20 minutes in UTC terms: 00:00, 00:20, 00:40 (the first pass), then 02:00 UTC.
  CronExpression e = Parsed("*/20 * * * *");
  std::vector<absl::Time> got;
  absl::Time t = At(CS(2026, 10, 24, 23, 50, 0));
  for (int i = 0; i < 5; ++i) got.push_back(t = *e.NextTick(t, berlin));
  EXPECT_THAT(got,
              ::testing::ElementsAre(At(CS(2026, 10, 25, 0, 0, 0)), At(CS(2026, 10, 25, 0, 20, 0)),
                                     At(CS(2026, 10, 25, 0, 40, 0)), At(CS(2026, 10, 25, 2, 0, 0)),
                                     At(CS(2026, 10, 25, 2, 20, 0))));
}

TEST(CronExpressionTest, InfiniteTimes) {
  CronExpression e = Parsed("* * * * *");
  EXPECT_EQ(e.NextTick(absl::InfiniteFuture(), absl::UTCTimeZone()), std::nullopt);
  EXPECT_EQ(e.NextTick(absl::InfinitePast(), absl::UTCTimeZone()),
            absl::UnixEpoch() + absl::Minutes(1));
}

}  // namespace
}  // namespace paceline::cron
