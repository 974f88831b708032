#include "placement/cluster_snapshot.h"

#include <gtest/gtest.h>

#include "placement/test_util.h"

namespace paceline::placement {
namespace {

using testing::HostBuilder;
using testing::kGi;
using testing::Put;
using testing::ShapeBuilder;

TEST(ClusterSnapshot, AddHostValidates) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(3).Gpus(2).Build()).ok());
  EXPECT_EQ(snap.num_hosts(), 1u);
  EXPECT_EQ(snap.slots(), 4u);
  EXPECT_EQ(snap.host(HostId(3))->capacity().gpu_milli(), 2000);
  EXPECT_EQ(snap.host(HostId(0)), nullptr);
  EXPECT_EQ(snap.AddHost(HostBuilder(3).Build()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(snap.AddHost(HostBuilder(4).Label("a", "1").Label("a", "2").Build()).ok());
  HostSpec bad_gpu = HostBuilder(5).Gpus(2).Build();
  bad_gpu.capacity[Dim::kGpu] = 3000;
  EXPECT_FALSE(snap.AddHost(bad_gpu).ok());
  EXPECT_FALSE(snap.AddHost(HostBuilder(6).Ports(100, 50).Build()).ok());
  HostSpec negative = HostBuilder(7).Build();
  negative.capacity[Dim::kCpu] = -1;
  EXPECT_FALSE(snap.AddHost(negative).ok());
  EXPECT_EQ(snap.num_hosts(), 1u);
}

TEST(ClusterSnapshot, CommitVerifiesAndReleaseFrees) {
  ClusterSnapshot snap;
  ASSERT_TRUE(
      snap.AddHost(HostBuilder(0).Cpu(4000).MemGi(8).Gpus(2).Ports(31000, 31001).Build()).ok());
  auto s = ShapeBuilder(1).Cpu(2000).MemGi(4).Gpu(500).Ports(1).Build();
  ASSERT_TRUE(Put(snap, 0, 0, s, {GpuShare{0, 500}}, {31000}).ok());
  EXPECT_EQ(Put(snap, 0, 0, s, {GpuShare{0, 500}}, {31001}).code(),
            absl::StatusCode::kAlreadyExists);
  // Port taken, device over-committed, shares not matching the ask, missing host.
  EXPECT_FALSE(Put(snap, 0, 1, s, {GpuShare{0, 500}}, {31000}).ok());
  auto big = ShapeBuilder(1).Cpu(1000).MemGi(1).Gpu(600).Ports(1).Build();
  EXPECT_EQ(Put(snap, 0, 2, big, {GpuShare{0, 600}}, {31001}).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(Put(snap, 0, 3, s, {GpuShare{1, 400}}, {31001}).ok());
  EXPECT_EQ(Put(snap, 9, 4, s, {GpuShare{1, 500}}, {31001}).code(), absl::StatusCode::kNotFound);
  auto whole = ShapeBuilder(1).Cpu(1000).MemGi(1).Gpu(1000).Build();
  ASSERT_TRUE(Put(snap, 0, 5, whole, {GpuShare{1, 1000}}, {}).ok());
  EXPECT_EQ(Put(snap, 0, 6, s, {GpuShare{1, 500}}, {31001}).code(),
            absl::StatusCode::kResourceExhausted);  // cpu is full now (2 + 1 + 2 > 4)
  const HostState& h = *snap.host(HostId(0));
  EXPECT_EQ(h.allocated(), Resources::Of(3000, 5 * kGi, 0, 1500));
  EXPECT_EQ(h.gpus()[0].milli_allocated, 500);
  EXPECT_EQ(h.gpus()[1].milli_allocated, 1000);
  EXPECT_EQ(h.tasks().size(), 2u);
  EXPECT_TRUE(snap.Validate().ok()) << snap.Validate();
  ASSERT_TRUE(snap.Release(TaskId{JobId(1), 0}).ok());
  EXPECT_EQ(snap.Release(TaskId{JobId(1), 0}).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(snap.host(HostId(0))->allocated(), Resources::Of(1000, 1 * kGi, 0, 1000));
  EXPECT_FALSE(snap.host(HostId(0))->PortUsed(31000));
  EXPECT_TRUE(snap.Validate().ok()) << snap.Validate();
}

TEST(ClusterSnapshot, CommitRefusesHostsThatAreNotUp) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Build()).ok());
  ASSERT_TRUE(snap.SetHostStatus(HostId(0), HostStatus::kDraining).ok());
  EXPECT_EQ(Put(snap, 0, 0, ShapeBuilder().Build()).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ClusterSnapshot, FailHostReleasesItsTasksAndLeavesTheIndex) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Build()).ok());
  auto s = ShapeBuilder().Build();
  ASSERT_TRUE(Put(snap, 0, 0, s).ok());
  ASSERT_TRUE(Put(snap, 0, 1, s).ok());
  ASSERT_TRUE(Put(snap, 1, 2, s).ok());
  EXPECT_EQ(snap.free_index().size(), 2u);
  auto released = snap.FailHost(HostId(0));
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(released->size(), 2u);
  EXPECT_EQ(snap.num_tasks(), 1u);
  EXPECT_EQ(snap.host(HostId(0))->status(), HostStatus::kLost);
  EXPECT_TRUE(snap.host(HostId(0))->allocated().IsZero());
  EXPECT_EQ(snap.free_index().size(), 1u);
  EXPECT_FALSE(snap.FailHost(HostId(1), HostStatus::kUp).ok());
  ASSERT_TRUE(snap.SetHostStatus(HostId(0), HostStatus::kUp).ok());
  EXPECT_EQ(snap.free_index().size(), 2u);
  auto removed = snap.RemoveHost(HostId(1));
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->size(), 1u);
  EXPECT_EQ(snap.num_hosts(), 1u);
  EXPECT_EQ(snap.num_tasks(), 0u);
  EXPECT_TRUE(snap.Validate().ok()) << snap.Validate();
}

