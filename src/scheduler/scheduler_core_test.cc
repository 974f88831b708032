#include "scheduler/scheduler_core.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/test_util.h"

namespace paceline::scheduler {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

using testing::Batch;
using testing::CoreTest;
using testing::Host;
using testing::kGi;
using testing::Pool;

TEST_F(CoreTest, BatchJobRunsToCompletionWithinCapacity) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 4), {}, now_, a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h2", 4), {}, now_, a).ok());
  auto id = core_->job_control().CreateJob(Batch(10), "/a", now_, a);
  ASSERT_TRUE(id.ok()) << id.status();
  Commit(std::move(a));

  Actions first = Cycle();
  ASSERT_EQ(first.launches.size(), 8u) << "8 cores in the cluster, 1 core per task";
  std::map<std::string, int> per_host;
  for (const Launch& l : first.launches) {
    ++per_host[l.host];
    EXPECT_EQ(l.task->command, "true");
    EXPECT_EQ(l.run.run, 1u);
  }
  EXPECT_EQ(per_host["h1"], 4);
  EXPECT_EQ(per_host["h2"], 4);
  EXPECT_THAT(core_->WhyPending(TaskId{*id, 9}), Not(IsEmpty()));
  EXPECT_THAT(core_->WhyPending(first.launches[0].run.task), IsEmpty());

  for (const Launch& l : first.launches) Report(l, TaskState::kRunning);
  for (const Launch& l : first.launches) Report(l, TaskState::kSucceeded, 0);
  Actions second = Cycle();
  ASSERT_EQ(second.launches.size(), 2u);
  for (const Launch& l : second.launches) {
    Report(l, TaskState::kRunning);
    Report(l, TaskState::kSucceeded, 0);
  }
  EXPECT_EQ(core_->jobs().GetJob(*id)->state(), JobState::kSucceeded);
  EXPECT_TRUE(core_->resources().total_allocation().regular().IsZero());
  EXPECT_EQ(core_->snapshot().num_tasks(), 0u);
  EXPECT_TRUE(core_->snapshot().Validate().ok());
}

TEST_F(CoreTest, PortsAreAssignedToLaunches) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(10'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 4), {}, now_, a).ok());
  JobSpec spec = Batch(2);
  spec.task.ports = {"http", "grpc"};
  ASSERT_TRUE(core_->job_control().CreateJob(spec, "/a", now_, a).ok());
  Commit(std::move(a));
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 2u);
  std::set<uint32_t> seen;
  for (const Launch& l : c.launches) {
    ASSERT_EQ(l.ports.size(), 2u);
    EXPECT_EQ(l.ports[0].first, "http");
    EXPECT_EQ(l.ports[1].first, "grpc");
    for (const auto& [name, port] : l.ports) {
      EXPECT_GE(port, 31000u);
      EXPECT_LE(port, 31999u);
      EXPECT_TRUE(seen.insert(port).second) << "port " << port << " given twice";
    }
  }
}

TEST_F(CoreTest, CreateJobRejectsBadPoolsAndImpossibleGangs) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(1000), a).ok());
  ASSERT_TRUE(core_->pools().CreatePool("/a/b", Pool(1000), a).ok());
  EXPECT_EQ(core_->job_control().CreateJob(Batch(1), "/nope", now_, a).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(core_->job_control().CreateJob(Batch(1), "/a", now_, a).status().message(),
              HasSubstr("jobs run only in leaf pools"));
  PoolSpec limited = Pool(1000);
  limited.dim(Dim::kCpu).limit = 2000;
  ASSERT_TRUE(core_->pools().CreatePool("/small", limited, a).ok());
  JobSpec gang = Batch(4);
  gang.sla.min_running_instances = 4;
  auto r = core_->job_control().CreateJob(gang, "/small", now_, a);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("a gang of 4 instances needs cpu 4"));
  // With roles, the gang's own tasks count: a launcher of 0.5 cpu and workers of 0.5 fit.
  JobSpec roles = Batch(4, 500);
  roles.sla.min_running_instances = 4;
  roles.roles = {RoleSpec{"launcher", 1, roles.task}, RoleSpec{"worker", 3, roles.task}};
  EXPECT_TRUE(core_->job_control().CreateJob(roles, "/small", now_, a).ok());
  roles.roles[1].task.resources = Resources::Of(1000, kGi);
  EXPECT_THAT(core_->job_control().CreateJob(roles, "/small", now_, a).status().message(),
              HasSubstr("a gang of 4 instances needs cpu 3.5"));
}

