// GPU health in the core: an agent reports its unhealthy devices (AgentControl::SetGpuFaults);
// the device takes no new work, leaves the pools' capacity, and the runs on it are told why.

#include <gtest/gtest.h>

#include "scheduler/test_util.h"

namespace paceline::scheduler::testing {
namespace {

class GpuHealthTest : public CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    Actions a;
    PoolSpec pool = Pool(100'000);
    pool.dim(Dim::kGpu).reservation = 4000;
    ASSERT_TRUE(core_->pools().CreatePool("/gpu", pool, a).ok());
    HostRegistration h = Host("h1", 8);
    h.gpu_models = {"A100", "A100"};
    ASSERT_TRUE(core_->agents().RegisterHost(h, {}, now_, a).ok());
    Commit(std::move(a));
  }
  // A job of one task that asks for one whole GPU.
  JobId GpuJob(const std::string& name) {
    JobSpec spec = Batch(1);
    spec.name = name;
    spec.task.command = "sleep 600";
    spec.task.resources = Resources::Of(1000, kGi, 0, 1000);
    Actions a;
    absl::StatusOr<JobId> id = core_->job_control().CreateJob(spec, "/gpu", now_, a);
    EXPECT_TRUE(id.ok()) << id.status();
    Commit(std::move(a));
    return *id;
  }
  // h1's agent registers again with `launch`'s run (its restart, or a new master's).
  void Reregister(const Launch& launch) {
    Actions a;
    HostRegistration h = Host("h1", 8);
    h.gpu_models = {"A100", "A100"};
    ASSERT_TRUE(
        core_->agents().RegisterHost(h, {{launch.run, {}, launch.gpu_devices}}, now_, a).ok());
    Commit(std::move(a));
  }
  absl::Status Faults(std::vector<hostmgr::GpuFault> faults) {
    Actions a;
    absl::Status s = core_->agents().SetGpuFaults("h1", std::move(faults), now_, a);
    Commit(std::move(a));
    return s;
  }
};

TEST_F(GpuHealthTest, AnUnhealthyGpuTakesNoNewWorkAndTheRunOnItIsToldWhy) {
  const JobId first = GpuJob("first");
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 1u);
  ASSERT_EQ(c.launches[0].gpu_devices.size(), 1u);
  const uint32_t sick = c.launches[0].gpu_devices[0];
  Report(c.launches[0], TaskState::kRunning);

  ASSERT_TRUE(Faults({{sick, "XID 79: GPU has fallen off the bus", now_}}).ok());
  EXPECT_EQ(core_->agents().OfferedCapacity()[Dim::kGpu], 2000)
      << "the run on the unhealthy device still counts";
  const hostmgr::TrackedHost* h1 = core_->hosts().Find("h1");
  ASSERT_NE(h1, nullptr);
  ASSERT_EQ(h1->gpu_faults.size(), 1u);
  auto events = store_.ListEvents(TaskId{first, 0}, 0);
  ASSERT_TRUE(events.ok());
  ASSERT_FALSE(events->empty());
  EXPECT_EQ(events->back().state, TaskState::kRunning) << "the run goes on";
  EXPECT_EQ(events->back().reason, "GPU_UNHEALTHY");
  EXPECT_NE(events->back().message.find("XID 79"), std::string::npos) << events->back().message;
  // A report repeated (the agent reconnected) tells the run nothing new.
  ASSERT_TRUE(Faults({{sick, "XID 79: GPU has fallen off the bus", now_}}).ok());
  EXPECT_EQ(store_.ListEvents(TaskId{first, 0}, 0)->size(), events->size());

  // The next GPU task goes to the healthy device; the one after it waits, and says why.
  GpuJob("second");
  Actions next = Cycle();
  ASSERT_EQ(next.launches.size(), 1u);
  ASSERT_EQ(next.launches[0].gpu_devices.size(), 1u);
  EXPECT_NE(next.launches[0].gpu_devices[0], sick);
  Report(next.launches[0], TaskState::kRunning);
  const JobId third = GpuJob("third");
  EXPECT_TRUE(Cycle().launches.empty());
  EXPECT_TRUE(core_->snapshot().Validate().ok());

  // The run on the sick device ends: the device is free but still unhealthy, and what it has
  // free leaves the pools' capacity.
  Report(c.launches[0], TaskState::kFailed, 1);
  EXPECT_EQ(core_->agents().OfferedCapacity()[Dim::kGpu], 1000);
  EXPECT_TRUE(Cycle().launches.empty()) << core_->WhyPending(TaskId{third, 0});
  // The agent restarts (the device was replaced) and reports no fault: it takes work again.
  ASSERT_NO_FATAL_FAILURE(Reregister(next.launches[0]));
  ASSERT_TRUE(Faults({}).ok());
  EXPECT_TRUE(h1->gpu_faults.empty());
  EXPECT_EQ(core_->agents().OfferedCapacity()[Dim::kGpu], 2000);
  Actions last = Cycle();
  ASSERT_EQ(last.launches.size(), 1u);
  EXPECT_EQ(last.launches[0].gpu_devices, std::vector<uint32_t>{sick});
}

TEST_F(GpuHealthTest, AfterAMasterRestartTheRunIsNotToldAgain) {
  const JobId job = GpuJob("first");
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 1u);
  Report(c.launches[0], TaskState::kRunning);
  const uint32_t sick = c.launches[0].gpu_devices[0];
  ASSERT_TRUE(Faults({{sick, "XID 79: GPU has fallen off the bus", now_}}).ok());
  const size_t told = store_.ListEvents(TaskId{job, 0}, 0)->size();

  // A new master knows no fault until the agent registers again with its runs and faults.
  Restart();
  Actions again;
  HostRegistration h = Host("h1", 8);
  h.gpu_models = {"A100", "A100"};
  ASSERT_TRUE(
      core_->agents()
          .RegisterHost(h, {{c.launches[0].run, {}, c.launches[0].gpu_devices}}, now_, again)
          .ok());
  Commit(std::move(again));
  ASSERT_TRUE(Faults({{sick, "XID 79: GPU has fallen off the bus", now_}}).ok());
  EXPECT_EQ(core_->hosts().Find("h1")->gpu_faults.size(), 1u);
  EXPECT_EQ(store_.ListEvents(TaskId{job, 0}, 0)->size(), told) << "no second GPU_UNHEALTHY";
}

TEST_F(GpuHealthTest, AFaultOfADeviceTheHostDoesNotHaveChangesNothing) {
  absl::Status s = Faults({{7, "XID 79", now_}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("device 7"), std::string::npos) << s;
  s = Faults({{1, "XID 79", now_}, {1, "XID 48", now_}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(core_->hosts().Find("h1")->gpu_faults.empty());
  EXPECT_EQ(core_->agents().OfferedCapacity()[Dim::kGpu], 2000);
  EXPECT_EQ(core_->agents().SetGpuFaults("nobody", {}, now_, *std::make_unique<Actions>()).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace paceline::scheduler::testing