TEST(ClusterSnapshot, LabelIndexAndStaticChangeLog) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Label("zone", "a").Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Label("zone", "b").Build()).ok());
  ASSERT_NE(snap.HostsWithLabel("zone", "a"), nullptr);
  EXPECT_EQ(*snap.HostsWithLabel("zone", "a"), std::vector<uint32_t>{0});
  EXPECT_EQ(snap.HostsWithLabel("rack", "1"), nullptr);
  uint64_t seq = snap.static_seq();
  ASSERT_TRUE(snap.SetHostLabels(HostId(1), {{"zone", "a"}}).ok());
  EXPECT_EQ(*snap.HostsWithLabel("zone", "a"), (std::vector<uint32_t>{0, 1}));
  EXPECT_TRUE(snap.HostsWithLabel("zone", "b")->empty());
  auto changes = snap.StaticChangesSince(seq);
  ASSERT_TRUE(changes.has_value());
  ASSERT_EQ(changes->size(), 1u);
  EXPECT_EQ((*changes)[0], 1u);
  EXPECT_FALSE(snap.StaticChangesSince(seq + 5).has_value());
}

TEST(ClusterSnapshot, CopiesAreIndependentAndGetANewIdentity) {
  ClusterSnapshot a;
  ASSERT_TRUE(a.AddHost(HostBuilder(0).Build()).ok());
  ClusterSnapshot b = a;
  EXPECT_NE(a.identity().lock(), b.identity().lock());
  ASSERT_TRUE(Put(b, 0, 0, ShapeBuilder().Build()).ok());
  EXPECT_EQ(a.num_tasks(), 0u);
  EXPECT_EQ(b.num_tasks(), 1u);
  // Everything is copied: host holds, GPU health, images, the devices per model.
  ASSERT_TRUE(a.AddHost(HostBuilder(1).Gpus(2, "A100").Build()).ok());
  ASSERT_TRUE(a.HoldHost(HostId(1), 7, absl::InfiniteFuture()).ok());
  ASSERT_TRUE(a.SetGpuHealth(HostId(1), 0, false).ok());
  ASSERT_TRUE(a.SetHostImages(HostId(1), {{"r.io/x:1", 5}}).ok());
  ClusterSnapshot c;
  c = a;
  EXPECT_NE(a.identity().lock(), c.identity().lock());
  EXPECT_TRUE(c.HoldsHostsFor(7));
  EXPECT_EQ(c.WithheldGpuMilli(), 1000);
  EXPECT_EQ(c.ImageSize("r.io/x:1"), 5);
  EXPECT_EQ(c.gpu_devices_by_model().at("A100"), 2);
  EXPECT_TRUE(c.Validate().ok()) << c.Validate();
}