TEST_F(CoreTest, KillJobStopsRunningAndPendingTasks) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 2), {}, now_, a).ok());
  auto id = core_->job_control().CreateJob(Batch(5), "/a", now_, a);
  Commit(std::move(a));
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 2u);
  for (const Launch& l : c.launches) Report(l, TaskState::kRunning);
  Actions k;
  ASSERT_TRUE(core_->job_control().KillJob(*id, now_, k).ok());
  Commit(k);
  EXPECT_EQ(k.kills.size(), 2u);
  EXPECT_EQ(core_->jobs().GetJob(*id)->count(TaskState::kKilled), 3u);
  for (const Launch& l : c.launches) Report(l, TaskState::kKilled);
  EXPECT_EQ(core_->jobs().GetJob(*id)->state(), JobState::kKilled);
  EXPECT_TRUE(core_->resources().total_allocation().regular().IsZero());
  EXPECT_TRUE(Cycle().launches.empty());
}

TEST_F(CoreTest, SilentHostIsLostAndItsTasksRunElsewhere) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 2), {}, now_, a).ok());
  auto id = core_->job_control().CreateJob(Batch(2), "/a", now_, a);
  Commit(std::move(a));
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 2u);
  for (const Launch& l : c.launches) Report(l, TaskState::kRunning);
  Actions join;
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h2", 2), {}, now_, join).ok());
  Commit(join);
  // h2 heartbeats, h1 falls silent.
  now_ += absl::Seconds(20);
  EXPECT_TRUE(core_->agents().Heartbeat("h2", now_));
  now_ += absl::Seconds(15);
  EXPECT_TRUE(core_->agents().Heartbeat("h2", now_));
  Actions after = Cycle();
  ASSERT_EQ(after.launches.size(), 2u);
  for (const Launch& l : after.launches) {
    EXPECT_EQ(l.host, "h2");
    EXPECT_EQ(l.run.run, 2u);
  }
  EXPECT_FALSE(core_->agents().Heartbeat("h1", now_)) << "a lost host must register again";
  auto events = store_.ListEvents(TaskId{*id, 0}, 0);
  bool saw_lost = false;
  for (const auto& e : *events) saw_lost |= e.state == TaskState::kLost && e.host == "h1";
  EXPECT_TRUE(saw_lost);
}

TEST_F(CoreTest, RestartedCoreAdoptsRunningTasksWhenTheirAgentRegisters) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 4), {}, now_, a).ok());
  JobSpec spec = Batch(6);
  spec.task.ports = {"http"};
  auto id = core_->job_control().CreateJob(spec, "/a", now_, a);
  Commit(std::move(a));
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 4u);
  for (const Launch& l : c.launches) Report(l, TaskState::kRunning);

  // A new core (a restarted master) from the store.
  Restart();
  const hostmgr::TrackedHost* h1 = core_->hosts().Find("h1");
  ASSERT_NE(h1, nullptr);
  EXPECT_FALSE(h1->connected) << "no agent has registered with this master yet";
  EXPECT_TRUE(h1->reconnecting);
  EXPECT_EQ(core_->hosts().connected_capacity()[Dim::kCpu], 4000) << "its capacity still counts";
  std::vector<ReportedRun> running;
  for (const Launch& l : c.launches) running.push_back({l.run, l.ports, l.gpu_devices});
  Actions reg;
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 4), running, now_, reg).ok());
  Commit(reg);
  EXPECT_TRUE(reg.kills.empty());
  EXPECT_TRUE(h1->connected);
  EXPECT_FALSE(h1->reconnecting);
  EXPECT_EQ(core_->snapshot().num_tasks(), 4u) << "the running tasks hold their host again";
  EXPECT_TRUE(core_->snapshot().Validate().ok());
  const Resources held = core_->resources().total_allocation().regular();
  EXPECT_EQ(held[Dim::kCpu], 4000);
  // Its agent registers again (a stream that broke): nothing is counted twice.
  Actions again;
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 4), running, now_, again).ok());
  Commit(again);
  EXPECT_TRUE(again.kills.empty());
  EXPECT_EQ(core_->snapshot().num_tasks(), 4u);
  EXPECT_EQ(core_->resources().total_allocation().regular(), held);
  EXPECT_TRUE(core_->snapshot().Validate().ok());
  // The host is full: the two pending instances must wait, not over-commit it.
  Actions next = Cycle();
  EXPECT_TRUE(next.launches.empty());
  for (const Launch& l : c.launches) Report(l, TaskState::kSucceeded, 0);
  Actions rest = Cycle();
  EXPECT_EQ(rest.launches.size(), 2u);
  EXPECT_EQ(core_->jobs().GetJob(*id)->count(TaskState::kSucceeded), 4u);
}

