// One test suite per filter: each checks pass, reject, the structured rejection, the text of a
// "why pending" line and the never-fits answer (CheckEmpty).

#include <gtest/gtest.h>

#include "placement/filters/exclusive_filter.h"
#include "placement/filters/gpu_devices_filter.h"
#include "placement/filters/gpu_models_filter.h"
#include "placement/filters/host_state_filter.h"
#include "placement/filters/labels_filter.h"
#include "placement/filters/max_per_host_filter.h"
#include "placement/filters/ports_filter.h"
#include "placement/filters/required_host_filter.h"
#include "placement/filters/resource_fit_filter.h"
#include "placement/test_util.h"

namespace paceline::placement {
namespace {

using testing::Ctx;
using testing::HostBuilder;
using testing::kGi;
using testing::Put;
using testing::ShapeBuilder;
using testing::Task;

TEST(HostStateFilter, OnlyUpHostsPassButAnyHostCouldComeBack) {
  HostStateFilter f;
  EXPECT_TRUE(f.is_static());
  Ctx c(Task(0, ShapeBuilder().Build()));
  HostState up(HostBuilder(0).Build());
  HostState draining(HostBuilder(1).Status(HostStatus::kDraining).Build());
  HostState lost(HostBuilder(2).Status(HostStatus::kLost).Build());
  EXPECT_FALSE(f.Check(c.get(), up));
  auto r = f.Check(c.get(), draining);
  ASSERT_TRUE(r);
  EXPECT_EQ(f.Describe(c.get(), *r), "host DRAINING");
  EXPECT_EQ(r->filter, "host_state");
  ASSERT_TRUE(f.Check(c.get(), lost));
  EXPECT_FALSE(f.CheckEmpty(c.get(), lost));
}

TEST(ExclusiveFilter, ExclusiveHostsTakeOnlyTheirTasks) {
  ExclusiveFilter f;
  HostState plain(HostBuilder(0).Build());
  HostState gpu_team(HostBuilder(1).Label("paceline.exclusive", "ml").Build());
  Ctx normal(Task(0, ShapeBuilder().Build()));
  Ctx ml(Task(0, ShapeBuilder().Exclusive("ml").Build()));
  Ctx other(Task(0, ShapeBuilder().Exclusive("db").Build()));
  EXPECT_FALSE(f.Check(normal.get(), plain));
  EXPECT_FALSE(f.Check(ml.get(), gpu_team));
  auto r1 = f.Check(normal.get(), gpu_team);
  ASSERT_TRUE(r1);
  EXPECT_EQ(f.Describe(normal.get(), *r1), "host reserved (exclusive)");
  auto r2 = f.Check(ml.get(), plain);
  ASSERT_TRUE(r2);
  EXPECT_EQ(f.Describe(ml.get(), *r2), "not an exclusive=ml host");
  EXPECT_TRUE(f.Check(other.get(), gpu_team));
  EXPECT_TRUE(f.CheckEmpty(other.get(), gpu_team));
}

TEST(LabelsFilter, InNotInExistsNotExists) {
  LabelsFilter f;
  HostState a(HostBuilder(0).Label("zone", "a").Label("ssd", "true").Build());
  HostState c(HostBuilder(1).Label("zone", "c").Build());
  HostState bare(HostBuilder(2).Build());
  Ctx in(Task(0, ShapeBuilder().Constraint("zone", ConstraintOp::kIn, {"a", "b"}).Build()));
  Ctx not_in(Task(0, ShapeBuilder().Constraint("zone", ConstraintOp::kNotIn, {"a"}).Build()));
  Ctx exists(Task(0, ShapeBuilder().Constraint("ssd", ConstraintOp::kExists).Build()));
  Ctx not_exists(Task(0, ShapeBuilder().Constraint("ssd", ConstraintOp::kNotExists).Build()));

  EXPECT_FALSE(f.Check(in.get(), a));
  auto r = f.Check(in.get(), c);
  ASSERT_TRUE(r);
  EXPECT_EQ(f.Describe(in.get(), *r), "zone not in [a b]");
  EXPECT_TRUE(f.Check(in.get(), bare));

  EXPECT_TRUE(f.Check(not_in.get(), a));
  EXPECT_EQ(f.Describe(not_in.get(), *f.Check(not_in.get(), a)), "zone in [a]");
  EXPECT_FALSE(f.Check(not_in.get(), c));
  EXPECT_FALSE(f.Check(not_in.get(), bare));  // absent label: not in any value

  EXPECT_FALSE(f.Check(exists.get(), a));
  EXPECT_EQ(f.Describe(exists.get(), *f.Check(exists.get(), c)), "no label ssd");
  EXPECT_FALSE(f.Check(not_exists.get(), c));
  EXPECT_EQ(f.Describe(not_exists.get(), *f.Check(not_exists.get(), a)), "has label ssd");
}

TEST(LabelsFilter, NumericGtLtAndCombinedConstraintsReportTheFirstFailing) {
  LabelsFilter f;
  HostState big(HostBuilder(0).Label("cores", "64").Label("zone", "a").Build());
  HostState small(HostBuilder(1).Label("cores", "16").Label("zone", "a").Build());
  HostState junk(HostBuilder(2).Label("cores", "many").Label("zone", "b").Build());
  Ctx both(Task(0, ShapeBuilder()
                       .Constraint("zone", ConstraintOp::kIn, {"a"})
                       .Constraint("cores", ConstraintOp::kGt, {}, 32)
                       .Constraint("cores", ConstraintOp::kLt, {}, 128)
                       .Build()));
  EXPECT_FALSE(f.Check(both.get(), big));
  auto r = f.Check(both.get(), small);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->reason, 1);
  EXPECT_EQ(f.Describe(both.get(), *r), "cores not > 32");
  auto rj = f.Check(both.get(), junk);
  ASSERT_TRUE(rj);
  EXPECT_EQ(rj->reason, 0);  // zone fails first
  Ctx lt(Task(0, ShapeBuilder().Constraint("cores", ConstraintOp::kLt, {}, 32).Build()));
  EXPECT_FALSE(f.Check(lt.get(), small));
  EXPECT_TRUE(f.Check(lt.get(), junk));  // not a number
  EXPECT_EQ(f.Describe(lt.get(), *f.Check(lt.get(), big)), "cores not < 32");
}

TEST(GpuModelsFilter, CountsDevicesOfAcceptableModelsOnCapacity) {
  GpuModelsFilter f;
  HostState t4x2(HostBuilder(0).Gpus(2, "T4").Build());
  HostState none(HostBuilder(1).Build());
  Ctx any2(Task(0, ShapeBuilder().Gpu(2000).Build()));
  Ctx a100(Task(0, ShapeBuilder().Gpu(500).Models({"A100"}).Build()));
  Ctx t4x4(Task(0, ShapeBuilder().Gpu(4000).Models({"T4", "V100"}).Build()));
  Ctx cpu(Task(0, ShapeBuilder().Build()));
  EXPECT_FALSE(f.Check(any2.get(), t4x2));
  EXPECT_FALSE(f.Check(cpu.get(), none));
  auto r = f.Check(a100.get(), t4x2);
  ASSERT_TRUE(r);
  EXPECT_EQ(f.Describe(a100.get(), *r), "no GPU of model [A100]");
  auto r4 = f.Check(t4x4.get(), t4x2);
  ASSERT_TRUE(r4);
  EXPECT_EQ(r4->asked, 4);
  EXPECT_EQ(r4->available, 2);
  EXPECT_EQ(f.Describe(t4x4.get(), *r4), "fewer than 4 GPUs of model [T4 V100]");
  EXPECT_EQ(f.Describe(any2.get(), *f.Check(any2.get(), none)), "no GPU");
}

TEST(RequiredHostFilter, PinsATaskToOneHost) {
  RequiredHostFilter f;
  EXPECT_FALSE(f.is_static());
  PlacementTask t = Task(0, ShapeBuilder().Build());
  t.required_host = HostId(7);
  Ctx c(t);
  HostState h7(HostBuilder(7).Build());
  HostState h8(HostBuilder(8).Build());
  EXPECT_FALSE(f.Check(c.get(), h7));
  ASSERT_TRUE(f.Check(c.get(), h8));
  EXPECT_EQ(f.Describe(c.get(), *f.Check(c.get(), h8)), "not the required host 7");
  Ctx free_task(Task(0, ShapeBuilder().Build()));
  EXPECT_FALSE(f.Check(free_task.get(), h8));
}

TEST(ResourceFitFilter, RejectsTheFirstShortDimensionWithAskedAndAvailable) {
  ResourceFitFilter f;
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(4000).MemGi(8).Build()).ok());
  auto used = ShapeBuilder(9).Cpu(1000).MemGi(6).Build();
  ASSERT_TRUE(Put(snap, 0, 0, used).ok());
  const HostState& h = *snap.host(HostId(0));
  Ctx fits(Task(0, ShapeBuilder().Cpu(3000).MemGi(2).Build()));
  Ctx mem(Task(0, ShapeBuilder().Cpu(1000).MemGi(4).Build()));
  EXPECT_FALSE(f.Check(fits.get(), h));
  auto r = f.Check(mem.get(), h);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dimension, Dim::kMemory);
  EXPECT_EQ(r->asked, 4 * kGi);
  EXPECT_EQ(r->available, 2 * kGi);
  EXPECT_EQ(f.Describe(mem.get(), *r), "insufficient memory");
  EXPECT_FALSE(f.CheckEmpty(mem.get(), h));  // fits when the host is empty
  Ctx huge(Task(0, ShapeBuilder().MemGi(64).Build()));
  auto e = f.CheckEmpty(huge.get(), h);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->available, 8 * kGi);
}

