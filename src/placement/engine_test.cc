// Scenario tests of the placement engine: constraints, anti-affinity, never-fitting requests,
// gangs, preferences, and the "why pending" explanation (GPUs: engine_gpu_test.cc).

#include "placement/engine.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "placement/test_util.h"

namespace paceline::placement {
namespace {

using testing::Engine;
using testing::HostBuilder;
using testing::Instances;
using testing::kGi;
using testing::One;
using testing::Put;
using testing::ShapeBuilder;
using testing::Task;

TEST(Engine, LabelInPinsInstancesToMatchingHosts) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 10; ++i) {
    ASSERT_TRUE(snap.AddHost(HostBuilder(i).Label("zone", i < 3 ? "a" : "b").Build()).ok());
  }
  auto shape = ShapeBuilder().Constraint("zone", ConstraintOp::kIn, {"a"}).Build();
  auto engine = Engine();
  Plan plan = engine->Place(Instances(shape, 6), snap);
  ASSERT_EQ(plan.assignments.size(), 6u);
  EXPECT_TRUE(plan.pending.empty());
  for (const Assignment& a : plan.assignments) EXPECT_LT(a.host.value(), 3u) << a.host.value();
}

TEST(Engine, MaxPerHostOnePlacesFourOnFourHostsAndKeepsTheFifthPending) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 4; ++i) ASSERT_TRUE(snap.AddHost(HostBuilder(i).Build()).ok());
  auto shape = ShapeBuilder(7).MaxPerHost(1).Build();
  auto engine = Engine();
  Plan plan = engine->Place(Instances(shape, 5), snap);
  ASSERT_EQ(plan.assignments.size(), 4u);
  std::set<uint32_t> hosts;
  for (const Assignment& a : plan.assignments) hosts.insert(a.host.value());
  EXPECT_EQ(hosts.size(), 4u);
  ASSERT_EQ(plan.pending.size(), 1u);
  EXPECT_EQ(plan.pending[0].tasks, std::vector<TaskId>{(TaskId{JobId(7), 4})});
  const Explanation& e = plan.pending[0].explanation;
  EXPECT_FALSE(e.never_fits);
  EXPECT_EQ(e.OneLine(), "0/4 hosts: 4 max_per_host 1 of the job");
  ASSERT_EQ(ApplyPlan(plan, snap).committed, 4u);
  // Committed: the fifth stays pending in the next cycle too.
  std::vector<PlacementRequest> fifth = {One(4, shape)};
  Plan again = engine->Place(fifth, snap);
  EXPECT_TRUE(again.assignments.empty());
  ASSERT_EQ(again.pending.size(), 1u);
  EXPECT_EQ(again.pending[0].explanation.rejections[0].filter, "max_per_host");
}

TEST(Engine, ImpossibleRequestsAreReportedAsNeverFitting) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(snap.AddHost(HostBuilder(i).MemGi(32).Gpus(2, "T4").Build()).ok());
  }
  auto engine = Engine();
  std::vector<PlacementRequest> rs = {One(0, ShapeBuilder(1).MemGi(512).Build()),
                                      One(0, ShapeBuilder(2).Gpu(1000).Models({"A100"}).Build()),
                                      One(0, ShapeBuilder(3).Gpu(4000).Build())};
  Plan plan = engine->Place(rs, snap);
  ASSERT_EQ(plan.pending.size(), 3u);
  for (const PendingRequest& p : plan.pending) EXPECT_TRUE(p.explanation.never_fits);
  EXPECT_EQ(plan.pending[0].explanation.OneLine(),
            "never fits any of 3 hosts: 3 insufficient memory (asked 512Gi, largest 32Gi)");
  EXPECT_EQ(plan.pending[1].explanation.OneLine(),
            "never fits any of 3 hosts: 3 no GPU of model [A100]");
  EXPECT_EQ(plan.pending[2].explanation.OneLine(),
            "never fits any of 3 hosts: 3 fewer than 4 GPUs");
}