// Jobs run only in leaf pools, and a pool is not deleted under its live jobs, even while the
// resource manager does not hold their runs: after a restart, before their agent registers again.
TEST_F(CoreTest, APoolWithLiveJobsGetsNoChildAndStaysEvenBeforeItsRunsAreAdopted) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 4), {}, now_, a).ok());
  auto id = core_->job_control().CreateJob(Batch(2), "/a", now_, a);
  ASSERT_TRUE(id.ok());
  Commit(std::move(a));
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 2u);
  for (const Launch& l : c.launches) Report(l, TaskState::kRunning);

  Restart();
  ASSERT_EQ(core_->resources().total_allocation().regular()[Dim::kCpu], 0)
      << "the runs are not adopted yet";
  Actions refused;
  absl::Status child = core_->pools().CreatePool("/a/b", Pool(0), refused);
  EXPECT_EQ(child.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(child.message(),
            absl::StrCat("cannot create pool /a/b: pool /a has 1 live job(s) (job ", id->value(),
                         " is RUNNING) and jobs run only in leaf pools"));
  absl::Status deleted = core_->pools().DeletePool("/a", refused);
  EXPECT_EQ(deleted.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(deleted.message()), HasSubstr("kill them or let them finish"));
  EXPECT_TRUE(refused.batch.put_pools.empty() && refused.batch.delete_pools.empty());

  // Once the job is over, the pool may be deleted.
  std::vector<ReportedRun> running;
  for (const Launch& l : c.launches) running.push_back({l.run, l.ports, l.gpu_devices});
  Actions reg;
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 4), running, now_, reg).ok());
  Commit(reg);
  for (const Launch& l : c.launches) Report(l, TaskState::kSucceeded, 0);
  Actions done;
  EXPECT_TRUE(core_->pools().DeletePool("/a", done).ok());
}

// What a standby answers DNS from (docs/services.md): a service's live runs keep their ports in
// their records, a batch job's do not, and a host's record keeps the address its agent
// registered from, through a restart of the master until the agent registers again.
TEST_F(CoreTest, LiveServiceRunsRecordTheirPortsAndHostsTheirAgentsAddress) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  HostRegistration reg = Host("h1", 4);
  reg.address = "198.18.0.11";
  ASSERT_TRUE(core_->agents().RegisterHost(reg, {}, now_, a).ok());
  JobSpec service = Batch(2);
  service.type = JobType::kService;
  service.task.ports = {"http", "admin"};
  auto web = core_->job_control().CreateJob(service, "/a", now_, a);
  ASSERT_TRUE(web.ok());
  JobSpec batch = Batch(1);
  batch.task.ports = {"http"};
  auto etl = core_->job_control().CreateJob(batch, "/a", now_, a);
  ASSERT_TRUE(etl.ok());
  Commit(std::move(a));
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 3u);
  for (const Launch& l : c.launches) Report(l, TaskState::kRunning);
  auto ports_of = [&](TaskId id) {
    auto contents = store_.Load();
    EXPECT_TRUE(contents.ok());
    for (const records::TaskRecord& t : contents->tasks) {
      if (t.id == id) return t.ports;
    }
    return std::vector<uint16_t>{99};
  };
  for (const Launch& l : c.launches) {
    std::vector<uint16_t> want;
    if (l.run.task.job == *web) {
      for (const auto& [name, port] : l.ports) want.push_back(static_cast<uint16_t>(port));
      ASSERT_EQ(want.size(), 2u);
    }
    EXPECT_EQ(ports_of(l.run.task), want) << l.run.task.ToString();
  }
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  ASSERT_EQ(contents->hosts.size(), 1u);
  EXPECT_EQ(contents->hosts[0].address, "198.18.0.11");

  // A restarted master knows the address from the store, and keeps it in what it writes of the
  // host before its agent is back (a drain).
  auto fresh = SchedulerCore::Create(CoreConfig{});
  ASSERT_TRUE(fresh.ok());
  core_ = std::move(*fresh);
  Actions restored;
  ASSERT_TRUE(core_->Restore(*contents, now_, restored).ok());
  Commit(restored);
  EXPECT_EQ(core_->hosts().Find("h1")->address, "198.18.0.11");
  Actions drain;
  ASSERT_TRUE(
      core_->agents().SetMaintenance("h1", records::HostMaintenance::kDraining, now_, drain).ok());
  ASSERT_EQ(drain.batch.put_hosts.size(), 1u);
  EXPECT_EQ(drain.batch.put_hosts[0].address, "198.18.0.11");
  // A run being stopped has no ports in its record: it is out of DNS.
  Actions kill;
  ASSERT_TRUE(core_->job_control().KillJob(*web, now_, kill).ok());
  Commit(std::move(kill));
  EXPECT_TRUE(ports_of(TaskId{*web, 0}).empty());
}

