// Backfill over random workloads (fixed seeds, printed on failure): the pure ResourceManager
// driven by a simulated clock, each admitted gang running at once for its run time and killed
// at its max_running_time (as the job manager's deadline does).
//   - every reservation is kept: a gang shown "reserved from T" is admitted by T;
//   - with run times equal to the limits, the first gang to get a reservation starts no later
//     than it does without backfill;
//   - a gang without a limit is never backfilled.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "resmgr/resource_manager.h"
#include "resmgr/test_builders.h"

namespace paceline::resmgr {
namespace {

using testing::Cpu;
using testing::G;

constexpr absl::Duration kStep = absl::Seconds(10);
constexpr int64_t kCapacity = 100;

struct Job {
  uint64_t id = 0;
  int64_t cpu = 0;
  absl::Duration arrive;
  absl::Duration limit;  // zero: none
  absl::Duration run;    // how long it would run; killed at `limit`
};

struct Outcome {
  absl::flat_hash_map<uint64_t, absl::Time> admitted;
  // The earliest reservation time each gang was shown while it waited.
  absl::flat_hash_map<uint64_t, absl::Time> reserved_at;
  uint64_t first_reserved = 0;  // the first gang that got a reservation (0: none)
  std::vector<uint64_t> backfilled;
};

std::vector<Job> RandomWorkload(std::mt19937_64& rng, bool exact, bool all_limited) {
  std::uniform_int_distribution<int> n_jobs(10, 60), size(1, 100), steps(1, 60), gap(0, 6),
      percent(0, 99);
  std::vector<Job> jobs;
  absl::Duration at;
  const int n = n_jobs(rng);
  for (int i = 0; i < n; ++i) {
    Job j;
    j.id = static_cast<uint64_t>(i + 1);
    // Mostly small jobs, some as large as the cluster.
    j.cpu = percent(rng) < 75 ? std::min(size(rng), 30) : size(rng);
    at += kStep * gap(rng);
    j.arrive = at;
    j.limit = all_limited || percent(rng) < 80 ? kStep * steps(rng) : absl::ZeroDuration();
    if (exact) {
      j.run = j.limit > absl::ZeroDuration() ? j.limit : kStep * steps(rng);
    } else {
      j.run = kStep * steps(rng);  // may end early, or overrun and be killed at its limit
    }
    jobs.push_back(j);
  }
  return jobs;
}

Outcome Simulate(const std::vector<Job>& jobs, bool backfill) {
  ResourceManagerConfig config;
  config.backfill = backfill;
  ResourceManager rm(config);
  const PoolId pool = *rm.CreatePool("/a", PoolSpec());
  const absl::Time t0 = absl::FromUnixSeconds(1577836800);
  absl::flat_hash_map<uint64_t, const Job*> by_id;
  for (const Job& j : jobs) by_id[j.id] = &j;
  struct Running {
    uint64_t id;
    absl::Time end;
  };
  std::vector<Running> running;
  Outcome out;
  size_t next = 0;
  for (absl::Time now = t0;
       next < jobs.size() || !running.empty() || out.admitted.size() < jobs.size(); now += kStep) {
    EXPECT_LT(now - t0, absl::Hours(48)) << "the workload never finishes";
    if (now - t0 >= absl::Hours(48)) break;
    for (auto it = running.begin(); it != running.end();) {
      if (it->end <= now) {
        EXPECT_TRUE(rm.Release(TaskId{JobId(it->id), 0}).ok());
        it = running.erase(it);
      } else {
        ++it;
      }
    }
    for (; next < jobs.size() && t0 + jobs[next].arrive <= now; ++next) {
      const Job& j = jobs[next];
      EXPECT_TRUE(rm.Enqueue(G(j.id, pool, static_cast<double>(j.cpu)).Limit(j.limit), now).ok());
    }
    CycleResult r = rm.RunCycle(CycleInput{Cpu(kCapacity), Resources()}, now);
    for (const AdmittedGang& a : r.admitted) {
      const Job& j = *by_id[a.gang.value()];
      EXPECT_TRUE(rm.MarkRunning(TaskId{JobId(j.id), 0}, now).ok());
      out.admitted[j.id] = now;
      absl::Duration run = j.run;
      if (j.limit > absl::ZeroDuration()) run = std::min(run, j.limit);  // killed at the limit
      running.push_back({j.id, now + run});
      if (a.backfilled_ahead_of != GangId()) out.backfilled.push_back(j.id);
    }
    absl::StatusOr<std::vector<QueuedGangView>> queue = rm.Queue(pool);
    EXPECT_TRUE(queue.ok());
    for (const QueuedGangView& v : *queue) {
      if (v.reason.code != WaitCode::kReserved) continue;
      if (out.first_reserved == 0) out.first_reserved = v.gang.value();
      auto [it, inserted] = out.reserved_at.try_emplace(v.gang.value(), v.reason.at);
      if (!inserted) it->second = std::min<absl::Time>(it->second, v.reason.at);
    }
  }
  return out;
}

std::string Describe(const std::vector<Job>& jobs) {
  std::string s;
  for (const Job& j : jobs) {
    absl::StrAppend(&s, "  job ", j.id, ": cpu ", j.cpu, " at ", absl::FormatDuration(j.arrive),
                    " limit ", absl::FormatDuration(j.limit), " run ", absl::FormatDuration(j.run),
                    "\n");
  }
  return s;
}

TEST(BackfillPropertyTest, EveryReservationIsKept) {
  int reservations = 0, backfilled = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const std::vector<Job> jobs = RandomWorkload(rng, /*exact=*/false, /*all_limited=*/false);
    const Outcome o = Simulate(jobs, /*backfill=*/true);
    for (const auto& [gang, at] : o.reserved_at) {
      ++reservations;
      ASSERT_TRUE(o.admitted.contains(gang)) << "seed " << seed << " gang " << gang;
      EXPECT_LE(o.admitted.at(gang), at)
          << "seed " << seed << ": gang " << gang << " reserved from " << at << "\n"
          << Describe(jobs);
    }
    for (uint64_t id : o.backfilled) {
      ++backfilled;
      const auto it =
          std::find_if(jobs.begin(), jobs.end(), [&](const Job& j) { return j.id == id; });
      EXPECT_GT(it->limit, absl::ZeroDuration())
          << "seed " << seed << ": gang " << id << " has no limit but was backfilled";
    }
  }
  // The workloads exercise what they claim to.
  EXPECT_GT(reservations, 300);
  EXPECT_GT(backfilled, 300);
}

TEST(BackfillPropertyTest, TheReservedGangNeverStartsLaterThanWithoutBackfill) {
  int compared = 0;
  absl::Duration wait_with, wait_without;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const std::vector<Job> jobs = RandomWorkload(rng, /*exact=*/true, /*all_limited=*/true);
    const Outcome with = Simulate(jobs, true);
    const Outcome without = Simulate(jobs, false);
    if (with.first_reserved == 0) continue;
    ++compared;
    const uint64_t g = with.first_reserved;
    ASSERT_TRUE(with.admitted.contains(g) && without.admitted.contains(g)) << "seed " << seed;
    EXPECT_LE(with.admitted.at(g), without.admitted.at(g))
        << "seed " << seed << ": gang " << g << "\n"
        << Describe(jobs);
    for (const Job& j : jobs) {
      wait_with += with.admitted.at(j.id) - (absl::FromUnixSeconds(1577836800) + j.arrive);
      wait_without += without.admitted.at(j.id) - (absl::FromUnixSeconds(1577836800) + j.arrive);
    }
  }
  EXPECT_GT(compared, 150);
  // Not a guarantee for every job (EASY protects the reserved gang only), but over many
  // workloads jobs wait less: the capacity that sat idle behind the reserved gang is used.
  EXPECT_LT(wait_with, wait_without * 0.9) << wait_with << " vs " << wait_without;
}

}  // namespace
}  // namespace paceline::resmgr