TEST(Engine, BusyIsNotNeverFitting) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).MemGi(32).Build()).ok());
  ASSERT_TRUE(Put(snap, 0, 0, ShapeBuilder(9).MemGi(30).Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).MemGi(32).Status(HostStatus::kDown).Build()).ok());
  auto engine = Engine();
  std::vector<PlacementRequest> rs = {One(0, ShapeBuilder().MemGi(16).Build())};
  Plan plan = engine->Place(rs, snap);
  ASSERT_EQ(plan.pending.size(), 1u);
  const Explanation& e = plan.pending[0].explanation;
  EXPECT_FALSE(e.never_fits);
  EXPECT_EQ(e.OneLine(), "0/2 hosts: 1 host DOWN, 1 insufficient memory (asked 16Gi, best 2Gi)");
  ASSERT_NE(e.ShortestResource(), nullptr);
  EXPECT_EQ(e.ShortestResource()->best_available, 2 * kGi);
}

TEST(Engine, WhyPendingCountsEveryHostUnderItsFirstFailingFilter) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        snap.AddHost(HostBuilder(i).MemGi(64).Label("zone", i < 6 ? "a" : "c").Build()).ok());
  }
  // Zone a is busy: 8Gi left on each of its hosts.
  for (uint32_t i = 0; i < 6; ++i) {
    ASSERT_TRUE(Put(snap, i, i, ShapeBuilder(9).Cpu(100).MemGi(56).Build()).ok());
  }
  auto shape = ShapeBuilder().MemGi(16).Constraint("zone", ConstraintOp::kIn, {"a", "b"}).Build();
  auto engine = Engine();
  Plan plan = engine->Place(Instances(shape, 3), snap);
  ASSERT_EQ(plan.pending.size(), 3u);
  EXPECT_EQ(plan.pending[0].explanation.OneLine(),
            "0/10 hosts: 6 insufficient memory (asked 16Gi, best 8Gi), 4 zone not in [a b]");
  // The other two were answered from the class's cached failure, not by rescanning.
  EXPECT_EQ(plan.stats.explain_scans, 1u);
  EXPECT_EQ(plan.stats.class_hits, 2u);
  EXPECT_EQ(plan.pending[2].explanation, plan.pending[0].explanation);
}

TEST(Engine, ARequestThatAsksNoExplanationFailsWithoutAScanAndALaterOneOfItsClassGetsOne) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 4; ++i) ASSERT_TRUE(snap.AddHost(HostBuilder(i).MemGi(16).Build()).ok());
  auto big = ShapeBuilder().MemGi(32).Build();
  std::vector<PlacementRequest> requests = Instances(big, 2);
  requests[0].explain = false;
  auto engine = Engine();
  Plan plan = engine->Place(requests, snap);
  ASSERT_EQ(plan.pending.size(), 2u);
  EXPECT_FALSE(plan.pending[0].explanation.explained);
  EXPECT_EQ(plan.pending[0].explanation.rejections.size(), 0u);
  // The second asks one: it hits the class's failure, which is explained then, once.
  EXPECT_TRUE(plan.pending[1].explanation.explained);
  EXPECT_EQ(plan.pending[1].explanation.OneLine(),
            "never fits any of 4 hosts: 4 insufficient memory (asked 32Gi, largest 16Gi)");
  EXPECT_EQ(plan.stats.explain_scans, 1u);
  // In the next plan, an unexplained request of the class is answered with that explanation.
  requests[1].explain = false;
  Plan next = engine->Place(requests, snap);
  EXPECT_EQ(next.stats.explain_scans, 0u);
  EXPECT_EQ(next.pending[1].explanation, plan.pending[1].explanation);
}

