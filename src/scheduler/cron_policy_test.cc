// DecideCron and LatestTick under a simulated clock: the concurrency policies, the starting
// deadline, missed ticks (at most one late run), the keep limits, suspend, clock jumps, DST.

#include "scheduler/cron_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/time/civil_time.h"

namespace paceline::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Phase = CronRun::Phase;

absl::Time T(int h, int m, int s = 0) {
  return absl::FromCivil(absl::CivilSecond(2026, 3, 2, h, m, s), absl::UTCTimeZone());
}

cron::CronExpression Expr(absl::string_view text) { return *cron::CronExpression::Parse(text); }

ScheduleSpec Every5(ConcurrencyPolicy p = ConcurrencyPolicy::kAllow) {
  return ScheduleSpec{.cron = "*/5 * * * *", .concurrency = p};
}

CronDecision Decide(const ScheduleSpec& s, absl::Time handled, std::vector<CronRun> runs,
                    absl::Time now) {
  return DecideCron(s, Expr(s.cron), absl::UTCTimeZone(), handled, runs, now);
}

TEST(CronPolicyTest, NothingBeforeTheNextTick) {
  CronDecision d = Decide(Every5(), T(10, 0), {}, T(10, 4, 59));
  EXPECT_FALSE(d.create);
  EXPECT_FALSE(d.skipped);
  EXPECT_EQ(d.handled, T(10, 0));
  EXPECT_EQ(d.next_tick, T(10, 5));
}

TEST(CronPolicyTest, CreatesAtTheTick) {
  CronDecision d = Decide(Every5(), T(10, 0), {}, T(10, 5));
  EXPECT_EQ(d.create, T(10, 5));
  EXPECT_EQ(d.handled, T(10, 5));
  EXPECT_EQ(d.next_tick, T(10, 10));
  // Asked again at the same time (the same master, or after a restart that saw the run):
  // nothing more.
  CronDecision again = Decide(Every5(), d.handled, {{JobId(7), T(10, 5)}}, T(10, 5, 30));
  EXPECT_FALSE(again.create);
}

TEST(CronPolicyTest, AllowOverlaps) {
  CronDecision d = Decide(Every5(), T(10, 0), {{JobId(3), T(10, 0), Phase::kLive}}, T(10, 5));
  EXPECT_EQ(d.create, T(10, 5));
  EXPECT_TRUE(d.kill.empty());
}

TEST(CronPolicyTest, ForbidSkipsWhileARunIsLive) {
  ScheduleSpec s = Every5(ConcurrencyPolicy::kForbid);
  CronDecision d = Decide(s, T(10, 0), {{JobId(3), T(10, 0), Phase::kLive}}, T(10, 5));
  EXPECT_FALSE(d.create);
  EXPECT_EQ(d.skipped, T(10, 5));
  EXPECT_THAT(d.why_skipped, HasSubstr("run 3 is still live (concurrency: forbid)"));
  EXPECT_EQ(d.handled, T(10, 5));  // not looked at again by this master
  // Once the run has ended, the next tick runs.
  d = Decide(s, d.handled, {{JobId(3), T(10, 0), Phase::kSucceeded}}, T(10, 10));
  EXPECT_EQ(d.create, T(10, 10));
}

TEST(CronPolicyTest, ReplaceKillsTheLiveRunsThenCreates) {
  ScheduleSpec s = Every5(ConcurrencyPolicy::kReplace);
  CronDecision d = Decide(
      s, T(10, 0), {{JobId(3), T(9, 55), Phase::kSucceeded}, {JobId(4), T(10, 0)}}, T(10, 5));
  EXPECT_THAT(d.kill, ElementsAre(JobId(4)));
  EXPECT_EQ(d.create, T(10, 5));
}

TEST(CronPolicyTest, MissedTicksGiveOneLateRunForTheLatest) {
  // No master from 10:00 to 10:23: ticks 10:05 ... 10:20 missed; one run, for 10:20.
  CronDecision d = Decide(Every5(), T(10, 0), {}, T(10, 23));
  EXPECT_EQ(d.create, T(10, 20));
  EXPECT_EQ(d.handled, T(10, 20));
  EXPECT_EQ(d.next_tick, T(10, 25));
}

TEST(CronPolicyTest, StartingDeadline) {
  ScheduleSpec s = Every5();
  s.starting_deadline = absl::Minutes(2);
  // 10:20 is 3 minutes late: skipped.
  CronDecision d = Decide(s, T(10, 0), {}, T(10, 23));
  EXPECT_FALSE(d.create);
  EXPECT_EQ(d.skipped, T(10, 20));
  EXPECT_THAT(d.why_skipped, HasSubstr("3m late, past the starting deadline of 2m"));
  EXPECT_EQ(d.handled, T(10, 20));
  // 2 minutes late exactly: still runs.
  d = Decide(s, T(10, 0), {}, T(10, 22));
  EXPECT_EQ(d.create, T(10, 20));
}

TEST(CronPolicyTest, Suspended) {
  ScheduleSpec s = Every5();
  s.suspend = true;
  CronDecision d = Decide(s, T(10, 0), {}, T(10, 5));
  EXPECT_FALSE(d.create);
  EXPECT_EQ(d.skipped, T(10, 5));
  EXPECT_THAT(d.why_skipped, HasSubstr("suspended"));
}