TEST(ClusterSnapshot, CountsGpuDevicesPerModel) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Gpus(2, "T4").Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Gpus(8, "A100").Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(2).Gpus(4, "T4").Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(3).Build()).ok());
  using Devices = absl::flat_hash_map<std::string, int64_t>;
  EXPECT_EQ(snap.gpu_devices_by_model(), (Devices{{"T4", 6}, {"A100", 8}}));
  const uint64_t seq = snap.static_seq();
  ASSERT_TRUE(snap.RemoveHost(HostId(1)).ok());
  EXPECT_GT(snap.static_seq(), seq);
  EXPECT_EQ(snap.gpu_devices_by_model(), (Devices{{"T4", 6}}));
  // Status and health change nothing: it is the supply, not what is free now.
  ASSERT_TRUE(snap.SetHostStatus(HostId(0), HostStatus::kDown).ok());
  ASSERT_TRUE(snap.SetGpuHealth(HostId(2), 1, false).ok());
  EXPECT_EQ(snap.gpu_devices_by_model(), (Devices{{"T4", 6}}));
}

TEST(ClusterSnapshot, InternedLabelPairsAreStable) {
  ClusterSnapshot snap;
  uint32_t a = snap.InternLabelPair("app", "web");
  uint32_t b = snap.InternLabelPair("app", "db");
  EXPECT_NE(a, b);
  EXPECT_EQ(snap.InternLabelPair("app", "web"), a);
  // "ap"+"pweb" must not collide with "app"+"web".
  EXPECT_NE(snap.InternLabelPair("ap", "pweb"), a);
}

TEST(ClusterSnapshot, AnUnhealthyGpuKeepsItsSharesAndTakesNoNewOne) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(8000).MemGi(8).Gpus(2).Build()).ok());
  auto half = ShapeBuilder(1).Cpu(1000).MemGi(1).Gpu(500).Build();
  ASSERT_TRUE(Put(snap, 0, 0, half, {GpuShare{0, 500}}).ok());
  ASSERT_TRUE(snap.SetGpuHealth(HostId(0), 0, false).ok());
  const HostState& h = *snap.host(HostId(0));
  EXPECT_EQ(h.gpus()[0].milli_allocated, 500) << "its task keeps its share";
  EXPECT_EQ(h.gpus()[0].free_milli(), 0);
  EXPECT_EQ(h.free().gpu_milli(), 1000) << "only the healthy device is free";
  EXPECT_EQ(h.full_free_gpus(), 1);
  EXPECT_EQ(h.max_partial_free_gpu(), 0);
  EXPECT_EQ(Put(snap, 0, 1, half, {GpuShare{0, 500}}).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(Put(snap, 0, 2, half, {GpuShare{1, 500}}).ok());
  EXPECT_EQ(h.free().gpu_milli(), 500);
  // Its task ends: the device stays withheld until it is healthy again.
  ASSERT_TRUE(snap.Release(TaskId{JobId(1), 0}).ok());
  EXPECT_EQ(h.free().gpu_milli(), 500);
  EXPECT_EQ(h.full_free_gpus(), 0);
  ASSERT_TRUE(snap.SetGpuHealth(HostId(0), 0, true).ok());
  EXPECT_EQ(h.free().gpu_milli(), 1500);
  EXPECT_EQ(h.full_free_gpus(), 1);
  EXPECT_TRUE(snap.Validate().ok()) << snap.Validate();
  EXPECT_EQ(snap.SetGpuHealth(HostId(0), 2, false).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(snap.SetGpuHealth(HostId(5), 0, false).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace paceline::placement