TEST(Engine, AFailedClassIsNotRescannedUntilAHostWhereItFitsIsRelaxed) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 8; ++i) ASSERT_TRUE(snap.AddHost(HostBuilder(i).MemGi(16).Build()).ok());
  // Every host holds 12Gi: 4Gi left on each.
  for (uint32_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(Put(snap, i, i, ShapeBuilder(9).Cpu(100).MemGi(12).Build()).ok());
  }
  auto big = ShapeBuilder().MemGi(8).Build();
  auto engine = Engine();
  Plan first = engine->Place(Instances(big, 2), snap);
  ASSERT_EQ(first.pending.size(), 2u);
  EXPECT_EQ(first.stats.explain_scans, 1u);
  // Next cycle, nothing released: answered from the remembered failure, no scan.
  Plan second = engine->Place(Instances(big, 2), snap);
  ASSERT_EQ(second.pending.size(), 2u);
  EXPECT_EQ(second.stats.explain_scans, 0u);
  EXPECT_EQ(second.stats.class_hits, 2u);
  EXPECT_EQ(second.pending[0].explanation, first.pending[0].explanation);
  // A small task placed elsewhere and then released relaxes host 3, where 8Gi still do not fit.
  auto small = ShapeBuilder(5).MemGi(1).Build();
  Plan smalls = engine->Place(Instances(small, 1), snap);
  ASSERT_EQ(ApplyPlan(smalls, snap).committed, 1u);
  ASSERT_TRUE(snap.Release(smalls.assignments[0].task).ok());
  Plan third = engine->Place(Instances(big, 1), snap);
  EXPECT_EQ(third.stats.explain_scans, 0u);
  ASSERT_EQ(third.pending.size(), 1u);
  // Releasing a 12Gi task makes host 5 fit: the class is tried again and placed there.
  ASSERT_TRUE(snap.Release(TaskId{JobId(9), 5}).ok());
  Plan fourth = engine->Place(Instances(big, 1), snap);
  ASSERT_EQ(fourth.assignments.size(), 1u);
  EXPECT_EQ(fourth.assignments[0].host.value(), 5u);
}

TEST(Engine, AGangRollbackDoesNotLeaveAStaleFailureForLaterPlans) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 2; ++i) ASSERT_TRUE(snap.AddHost(HostBuilder(i).MemGi(16).Build()).ok());
  auto shape = ShapeBuilder().MemGi(16).Build();
  auto engine = Engine();
  // A gang of three 16Gi members: two hold both hosts, the third fails; the holds roll back.
  PlacementRequest gang;
  for (uint32_t i = 0; i < 3; ++i) gang.tasks.push_back(Task(i, shape));
  std::vector<PlacementRequest> rs = {gang};
  Plan plan = engine->Place(rs, snap);
  ASSERT_EQ(plan.pending.size(), 1u);
  // A single task of the same shape fits in the next plan.
  std::vector<PlacementRequest> single = {One(7, shape)};
  Plan next = engine->Place(single, snap);
  EXPECT_EQ(next.assignments.size(), 1u);
}

TEST(Engine, GangsAreAllOrNothing) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(snap.AddHost(HostBuilder(i).Cpu(1000).Build()).ok());
  }
  auto shape = ShapeBuilder(5).Cpu(1000).Build();
  auto single = ShapeBuilder(6).Cpu(1000).Build();
  std::vector<PlacementRequest> rs;
  rs.push_back(PlacementRequest::Gang(JobId(5), 0, 5, shape));   // 5 > 4 hosts
  rs.push_back(One(0, single));                                  // fits once the gang is gone
  rs.push_back(PlacementRequest::Gang(JobId(5), 10, 3, shape));  // fits next to it
  auto engine = Engine();
  Plan plan = engine->Place(rs, snap);
  ASSERT_EQ(plan.pending.size(), 1u);
  EXPECT_EQ(plan.pending[0].request_index, 0u);
  EXPECT_EQ(plan.pending[0].tasks.size(), 5u);
  const Explanation& e = plan.pending[0].explanation;
  EXPECT_EQ(e.gang_size, 5u);
  EXPECT_EQ(e.gang_placed, 4u);
  EXPECT_EQ(e.OneLine(),
            "gang of 5 (4 placed, released): 0/4 hosts: 4 insufficient cpu "
            "(asked 1, best 0)");
  ASSERT_EQ(plan.assignments.size(), 4u);
  for (const Assignment& a : plan.assignments) EXPECT_NE(a.request_index, 0u);
  // Place() left the snapshot untouched.
  for (uint32_t i = 0; i < 4; ++i) EXPECT_TRUE(snap.host(HostId(i))->allocated().IsZero());
  ApplyResult r = ApplyPlan(plan, snap);
  EXPECT_EQ(r.committed, 4u);
  EXPECT_TRUE(r.rejected.empty());
  EXPECT_TRUE(snap.Validate().ok());
}