TEST_F(CoreTest, ReregisteringAgentReconcilesRuns) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 4), {}, now_, a).ok());
  auto id = core_->job_control().CreateJob(Batch(2), "/a", now_, a);
  Commit(std::move(a));
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 2u);
  for (const Launch& l : c.launches) Report(l, TaskState::kRunning);
  // The agent restarts and reports only one of the two runs, plus one nobody owns.
  RunId kept = c.launches[0].run;
  RunId stranger{TaskId{JobId(999), 0}, 1};
  Actions r;
  ASSERT_TRUE(core_->agents()
                  .RegisterHost(Host("h1", 4), {{kept, {}, {}}, {stranger, {}, {}}}, now_, r)
                  .ok());
  Commit(r);
  ASSERT_EQ(r.kills.size(), 1u);
  EXPECT_EQ(r.kills[0].run, stranger);
  const jobmgr::Job* job = core_->jobs().GetJob(*id);
  EXPECT_EQ(job->task(kept.task.instance).state, TaskState::kRunning);
  EXPECT_EQ(job->task(c.launches[1].run.task.instance).run, 2u) << "the missing run is rerun";
}

TEST_F(CoreTest, RevocableWorkIsAdmittedOnAllocatedButUnusedCapacity) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 4), {}, now_, a).ok());
  auto regular = core_->job_control().CreateJob(Batch(4), "/a", now_, a);
  ASSERT_TRUE(regular.ok()) << regular.status();
  Commit(std::move(a));
  Actions first = Cycle();
  ASSERT_EQ(first.launches.size(), 4u) << "the regular job takes every core";
  for (const Launch& l : first.launches) Report(l, TaskState::kRunning);

  Actions b;
  JobSpec be = Batch(1);
  be.sla.revocable = true;
  auto revocable = core_->job_control().CreateJob(be, "/a", now_, b);
  ASSERT_TRUE(revocable.ok()) << revocable.status();
  Commit(std::move(b));
  now_ += absl::Seconds(1);
  EXPECT_TRUE(Cycle().launches.empty());
  const TaskId be_task{*revocable, 0};
  EXPECT_EQ(core_->jobs().GetJob(*revocable)->task(0).state, TaskState::kPending)
      << "no slack: every core is allocated";

  // The agent measures that the regular tasks use a tenth of a core each.
  std::vector<ReportedUsage> usage;
  for (const Launch& l : first.launches) usage.push_back({l.run, Resources::Of(100, kGi / 4)});
  usage.push_back({RunId{TaskId{*regular, 99}, 1}, Resources::Of(0, 0)});  // not ours: ignored
  HostUsageSample host;
  host.used = Resources::Of(500, kGi);
  host.interval = absl::Seconds(1);
  core_->agents().ReportUsage("h1", host, usage, now_);
  EXPECT_EQ(core_->agents().AllocatedUnused(now_), Resources::Of(4 * 900, 4 * (kGi - kGi / 4)));
  ASSERT_TRUE(core_->agents().RunUsage(first.launches[0].run.task, now_).has_value());
  EXPECT_EQ(core_->agents().RunUsage(first.launches[0].run.task, now_)->used,
            Resources::Of(100, kGi / 4));
  ASSERT_TRUE(core_->agents().HostUsage("h1", now_).has_value());

  Cycle();
  EXPECT_NE(core_->jobs().GetJob(*revocable)->task(0).state, TaskState::kPending)
      << "admitted on the slack: " << core_->WhyPending(be_task);

  // A stale report (3 intervals) or an ended run gives no slack.
  EXPECT_TRUE(core_->agents().AllocatedUnused(now_ + absl::Seconds(3)).IsZero());
  Report(first.launches[0], TaskState::kSucceeded, 0);
  EXPECT_EQ(core_->agents().AllocatedUnused(now_), Resources::Of(3 * 900, 3 * (kGi - kGi / 4)));
  EXPECT_FALSE(core_->agents().RunUsage(first.launches[0].run.task, now_).has_value());
}

