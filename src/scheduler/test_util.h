#pragma once
// Builders and a fixture that keep scheduler core tests short: jobs, pools, hosts, and a core
// whose actions are committed to an in-memory store the way the master does it. Test-only.
//
// Thread-safety: single-threaded tests.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "scheduler/scheduler_core.h"
#include "store/memory_store.h"

namespace paceline::scheduler::testing {

inline const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);
inline constexpr int64_t kGi = int64_t{1} << 30;

inline JobSpec Batch(uint32_t instances, int64_t cpu_milli = 1000) {
  JobSpec s;
  s.name = "batch";
  s.instances = instances;
  s.task.command = "true";
  s.task.resources = Resources::Of(cpu_milli, kGi);
  return s;
}

inline JobSpec Revocable(uint32_t instances, int64_t cpu_milli = 1000) {
  JobSpec s = Batch(instances, cpu_milli);
  s.name = "best-effort";
  s.sla.revocable = true;
  return s;
}

inline PoolSpec Pool(int64_t cpu_reservation_milli) {
  PoolSpec p;
  p.dim(Dim::kCpu).reservation = cpu_reservation_milli;
  p.dim(Dim::kMemory).reservation = 64 * kGi;
  return p;
}

inline HostRegistration Host(const std::string& name, int64_t cores) {
  HostRegistration h;
  h.name = name;
  h.capacity = Resources::Of(cores * 1000, 16 * kGi, 100 * kGi);
  h.ports = {{31000, 31999}};
  return h;
}

// Applies actions the way the master does: store first, then "agents" (here: the test).
class CoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto core = SchedulerCore::Create(CoreConfig{});
    ASSERT_TRUE(core.ok()) << core.status();
    core_ = std::move(*core);
  }
  Actions Commit(Actions a) {
    EXPECT_TRUE(store_.Commit(a.batch).ok());
    return a;
  }
  Actions Cycle() {
    Actions a;
    core_->RunCycle(now_, a);
    return Commit(std::move(a));
  }
  Actions Report(const Launch& l, TaskState state, int exit_code = -1) {
    return Report(l.run, l.host, state, exit_code);
  }
  Actions Report(const RunId& run, const std::string& host, TaskState state, int exit_code = -1) {
    Actions a;
    core_->agents().OnStatus({run, host, state, exit_code}, now_, a);
    return Commit(std::move(a));
  }
  // A new core restored from the store, as a restarted master or its successor.
  void Restart() {
    auto core = SchedulerCore::Create(CoreConfig{});
    ASSERT_TRUE(core.ok());
    core_ = std::move(*core);
    auto contents = store_.Load();
    ASSERT_TRUE(contents.ok());
    Actions restored;
    ASSERT_TRUE(core_->Restore(*contents, now_, restored).ok());
    Commit(std::move(restored));
  }
  // `host`'s agent measures `used` for each of `runs` (1 s reporting interval).
  void ReportUsage(const std::string& host, const std::vector<RunId>& runs, const Resources& used) {
    std::vector<ReportedUsage> usage;
    for (const RunId& r : runs) usage.push_back({r, used});
    HostUsageSample sample;
    sample.interval = absl::Seconds(1);
    core_->agents().ReportUsage(host, sample, usage, now_);
  }

  std::unique_ptr<SchedulerCore> core_;
  store::MemoryStore store_;
  absl::Time now_ = kT0;
};

}  // namespace paceline::scheduler::testing