TEST(Engine, TasksOfOnePlanNeverOvercommitAHost) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(4000).Build()).ok());
  auto engine = Engine();
  Plan plan = engine->Place(Instances(ShapeBuilder().Cpu(1000).Build(), 10), snap);
  EXPECT_EQ(plan.assignments.size(), 4u);
  EXPECT_EQ(plan.pending.size(), 6u);
  EXPECT_EQ(plan.stats.explain_scans, 1u);
  ASSERT_EQ(ApplyPlan(plan, snap).committed, 4u);
  EXPECT_TRUE(snap.Validate().ok());
}

TEST(Engine, PackFillsOneHostSpreadUsesBoth) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Build()).ok());
  auto shape = ShapeBuilder().Cpu(1000).Build();
  Plan pack = Engine("best-fit")->Place(Instances(shape, 2), snap);
  ASSERT_EQ(pack.assignments.size(), 2u);
  EXPECT_EQ(pack.assignments[0].host, pack.assignments[1].host);
  Plan spread = Engine("spread")->Place(Instances(shape, 2), snap);
  ASSERT_EQ(spread.assignments.size(), 2u);
  EXPECT_NE(spread.assignments[0].host, spread.assignments[1].host);
}

TEST(Engine, PreviousHostsAreKeptWhenFeasible) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Build()).ok());
  ASSERT_TRUE(Put(snap, 0, 0, ShapeBuilder(9).Cpu(4000).Build()).ok());  // pack prefers host 0
  auto shape = ShapeBuilder().Build();
  PlacementTask restart = Task(0, shape);
  restart.previous = PreviousHost{HostId(1), false};
  PlacementTask stateful = Task(1, shape);
  stateful.previous = PreviousHost{HostId(1), true};
  PlacementTask fresh = Task(2, shape);
  std::vector<PlacementRequest> rs = {PlacementRequest::Single(restart),
                                      PlacementRequest::Single(stateful),
                                      PlacementRequest::Single(fresh)};
  Plan plan = Engine("default", 1)->Place(rs, snap);  // even with a single candidate
  ASSERT_EQ(plan.assignments.size(), 3u);
  EXPECT_EQ(plan.assignments[0].host, HostId(1));
  EXPECT_EQ(plan.assignments[1].host, HostId(1));
  EXPECT_EQ(plan.assignments[2].host, HostId(0));
}

TEST(Engine, RequiredHostPinsAndExplains) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(snap.AddHost(HostBuilder(i).Cpu(2000).Build()).ok());
  auto shape = ShapeBuilder().Cpu(2000).Build();
  PlacementTask a = Task(0, shape);
  a.required_host = HostId(2);
  PlacementTask b = Task(1, shape);
  b.required_host = HostId(2);
  std::vector<PlacementRequest> rs = {PlacementRequest::Single(a), PlacementRequest::Single(b)};
  Plan plan = Engine()->Place(rs, snap);
  ASSERT_EQ(plan.assignments.size(), 1u);
  EXPECT_EQ(plan.assignments[0].host, HostId(2));
  ASSERT_EQ(plan.pending.size(), 1u);
  EXPECT_EQ(plan.pending[0].explanation.OneLine(),
            "0/3 hosts: 2 not the required host 2, 1 insufficient cpu (asked 2, best 0)");
}