TEST_F(CoreTest, GangMembersAreLaunchedWithTheirPeers) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 2), {}, now_, a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h2", 2), {}, now_, a).ok());
  JobSpec gang = Batch(3);
  gang.sla.min_running_instances = 3;
  gang.task.ports = {"rpc"};
  ASSERT_TRUE(core_->job_control().CreateJob(gang, "/a", now_, a).ok());
  JobSpec single = Batch(1);
  ASSERT_TRUE(core_->job_control().CreateJob(single, "/a", now_, a).ok());
  Commit(std::move(a));
  Actions c = Cycle();
  ASSERT_EQ(c.launches.size(), 4u);
  for (const Launch& l : c.launches) {
    if (l.gang_size == 1) {
      EXPECT_EQ(l.peers, nullptr);
      continue;
    }
    ASSERT_NE(l.peers, nullptr);
    ASSERT_EQ(l.peers->size(), 3u);
    for (uint32_t i = 0; i < 3; ++i) {
      const GangPeer& p = (*l.peers)[i];
      EXPECT_EQ(p.instance, i);
      ASSERT_EQ(p.ports.size(), 1u);
      EXPECT_EQ(p.ports[0].first, "rpc");
      // Each peer is where its own launch goes, with the same port.
      for (const Launch& other : c.launches) {
        if (other.run.task.job == l.run.task.job && other.run.task.instance == i) {
          EXPECT_EQ(p.host, other.host);
          EXPECT_EQ(p.ports, other.ports);
        }
      }
    }
  }
}

TEST_F(CoreTest, AGangMemberRestartedAloneStillGetsEveryPeer) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 2), {}, now_, a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h2", 2), {}, now_, a).ok());
  JobSpec gang = Batch(3);
  gang.sla.min_running_instances = 3;
  gang.task.ports = {"rpc"};
  auto id = core_->job_control().CreateJob(gang, "/a", now_, a);
  ASSERT_TRUE(id.ok()) << id.status();
  Commit(std::move(a));
  Actions first = Cycle();
  ASSERT_EQ(first.launches.size(), 3u);
  std::map<uint32_t, const Launch*> launch_of;
  for (const Launch& l : first.launches) {
    launch_of[l.run.task.instance] = &l;
    Report(l, TaskState::kRunning);
  }

  // Instance 1 restarts on its own: a gang of one, placed in a cycle of its own.
  Actions r;
  ASSERT_TRUE(core_->job_control().RestartInstances(*id, {1}, now_, r).ok());
  Actions restarted = Commit(std::move(r));
  ASSERT_EQ(restarted.kills.size(), 1u);
  Report(*launch_of[1], TaskState::kKilled);
  Actions again = Cycle();
  ASSERT_EQ(again.launches.size(), 1u);
  const Launch& relaunch = again.launches[0];
  EXPECT_EQ(relaunch.run, (RunId{TaskId{*id, 1}, 2}));
  EXPECT_EQ(relaunch.gang_size, 3u);
  ASSERT_NE(relaunch.peers, nullptr) << "a member restarted alone still needs its peers";
  ASSERT_EQ(relaunch.peers->size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    const GangPeer& p = (*relaunch.peers)[i];
    EXPECT_EQ(p.instance, i);
    // Itself where it goes now; the others where their runs are.
    const Launch& where = i == 1 ? relaunch : *launch_of[i];
    EXPECT_EQ(p.host, where.host) << i;
    EXPECT_EQ(p.ports, where.ports) << i;
    ASSERT_EQ(p.ports.size(), 1u);
  }
}