TEST(GpuDevicesFilter, WholeDevicesAndSharedFractions) {
  GpuDevicesFilter f;
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Gpus(2, "T4").Build()).ok());
  auto half = ShapeBuilder(9).Gpu(600).Build();
  ASSERT_TRUE(Put(snap, 0, 0, half, {GpuShare{0, 600}}).ok());
  const HostState& h = *snap.host(HostId(0));
  Ctx one(Task(0, ShapeBuilder().Gpu(1000).Build()));
  Ctx two(Task(0, ShapeBuilder().Gpu(2000).Build()));
  Ctx frac(Task(0, ShapeBuilder().Gpu(400).Build()));
  EXPECT_FALSE(f.Check(one.get(), h));
  auto r = f.Check(two.get(), h);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->asked, 2);
  EXPECT_EQ(r->available, 1);
  EXPECT_EQ(f.Describe(two.get(), *r), "fewer than 2 free GPUs");
  EXPECT_FALSE(f.Check(frac.get(), h));
  EXPECT_FALSE(f.CheckEmpty(two.get(), h));
  // Take the whole second device: only 0.4 is left, on device 0.
  ASSERT_TRUE(Put(snap, 0, 1, ShapeBuilder(9).Gpu(1000).Build(), {GpuShare{1, 1000}}).ok());
  const HostState& h2 = *snap.host(HostId(0));
  EXPECT_FALSE(f.Check(frac.get(), h2));
  Ctx frac5(Task(0, ShapeBuilder().Gpu(500).Build()));
  auto r5 = f.Check(frac5.get(), h2);
  ASSERT_TRUE(r5);
  EXPECT_EQ(r5->available, 400);
  EXPECT_EQ(f.Describe(frac5.get(), *r5), "no GPU with 0.5 free");
}