TEST(Engine, PortsAreDistinctWithinAPlan) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Ports(31000, 31002).Build()).ok());
  auto one = ShapeBuilder(1).Cpu(100).Ports(1).Build();
  auto two = ShapeBuilder(2).Cpu(100).Ports(2).Build();
  std::vector<PlacementRequest> rs = {One(0, one), One(1, one), One(0, two)};
  Plan plan = Engine()->Place(rs, snap);
  ASSERT_EQ(plan.assignments.size(), 2u);
  EXPECT_EQ(plan.assignments[0].ports, std::vector<uint32_t>{31000});
  EXPECT_EQ(plan.assignments[1].ports, std::vector<uint32_t>{31001});
  ASSERT_EQ(plan.pending.size(), 1u);
  EXPECT_EQ(plan.pending[0].explanation.OneLine(), "0/1 hosts: 1 fewer than 2 free ports");
  EXPECT_EQ(ApplyPlan(plan, snap).committed, 2u);
}

TEST(Engine, ExclusiveHostsOnlyTakeTheirTasks) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Label("paceline.exclusive", "ml").Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Build()).ok());
  auto ml = ShapeBuilder(1).Exclusive("ml").Build();
  auto plain = ShapeBuilder(2).Build();
  std::vector<PlacementRequest> rs = {One(0, ml), One(0, plain), One(1, ml), One(1, plain)};
  Plan plan = Engine()->Place(rs, snap);
  ASSERT_EQ(plan.assignments.size(), 4u);
  for (const Assignment& a : plan.assignments) {
    EXPECT_EQ(a.host, a.shape == ml ? HostId(0) : HostId(1));
  }
}

TEST(Engine, ConstraintCachesFollowHostChanges) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 20; ++i) {
    ASSERT_TRUE(snap.AddHost(HostBuilder(i).Label("zone", i == 0 ? "a" : "b").Build()).ok());
  }
  auto shape = ShapeBuilder().Constraint("zone", ConstraintOp::kIn, {"a"}).Build();
  auto engine = Engine();
  std::vector<PlacementRequest> rs = {One(0, shape)};
  Plan p1 = engine->Place(rs, snap);
  ASSERT_EQ(p1.assignments.size(), 1u);
  EXPECT_EQ(p1.assignments[0].host, HostId(0));
  ASSERT_TRUE(snap.SetHostStatus(HostId(0), HostStatus::kDraining).ok());
  Plan p2 = engine->Place(rs, snap);
  ASSERT_TRUE(p2.assignments.empty());
  EXPECT_EQ(p2.pending[0].explanation.OneLine(), "0/20 hosts: 19 zone not in [a], 1 host DRAINING");
  ASSERT_TRUE(snap.SetHostLabels(HostId(7), {{"zone", "a"}}).ok());
  Plan p3 = engine->Place(rs, snap);
  ASSERT_EQ(p3.assignments.size(), 1u);
  EXPECT_EQ(p3.assignments[0].host, HostId(7));
  ASSERT_TRUE(snap.AddHost(HostBuilder(30).Label("zone", "a").Cpu(64000).Build()).ok());
  ASSERT_TRUE(snap.RemoveHost(HostId(7)).ok());
  Plan p4 = engine->Place(rs, snap);
  ASSERT_EQ(p4.assignments.size(), 1u);
  EXPECT_EQ(p4.assignments[0].host, HostId(30));
}

TEST(Engine, BoundedCandidatesStillFindTheOnlyFeasibleHost) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 2000; ++i) {
    ASSERT_TRUE(
        snap.AddHost(HostBuilder(i).MemGi(i == 1234 ? 64 : 8).Cpu(i == 1234 ? 1000 : 64000).Build())
            .ok());
  }
  auto shape = ShapeBuilder().Cpu(500).MemGi(48).Build();
  for (const std::string profile : {"default", "spread", "random-fit", "dot-product"}) {
    Plan plan = Engine(profile)->Place(Instances(shape, 1), snap);
    ASSERT_EQ(plan.assignments.size(), 1u) << profile;
    EXPECT_EQ(plan.assignments[0].host, HostId(1234)) << profile;
    // The index walk looked at a handful of hosts, not at the cluster.
    EXPECT_LT(plan.stats.hosts_visited, 100u) << profile;
  }
}