TEST_F(CoreTest, AnAdmittedTaskThatStillFindsNoHostKeepsItsReasonUntilItIsExplainedAgain) {
  // Two hosts of 4 cores, each with a task of 3: 2 cores free in all, 1 on each.
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(10'000), a).ok());
  Commit(std::move(a));
  for (const char* name : {"h1", "h2"}) {
    Actions b;
    ASSERT_TRUE(core_->agents().RegisterHost(Host(name, 4), {}, now_, b).ok());
    ASSERT_TRUE(core_->job_control().CreateJob(Batch(1, 3000), "/a", now_, b).ok());
    Commit(std::move(b));
    ASSERT_EQ(Cycle().launches.size(), 1u);
  }
  // A task with a port (so placement offers it every cycle) asks 1.5 cores.
  JobSpec wide = Batch(1, 1500);
  wide.task.ports = {"http"};
  Actions b;
  auto job = core_->job_control().CreateJob(wide, "/a", now_, b);
  ASSERT_TRUE(job.ok()) << job.status();
  Commit(std::move(b));
  now_ += absl::Seconds(1);
  Cycle();
  const std::string first = core_->WhyPending(TaskId{*job, 0});
  EXPECT_THAT(first, HasSubstr("0/2 hosts: 2 insufficient cpu"));
  // A third host, too small: the task fails again, and its reason stands for 10 s.
  Actions c;
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h3", 1), {}, now_, c).ok());
  Commit(std::move(c));
  now_ += absl::Seconds(1);
  Cycle();
  EXPECT_EQ(core_->WhyPending(TaskId{*job, 0}), first);
  now_ += CoreConfig{}.reexplain_after;
  Cycle();
  EXPECT_THAT(core_->WhyPending(TaskId{*job, 0}), HasSubstr("0/3 hosts: 3 insufficient cpu"));
}

// One-task gangs that placement sees alike (shapes equal but for the job) share an explanation
// for 10 s: a second job's task that finds no host takes the first's, and is counted afresh
// once it is older; a task of another shape is counted on its own.
TEST_F(CoreTest, TasksThatPlacementSeesAlikeShareAnExplanationFor10Seconds) {
  // Four hosts of 4 cores, each with a task of 3: 4 cores free in all, 1 on each.
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(20'000), a).ok());
  Commit(std::move(a));
  for (const char* name : {"h1", "h2", "h3", "h4"}) {
    Actions b;
    ASSERT_TRUE(core_->agents().RegisterHost(Host(name, 4), {}, now_, b).ok());
    ASSERT_TRUE(core_->job_control().CreateJob(Batch(1, 3000), "/a", now_, b).ok());
    Commit(std::move(b));
    ASSERT_EQ(Cycle().launches.size(), 1u);
  }
  auto pending = [&](int64_t cpu_milli) {
    JobSpec s = Batch(1, cpu_milli);
    s.task.ports = {"http"};  // offered to placement every cycle
    Actions b;
    auto job = core_->job_control().CreateJob(s, "/a", now_, b);
    EXPECT_TRUE(job.ok()) << job.status();
    Commit(std::move(b));
    return *job;
  };
  const JobId first = pending(1200);
  now_ += absl::Seconds(1);
  Cycle();
  const std::string why = core_->WhyPending(TaskId{first, 0});
  EXPECT_THAT(why, HasSubstr("0/4 hosts: 4 insufficient cpu"));

  // A second host, too small: a like task of another job takes the first's explanation.
  Actions c;
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h5", 1), {}, now_, c).ok());
  Commit(std::move(c));
  const JobId second = pending(1200);
  const JobId other = pending(1100);
  now_ += absl::Seconds(1);
  Cycle();
  EXPECT_EQ(core_->WhyPending(TaskId{second, 0}), why);
  EXPECT_THAT(core_->WhyPending(TaskId{other, 0}), HasSubstr("0/5 hosts: 5 insufficient cpu"));

  now_ += CoreConfig{}.reexplain_after;
  Cycle();
  EXPECT_THAT(core_->WhyPending(TaskId{second, 0}), HasSubstr("0/5 hosts: 5 insufficient cpu"));
}

}  // namespace
}  // namespace paceline::scheduler
