#include "agent/host/usage_sampler.h"

#include <gtest/gtest.h>

namespace paceline::agent {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);
const RunId kA{TaskId{JobId(1), 0}, 1};
const RunId kB{TaskId{JobId(1), 1}, 1};

UsageSnapshot Snap(absl::Time t, int64_t host_busy_usec, std::vector<TaskUsage> tasks) {
  UsageSnapshot s;
  s.time = t;
  s.host.cpu_busy_usec = host_busy_usec;
  s.host.cpu_total_usec = host_busy_usec * 2;
  s.host.memory_total_bytes = 8 << 20;
  s.host.memory_available_bytes = 3 << 20;
  s.tasks = std::move(tasks);
  return s;
}

TEST(UsageSampler, RatesNeedTwoSamples) {
  UsageSampler s;
  EXPECT_FALSE(s.Sample(Snap(kT0, 1'000'000, {{kA, 100'000, 4096}})).has_value());
  // One second later: A used 0.5 s of cpu (500 millicores), B is new (no rate yet).
  std::optional<UsageReport> r =
      s.Sample(Snap(kT0 + absl::Seconds(1), 2'500'000, {{kA, 600'000, 8192}, {kB, 50'000, 1}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->interval, absl::Seconds(1));
  EXPECT_EQ(r->host_cpu_milli, 1500);
  EXPECT_EQ(r->host_memory_used_bytes, 5 << 20);
  EXPECT_EQ(r->host_memory_total_bytes, 8 << 20);
  ASSERT_EQ(r->runs.size(), 1u);
  EXPECT_EQ(r->runs[0], (RunUsageRate{kA, 500, 8192}));

  // Two seconds later: B appears; A is gone and forgotten.
  r = s.Sample(Snap(kT0 + absl::Seconds(3), 2'500'000, {{kB, 250'000, 2}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->host_cpu_milli, 0);
  ASSERT_EQ(r->runs.size(), 1u);
  EXPECT_EQ(r->runs[0], (RunUsageRate{kB, 100, 2}));
  r = s.Sample(Snap(kT0 + absl::Seconds(4), 2'500'000, {{kA, 900'000, 1}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->runs.empty()) << "A came back: a fresh start, no rate against its old sample";
}

TEST(UsageSampler, IgnoresASnapshotNotLaterThanThePrevious) {
  UsageSampler s;
  EXPECT_FALSE(s.Sample(Snap(kT0, 0, {})).has_value());
  EXPECT_FALSE(s.Sample(Snap(kT0, 10, {})).has_value());
  EXPECT_TRUE(s.Sample(Snap(kT0 + absl::Seconds(1), 10, {})).has_value());
}

TEST(UsageSampler, CpuMilliOfACounterThatWentBackIsZero) {
  EXPECT_EQ(CpuMilli(-5, absl::Seconds(1)), 0);
  EXPECT_EQ(CpuMilli(5, absl::ZeroDuration()), 0);
  EXPECT_EQ(CpuMilli(2'000'000, absl::Seconds(1)), 2000);
}

}  // namespace
}  // namespace paceline::agent