TEST(Engine, ApplyPlanRejectsAWholeGangThatNoLongerFits) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(snap.AddHost(HostBuilder(i).Cpu(1000).Build()).ok());
  auto shape = ShapeBuilder(1).Cpu(1000).Build();
  std::vector<PlacementRequest> rs = {PlacementRequest::Gang(JobId(1), 0, 3, shape)};
  Plan plan = Engine()->Place(rs, snap);
  ASSERT_EQ(plan.assignments.size(), 3u);
  // Meanwhile something else took the last member's host.
  ASSERT_TRUE(
      Put(snap, plan.assignments[2].host.value(), 0, ShapeBuilder(2).Cpu(1000).Build()).ok());
  ApplyResult r = ApplyPlan(plan, snap);
  EXPECT_EQ(r.committed, 0u);
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_EQ(r.rejected[0].task, (TaskId{JobId(1), 2}));
  EXPECT_EQ(snap.num_tasks(), 1u);
  EXPECT_TRUE(snap.Validate().ok());
}

TEST(Engine, UnknownProfileIsAnError) {
  EngineConfig c;
  c.profile = "fastest";
  EXPECT_EQ(PlacementEngine::Create(c).status().code(), absl::StatusCode::kNotFound);
}

// An explanation counts each host under the first filter that rejects it, static or dynamic;
// the static filters are asked only of hosts the class does not pass, kept in step with the
// hosts' status.
TEST(Engine, AnExplanationCountsEachHostUnderTheFirstFilterThatRejectsIt) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Label("zone", "b").Build()).ok());
  ASSERT_TRUE(
      snap.AddHost(HostBuilder(1).Label("zone", "a").Status(HostStatus::kDown).Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(2).Label("zone", "a").Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(3).Label("zone", "a").Build()).ok());
  ASSERT_TRUE(Put(snap, 2, 0, ShapeBuilder(9).Cpu(8000).Build()).ok());
  const absl::Time until = absl::FromUnixSeconds(1'000'000);
  ASSERT_TRUE(snap.HoldHost(HostId(3), 7, until).ok());
  auto engine = Engine();
  auto explain = [&](int64_t cpu_milli) {
    auto shape =
        ShapeBuilder(1).Cpu(cpu_milli).Constraint("zone", ConstraintOp::kIn, {"a"}).Build();
    PlacementTask t = Task(0, shape);
    t.ends_by = until + absl::Seconds(1);
    Plan p = engine->Place(std::vector{PlacementRequest::Single(std::move(t))}, snap);
    EXPECT_EQ(p.pending.size(), 1u);
    std::map<std::string, int64_t> by_filter;
    for (const RejectionCount& r : p.pending[0].explanation.rejections) {
      by_filter[r.filter] += r.hosts;
    }
    return by_filter;
  };
  EXPECT_EQ(explain(6000),
            (std::map<std::string, int64_t>{
                {"labels", 1}, {"host_state", 1}, {"resource_fit", 1}, {"held_hosts", 1}}));
  // Another class of the same static constraints (a failure of the first would stand).
  ASSERT_TRUE(snap.SetHostStatus(HostId(2), HostStatus::kDown).ok());
  EXPECT_EQ(explain(5000),
            (std::map<std::string, int64_t>{{"labels", 1}, {"host_state", 2}, {"held_hosts", 1}}));
}