TEST(CronPolicyTest, ClockJumps) {
  // Forward by a day: one run for the latest tick (no deadline), found without walking the
  // 288 ticks missed.
  CronDecision d = Decide(Every5(), T(10, 0), {}, T(10, 2) + absl::Hours(24));
  EXPECT_EQ(d.create, T(10, 0) + absl::Hours(24));
  // Backward, after the 10:05 run: nothing until the clock passes 10:05 again.
  for (absl::Time now : {T(9, 0), T(9, 59), T(10, 5)}) {
    d = Decide(Every5(), T(10, 5), {{JobId(5), T(10, 5), Phase::kSucceeded}}, now);
    EXPECT_FALSE(d.create) << now;
    EXPECT_EQ(d.handled, T(10, 5));
  }
  d = Decide(Every5(), T(10, 5), {{JobId(5), T(10, 5), Phase::kSucceeded}}, T(10, 10));
  EXPECT_EQ(d.create, T(10, 10));
}

TEST(CronPolicyTest, KeepLimitsPurgeTheOldestAndNeverTheNewest) {
  ScheduleSpec s = Every5();
  s.keep_succeeded = 2;
  s.keep_failed = 1;
  std::vector<CronRun> runs = {
      {JobId(1), T(9, 40), Phase::kSucceeded}, {JobId(2), T(9, 45), Phase::kFailed},
      {JobId(3), T(9, 50), Phase::kSucceeded}, {JobId(4), T(9, 55), Phase::kFailed},
      {JobId(5), T(10, 0), Phase::kSucceeded}, {JobId(6), T(10, 5), Phase::kLive}};
  CronDecision d = Decide(s, T(10, 5), runs, T(10, 6));
  EXPECT_THAT(d.purge, ::testing::UnorderedElementsAre(JobId(1), JobId(2)));
  // Keep nothing: every finished run goes but the newest.
  s.keep_succeeded = 0;
  s.keep_failed = 0;
  d = Decide(s, T(10, 5),
             {{JobId(1), T(9, 55), Phase::kSucceeded}, {JobId(2), T(10, 0), Phase::kSucceeded}},
             T(10, 6));
  EXPECT_THAT(d.purge, ElementsAre(JobId(1)));
}

TEST(CronPolicyTest, LatestTickSecondsAndLongGaps) {
  cron::CronExpression every2 = Expr("*/2 * * * * *");
  EXPECT_EQ(LatestTick(every2, absl::UTCTimeZone(), T(10, 0), T(10, 0, 7)), T(10, 0, 6));
  EXPECT_EQ(LatestTick(every2, absl::UTCTimeZone(), T(10, 0), T(10, 0, 1)), std::nullopt);
  // Ten years of missed per-second ticks: the latest, at once.
  absl::Time later = T(10, 0) + absl::Hours(24 * 3653) + absl::Seconds(3);
  EXPECT_EQ(LatestTick(every2, absl::UTCTimeZone(), T(10, 0), later), later - absl::Seconds(1));
  // A yearly tick three years back.
  cron::CronExpression yearly = Expr("@yearly");
  absl::Time t2029 = absl::FromCivil(absl::CivilSecond(2029, 1, 1), absl::UTCTimeZone());
  EXPECT_EQ(LatestTick(yearly, absl::UTCTimeZone(), T(10, 0), t2029 + absl::Hours(5)), t2029);
}

TEST(CronPolicyTest, DaylightSavingTime) {
  absl::TimeZone berlin;
  ASSERT_TRUE(absl::LoadTimeZone("Europe/Berlin", &berlin));
  ScheduleSpec s{.cron = "30 2 * * *", .time_zone = "Europe/Berlin"};
  cron::CronExpression e = Expr(s.cron);
  auto at = [&](int y, int mo, int d, int h, int mi) {
    return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, 0), berlin);
  };
  // Spring forward (2026-03-29): 02:30 does not exist; it runs at 03:00, once.
  absl::Time handled = at(2026, 3, 28, 2, 30);
  CronDecision d = DecideCron(s, e, berlin, handled, {}, at(2026, 3, 29, 3, 1));
  EXPECT_EQ(d.create, at(2026, 3, 29, 3, 0));
  d = DecideCron(s, e, berlin, d.handled, {}, at(2026, 3, 29, 23, 0));
  EXPECT_FALSE(d.create);
  // Fall back (2026-10-25): 02:30 happens twice; one run, at the first.
  absl::Time first =
      absl::FromCivil(absl::CivilSecond(2026, 10, 25, 0, 30, 0), absl::UTCTimeZone());
  d = DecideCron(s, e, berlin, at(2026, 10, 24, 2, 30), {}, first);
  EXPECT_EQ(d.create, first);
  d = DecideCron(s, e, berlin, d.handled, {}, first + absl::Hours(1) + absl::Minutes(5));
  EXPECT_FALSE(d.create);
  EXPECT_EQ(d.next_tick, at(2026, 10, 26, 2, 30));
}

}  // namespace
}  // namespace paceline::scheduler
