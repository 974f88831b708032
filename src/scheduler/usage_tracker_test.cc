#include "scheduler/usage_tracker.h"

#include <gtest/gtest.h>

namespace paceline::scheduler {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);
constexpr int64_t kMi = int64_t{1} << 20;
const TaskId kA{JobId(1), 0};
const TaskId kB{JobId(1), 1};

RunUsageSample Sample(TaskId t, int64_t used_cpu, int64_t used_mem, bool regular = true) {
  return RunUsageSample{RunId{t, 1}, Resources::Of(used_cpu, used_mem),
                        Resources::Of(1000, 512 * kMi), regular};
}

HostUsageSample Host() {
  HostUsageSample h;
  h.used = Resources::Of(1500, 2048 * kMi);
  h.memory_total_bytes = 4096 * kMi;
  h.interval = absl::Seconds(1);
  return h;
}

TEST(UsageTracker, SlackIsAllocatedMinusUsedOfRegularRunsClampedAtZero) {
  UsageTracker u;
  u.Report("h1", Host(),
           {Sample(kA, 200, 100 * kMi), Sample(kB, 1500, 600 * kMi),
            Sample(TaskId{JobId(2), 0}, 0, 0, /*regular=*/false)},
           kT0);
  // A leaves 800m cpu and 412Mi; B uses more than it asked: nothing; the revocable run: none.
  EXPECT_EQ(u.AllocatedUnused(kT0), Resources::Of(800, 412 * kMi));
  std::optional<HostUsageView> h = u.HostUsage("h1", kT0);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->used, Resources::Of(1500, 2048 * kMi));
  EXPECT_EQ(h->tasks_used, Resources::Of(1700, 700 * kMi));
  ASSERT_TRUE(u.RunUsage(kA, kT0).has_value());
  EXPECT_EQ(u.RunUsage(kA, kT0)->used, Resources::Of(200, 100 * kMi));
}

TEST(UsageTracker, StaleReportsAndEndedRunsDoNotCount) {
  UsageTracker u;
  u.Report("h1", Host(), {Sample(kA, 0, 0), Sample(kB, 0, 0)}, kT0);
  EXPECT_EQ(u.AllocatedUnused(kT0), Resources::Of(2000, 1024 * kMi));
  u.Forget(kA);
  EXPECT_EQ(u.AllocatedUnused(kT0), Resources::Of(1000, 512 * kMi));
  EXPECT_FALSE(u.RunUsage(kA, kT0).has_value());
  // Three intervals without a report: stale.
  EXPECT_EQ(u.AllocatedUnused(kT0 + absl::Milliseconds(2999)), Resources::Of(1000, 512 * kMi));
  EXPECT_TRUE(u.AllocatedUnused(kT0 + absl::Seconds(3)).IsZero());
  EXPECT_FALSE(u.HostUsage("h1", kT0 + absl::Seconds(3)).has_value());
  EXPECT_FALSE(u.RunUsage(kB, kT0 + absl::Seconds(3)).has_value());
}

TEST(UsageTracker, AReportReplacesTheHostsPreviousOneAndARunMayMove) {
  UsageTracker u;
  u.Report("h1", Host(), {Sample(kA, 0, 0), Sample(kB, 0, 0)}, kT0);
  u.Report("h1", Host(), {Sample(kA, 500, 0)}, kT0 + absl::Seconds(1));
  EXPECT_EQ(u.AllocatedUnused(kT0 + absl::Seconds(1)), Resources::Of(500, 512 * kMi));
  // kA now runs on h2 (a new run elsewhere); h1's next report no longer has it.
  u.Report("h2", Host(), {Sample(kA, 100, 0)}, kT0 + absl::Seconds(2));
  u.Report("h1", Host(), {}, kT0 + absl::Seconds(2));
  EXPECT_EQ(u.AllocatedUnused(kT0 + absl::Seconds(2)), Resources::Of(900, 512 * kMi));
  ASSERT_TRUE(u.RunUsage(kA, kT0 + absl::Seconds(2)).has_value());
  u.ForgetHost("h2");
  EXPECT_TRUE(u.AllocatedUnused(kT0 + absl::Seconds(2)).IsZero());
}

std::vector<std::pair<std::string, bool>> Changes(UsageTracker& u, absl::Time now) {
  std::vector<std::pair<std::string, bool>> out;
  for (const UsageTracker::SlackChange& c : u.TakeSlackChanges(now)) {
    out.emplace_back(c.host, c.reported);
  }
  return out;
}

TEST(UsageTracker, SlackChangesAreLoggedOncePerHostUntilTaken) {
  using Change = std::pair<std::string, bool>;
  UsageTracker u;
  u.Report("h2", Host(), {Sample(kB, 0, 0)}, kT0);
  u.Report("h1", Host(), {Sample(kA, 0, 0)}, kT0);
  u.Report("h1", Host(), {Sample(kA, 500, 0)}, kT0);
  EXPECT_EQ(Changes(u, kT0), (std::vector<Change>{{"h1", true}, {"h2", true}}));
  EXPECT_TRUE(Changes(u, kT0).empty());
  EXPECT_EQ(u.HostSlack("h1", kT0), Resources::Of(500, 512 * kMi));
  u.Forget(kA);
  EXPECT_EQ(Changes(u, kT0), (std::vector<Change>{{"h1", false}}));
  EXPECT_TRUE(u.HostSlack("h1", kT0).IsZero());

  // h1 reports again before going stale; h2 does not: only h2's report expires.
  u.Report("h1", Host(), {Sample(kA, 0, 0)}, kT0 + absl::Seconds(2));
  EXPECT_EQ(Changes(u, kT0 + absl::Seconds(3)), (std::vector<Change>{{"h1", true}, {"h2", false}}));
  EXPECT_TRUE(u.HostSlack("h2", kT0 + absl::Seconds(3)).IsZero());
  EXPECT_TRUE(Changes(u, kT0 + absl::Seconds(4)).empty());
  EXPECT_EQ(Changes(u, kT0 + absl::Seconds(5)), (std::vector<Change>{{"h1", false}}));
  u.ForgetHost("h2");
  EXPECT_EQ(Changes(u, kT0 + absl::Seconds(5)), (std::vector<Change>{{"h2", false}}));
}

}  // namespace
}  // namespace paceline::scheduler