// Host holds (ClusterSnapshot::HoldHost, filter held_hosts).
TEST(Engine, AHeldHostTakesItsGangsTasksAndTasksEndingByTheHoldOnly) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 2; ++i) ASSERT_TRUE(snap.AddHost(HostBuilder(i).Build()).ok());
  const absl::Time until = absl::FromUnixSeconds(1'000'000);
  ASSERT_TRUE(snap.HoldHost(HostId(0), 7, until).ok());
  ASSERT_TRUE(snap.HoldHost(HostId(1), 8, until).ok());
  EXPECT_EQ(snap.HoldHost(HostId(0), 0, until).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(snap.HoldsHostsFor(7));
  EXPECT_FALSE(snap.HoldsHostsFor(9));
  auto shape = ShapeBuilder(1).Build();
  auto engine = Engine();
  auto request = [&](uint32_t instance, uint64_t gang, absl::Time ends_by) {
    PlacementTask t = Task(instance, shape);
    t.gang = gang;
    t.ends_by = ends_by;
    return PlacementRequest::Single(std::move(t));
  };

  // Ends after the holds: no host, and the explanation says why; not "never fits".
  Plan late = engine->Place(std::vector{request(0, 0, until + absl::Seconds(1))}, snap);
  ASSERT_EQ(late.pending.size(), 1u);
  const Explanation& e = late.pending[0].explanation;
  EXPECT_FALSE(e.never_fits);
  ASSERT_EQ(e.rejections.size(), 1u);
  EXPECT_EQ(e.rejections[0].filter, "held_hosts");
  EXPECT_EQ(e.rejections[0].hosts, 2);

  // Ends by the holds, or belongs to the gang: placed.
  Plan on_time = engine->Place(std::vector{request(1, 0, until)}, snap);
  EXPECT_EQ(on_time.assignments.size(), 1u);
  Plan own = engine->Place(std::vector{request(2, 7, absl::InfiniteFuture())}, snap);
  ASSERT_EQ(own.assignments.size(), 1u);
  EXPECT_EQ(own.assignments[0].host, HostId(0));

  // A released hold lets the late task in, although its class failed before.
  snap.ReleaseHostHold(HostId(1));
  EXPECT_FALSE(snap.HoldsHostsFor(8));
  Plan after = engine->Place(std::vector{request(0, 0, until + absl::Seconds(1))}, snap);
  ASSERT_EQ(after.assignments.size(), 1u);
  EXPECT_EQ(after.assignments[0].host, HostId(1));
}

// A gang's task takes a host held for its gang before an empty host its scorers like better:
// the hold is where admission counted on its room, and the empty host is left to what follows.
TEST(Engine, AGangsTaskTakesAHostHeldForItsGangFirst) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(snap.AddHost(HostBuilder(i).Build()).ok());
  // Host 0 is the fullest, so packing prefers it; host 2 is held for gang 7.
  auto small = ShapeBuilder(1).Build();
  auto engine = Engine();
  Plan busy = engine->Place(std::vector{PlacementRequest::Single(Task(0, small))}, snap);
  ASSERT_EQ(busy.assignments.size(), 1u);
  ASSERT_TRUE(ApplyPlan(busy, snap).rejected.empty());
  const HostId fullest = busy.assignments[0].host;
  const HostId held(fullest.value() == 2 ? 1 : 2);
  ASSERT_TRUE(snap.HoldHost(held, 7, absl::FromUnixSeconds(1'000'000)).ok());

  PlacementTask member = Task(1, small);
  member.gang = 7;
  member.ends_by = absl::InfiniteFuture();
  Plan own = engine->Place(std::vector{PlacementRequest::Single(std::move(member))}, snap);
  ASSERT_EQ(own.assignments.size(), 1u);
  EXPECT_EQ(own.assignments[0].host, held);

  // Another gang's task, or one of no gang, still goes where the scorers say.
  Plan other = engine->Place(std::vector{PlacementRequest::Single(Task(2, small))}, snap);
  ASSERT_EQ(other.assignments.size(), 1u);
  EXPECT_EQ(other.assignments[0].host, fullest);
}

}  // namespace
}  // namespace paceline::placement