TEST(GpuDevicesFilter, HonoursModelsPerDevice) {
  GpuDevicesFilter f;
  HostSpec spec = HostBuilder(0).Build();
  spec.gpu_models = {"T4", "A100"};
  HostState h(spec);
  Ctx a100(Task(0, ShapeBuilder().Gpu(1000).Models({"A100"}).Build()));
  Ctx two_a100(Task(0, ShapeBuilder().Gpu(2000).Models({"A100"}).Build()));
  EXPECT_FALSE(f.Check(a100.get(), h));
  EXPECT_TRUE(f.Check(two_a100.get(), h));
  EXPECT_TRUE(f.CheckEmpty(two_a100.get(), h));
}

TEST(PortsFilter, NeedsEnoughFreePortsInRange) {
  PortsFilter f;
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Ports(31000, 31002).Build()).ok());
  auto two = ShapeBuilder(9).Ports(2).Build();
  ASSERT_TRUE(Put(snap, 0, 0, two, {}, {31000, 31002}).ok());
  const HostState& h = *snap.host(HostId(0));
  EXPECT_EQ(h.free_ports(), 1u);
  EXPECT_EQ(h.PickPorts(1), std::vector<uint32_t>{31001});
  Ctx one(Task(0, ShapeBuilder().Ports(1).Build()));
  Ctx three(Task(0, ShapeBuilder().Ports(3).Build()));
  Ctx four(Task(0, ShapeBuilder().Ports(4).Build()));
  EXPECT_FALSE(f.Check(one.get(), h));
  auto r = f.Check(three.get(), h);
  ASSERT_TRUE(r);
  EXPECT_EQ(f.Describe(three.get(), *r), "fewer than 3 free ports");
  EXPECT_FALSE(f.CheckEmpty(three.get(), h));
  EXPECT_TRUE(f.CheckEmpty(four.get(), h));
}

TEST(MaxPerHostFilter, PerJobAndPerTaskLabel) {
  MaxPerHostFilter f;
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Build()).ok());
  auto web = ShapeBuilder(1).JobLabel("app", "web").MaxPerHost(1).Build();
  auto web2 = ShapeBuilder(2).JobLabel("app", "web").MaxPerHost(2, "app").Build();
  auto db = ShapeBuilder(3).JobLabel("app", "db").MaxPerHost(1, "app").Build();
  Ctx c1(Task(1, web), &snap);
  Ctx c2(Task(1, web2), &snap);
  Ctx c3(Task(1, db), &snap);
  const HostState& h = *snap.host(HostId(0));
  EXPECT_FALSE(f.Check(c1.get(), h));
  ASSERT_TRUE(Put(snap, 0, 0, web).ok());
  auto r = f.Check(c1.get(), h);
  ASSERT_TRUE(r);
  EXPECT_EQ(f.Describe(c1.get(), *r), "max_per_host 1 of the job");
  // Job 2 counts every task labelled app=web (job 1's task included): 1 < 2 passes.
  EXPECT_FALSE(f.Check(c2.get(), h));
  ASSERT_TRUE(Put(snap, 0, 0, web2).ok());
  auto r2 = f.Check(c2.get(), h);
  ASSERT_TRUE(r2);
  EXPECT_EQ(f.Describe(c2.get(), *r2), "max_per_host 2 of app=web");
  EXPECT_FALSE(f.Check(c3.get(), h));  // app=db: none yet
  EXPECT_FALSE(f.CheckEmpty(c1.get(), h));
  ASSERT_TRUE(snap.Release(TaskId{JobId(1), 0}).ok());
  EXPECT_FALSE(f.Check(c1.get(), h));
}

}  // namespace
}  // namespace paceline::placement
