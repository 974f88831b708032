// The FGD paper's protocol pieces against small hand-computed cases: typical pods and the
// fragmentation measure, every policy's score, device choice, the arrival sequence, the tie
// order and the measure (docs/sim.md, "The FGD paper's protocol").

#include <algorithm>
#include <set>

#include "gtest/gtest.h"
#include "sim/paper/paper_fill.h"
#include "sim/paper/paper_policies.h"
#include "sim/paper/paper_protocol.h"

namespace paceline::sim::paper {
namespace {

PaperPod Pod(int64_t cpu, int gpus, int64_t milli) {
  PaperPod p;
  p.cpu = p.cpu_score = cpu;
  p.memory_mib = 1024;
  p.gpus = gpus;
  p.gpu_milli = gpus > 0 ? milli : 0;
  return p;
}

PaperNode Node(int64_t cpu, std::vector<int64_t> gpu_left, std::string model = "T4") {
  PaperNode n;
  n.name = "n";
  n.model = model;
  n.cpu_capacity = n.cpu_left = cpu;
  n.memory_left_mib = 1 << 20;
  n.gpu_left = std::move(gpu_left);
  return n;
}

// One typical pod: a half GPU with 1 core.
TypicalPods HalfGpuWorkload() { return TypicalPods::From({Pod(1000, 1, 500)}); }

TEST(PaperPodTest, ReadsTheTraceAsTheArtifactDoes) {
  AlibabaTask t;
  t.cpu_milli = 0;
  t.memory_mib = 100;
  t.num_gpu = 1;
  t.gpu_milli = 460;
  PaperPod p = PaperPod::From(t);
  EXPECT_EQ(p.cpu, 0);
  EXPECT_EQ(p.cpu_score, kDefaultMilliCpu);  // Kubernetes' non-zero request
  EXPECT_TRUE(p.shares_gpu());
  EXPECT_EQ(p.affinity(), "share-gpu");
  t.num_gpu = 4;
  t.gpu_milli = 1000;
  EXPECT_EQ(PaperPod::From(t).affinity(), "4-gpu");
  EXPECT_EQ(PaperPod::From(t).total_gpu(), 4000);
  t.gpu_milli = 0;  // GPUs asked with no milli-GPUs: no GPU at all
  EXPECT_EQ(PaperPod::From(t).gpus, 0);
  EXPECT_EQ(PaperPod::From(t).affinity(), "no-gpu");
}

TEST(PaperNodeTest, FitsChecksCpuMemoryModelAndDevices) {
  PaperNode n = Node(8000, {1000, 300});
  EXPECT_TRUE(n.Fits(Pod(8000, 1, 1000)));
  EXPECT_FALSE(n.Fits(Pod(8001, 0, 0)));
  EXPECT_FALSE(n.Fits(Pod(1000, 2, 1000)));  // one idle device only
  EXPECT_TRUE(n.Fits(Pod(1000, 1, 300)));
  PaperPod v100 = Pod(1000, 1, 1000);
  v100.models = {"V100M16", "A10"};
  EXPECT_FALSE(n.Fits(v100));
  v100.models.push_back("T4");
  EXPECT_TRUE(n.Fits(v100));
  PaperPod big = Pod(1000, 0, 0);
  big.memory_mib = (1 << 20) + 1;
  EXPECT_FALSE(n.Fits(big));
  n.Bind(Pod(2000, 1, 300), std::vector<int>{1});
  EXPECT_EQ(n.gpu_left, (std::vector<int64_t>{1000, 0}));
  EXPECT_EQ(n.cpu_left, 6000);
  EXPECT_EQ(n.affinity.at("share-gpu"), 1);
}

TEST(TypicalPodsTest, TakesTheMostFrequentUntil95Percent) {
  std::vector<PaperPod> trace(19, Pod(1000, 1, 1000));
  trace.push_back(Pod(2000, 0, 0));
  TypicalPods t = TypicalPods::From(trace);  // 19 of 20 = 95 %: the rare type is left out
  ASSERT_EQ(t.pods().size(), 1u);
  EXPECT_DOUBLE_EQ(t.pods()[0].weight, 1.0);
  trace[0] = Pod(2000, 0, 0);  // 18 of 20 = 90 %: both, renormalised
  t = TypicalPods::From(trace);
  ASSERT_EQ(t.pods().size(), 2u);
  EXPECT_DOUBLE_EQ(t.pods()[0].weight, 0.9);
  EXPECT_DOUBLE_EQ(t.pods()[1].weight, 0.1);
}

TEST(TypicalPodsTest, FragmentationIsTheFreeGpuEachTypicalPodCannotUse) {
  TypicalPods t = TypicalPods::From({Pod(1000, 1, 500), Pod(1000, 0, 0)});  // half each
  // The half-GPU pod cannot use the 300 left on device 1; the CPU-only pod counts all 1300.
  EXPECT_DOUBLE_EQ(t.NodeFragmentation(Node(8000, {1000, 300})), 0.5 * 300 + 0.5 * 1300);
  // Without the cpu the half-GPU pod asks, it can use nothing either.
  EXPECT_DOUBLE_EQ(t.NodeFragmentation(Node(999, {1000, 300})), 1300);
  // A model it does not accept.
  PaperPod a10 = Pod(1000, 1, 500);
  a10.models = {"A10"};
  EXPECT_DOUBLE_EQ(TypicalPods::From({a10}).NodeFragmentation(Node(8000, {1000, 300})), 1300);
  EXPECT_DOUBLE_EQ(t.NodeFragmentation(Node(8000, {0, 0})), 0);
}

TEST(PaperPoliciesTest, ScoresAreTheArtifactsIntegers) {
  TypicalPods typical = HalfGpuWorkload();
  PaperNode idle = Node(64000, {1000, 1000});
  PaperPod one = Pod(8000, 1, 1000);
  // (1 - ((56000 / 128000) * 0.5 + (1000 / 8000) * 0.5)) * 100 = 71.875
  EXPECT_EQ(Score(Policy::kBestFit, idle, 0, one, typical), 71);
  // 100 * (1 - (0.5 * 0.0625 + 0.25 * 0.125) / 2) = 96.875
  EXPECT_EQ(Score(Policy::kDotProduct, idle, 0, one, typical), 96);
  // An idle node: max(33 - 2 idle devices, 2).
  EXPECT_EQ(Score(Policy::kPacking, idle, 0, one, typical), 31);
  PaperNode used = Node(64000, {500, 1000});
  EXPECT_EQ(Score(Policy::kPacking, used, 0, Pod(1000, 1, 300), typical), 95);  // 100 - 50/10
  EXPECT_EQ(Score(Policy::kPacking, used, 0, one, typical), 49);  // 50 - 1 idle device used
  EXPECT_EQ(Score(Policy::kPacking, used, 0, Pod(1000, 0, 0), typical), 0);
  // Clustering: 25 * (8000 - free) / 8000 plus the tier of the kinds the node holds.
  EXPECT_EQ(Score(Policy::kClustering, idle, 0, one, typical), 18 + 25);
  PaperNode holds = idle;
  holds.Bind(one, std::vector<int>{0});
  EXPECT_EQ(Score(Policy::kClustering, holds, 0, one, typical), 21 + 75);
  EXPECT_EQ(Score(Policy::kClustering, holds, 0, Pod(1000, 1, 500), typical), 21);
  holds.Bind(Pod(1000, 1, 500), std::vector<int>{1});
  EXPECT_EQ(Score(Policy::kClustering, holds, 0, one, typical), 23 + 50);
  EXPECT_EQ(Score(Policy::kClustering, holds, 0, Pod(1000, 0, 0), typical), 0);
  // FGD: node [1000, 300, 600, 1000], frag 300 for the half-GPU workload. A quarter GPU on
  // device 1 leaves 50 (frag 50: sigmoid(0.25) = 0.562), on device 0 or 3 nothing changes
  // (50), on device 2 leaves 350 (frag 650: sigmoid(-0.35) = 0.413).
  PaperNode four = Node(64000, {1000, 300, 600, 1000});
  double frag = typical.NodeFragmentation(four);
  ASSERT_DOUBLE_EQ(frag, 300);
  EXPECT_EQ(Score(Policy::kFgd, four, frag, Pod(1000, 1, 250), typical), 56);
  // A whole GPU takes an idle device: nothing changes for the workload.
  EXPECT_EQ(Score(Policy::kFgd, four, frag, one, typical), 50);
}

TEST(PaperPoliciesTest, DeviceChoice) {
  TypicalPods typical = HalfGpuWorkload();
  SeededRandom random(1);
  PaperNode n = Node(64000, {1000, 300, 600, 1000});
  double frag = typical.NodeFragmentation(n);
  auto choose = [&](Policy p, const PaperPod& pod) {
    return ChooseDevices(p, n, frag, pod, typical, random);
  };
  // Whole GPUs: the lowest-numbered idle devices, whatever the policy.
  for (Policy p : {Policy::kBestFit, Policy::kFgd, Policy::kRandom}) {
    EXPECT_EQ(choose(p, Pod(1000, 2, 1000)), (std::vector<int>{0, 3}));
  }
  // A fraction: the least free device that fits...
  EXPECT_EQ(choose(Policy::kBestFit, Pod(1000, 1, 250)), std::vector<int>{1});
  EXPECT_EQ(choose(Policy::kPacking, Pod(1000, 1, 500)), std::vector<int>{2});
  EXPECT_EQ(choose(Policy::kDotProduct, Pod(1000, 1, 700)), std::vector<int>{0});
  // ...FGD's best device (see the scores above)...
  EXPECT_EQ(choose(Policy::kFgd, Pod(1000, 1, 250)), std::vector<int>{1});
  // ...or, for paper-random, any device with room, each of them sometimes.
  std::set<int> seen;
  for (int i = 0; i < 200; ++i) seen.insert(choose(Policy::kRandom, Pod(1000, 1, 500))[0]);
  EXPECT_EQ(seen, (std::set<int>{0, 2, 3}));
  EXPECT_TRUE(choose(Policy::kFgd, Pod(1000, 0, 0)).empty());
}

TEST(PaperProtocolTest, EqualScoresGoToTheLowestRank) {
  std::vector<int64_t> scores = {40, 70, 70, -1, 70};
  auto score = [&](size_t i) { return scores[i]; };
  EXPECT_EQ(BestNode({4, 3, 2, 0, 1}, score), 4u);  // rank 1 beats ranks 3 and 2
  EXPECT_EQ(BestNode({0, 3, 1, 2, 4}, score), 2u);
  scores[0] = 71;
  EXPECT_EQ(BestNode({4, 3, 2, 0, 1}, score), 0u);  // a higher score beats any rank
  EXPECT_EQ(BestNode({0, 1}, [](size_t) { return -1; }), std::nullopt);
}

TEST(PaperProtocolTest, ArrivalsAreTheShuffledTraceThenDrawsUntilTheTarget) {
  std::vector<PaperPod> by_name = {Pod(1000, 1, 1000), Pod(1000, 1, 1000), Pod(1000, 0, 0)};
  SeededRandom random(42);
  // 2 GPUs of 2 GPUs asked; the target is 4 GPUs: draws go on while a draw fits.
  Arrivals a = BuildArrivals(by_name, 2000, 2.0, random);
  ASSERT_GE(a.order.size(), 5u);
  EXPECT_EQ(a.shuffled, 3u);
  std::vector<size_t> first(a.order.begin(), a.order.begin() + 3);
  std::sort(first.begin(), first.end());
  EXPECT_EQ(first, (std::vector<size_t>{0, 1, 2}));  // every task once, in some order
  int64_t gpu = 0;
  for (size_t i : a.order) gpu += by_name[i].total_gpu();
  EXPECT_EQ(gpu, 4000);
  // Same seed, same sequence.
  SeededRandom again(42);
  EXPECT_EQ(BuildArrivals(by_name, 2000, 2.0, again).order, a.order);
}

TEST(PaperProtocolTest, TheStopRuleComparesThePerDeviceAsk) {
  // One 2-GPU task, 2 GPUs of capacity, target 150 % (3 GPUs). After the trace (2 GPUs), a draw
  // asks 1000 per device: 2000 + 1000 is not above 3000, so it is added (4 GPUs, 200 %); the
  // next is above and drawing stops.
  std::vector<PaperPod> by_name = {Pod(1000, 2, 1000)};
  SeededRandom random(7);
  Arrivals a = BuildArrivals(by_name, 2000, 1.5, random);
  EXPECT_EQ(a.order, (std::vector<size_t>{0, 0}));
}

TEST(PaperProtocolTest, ATraceAboveTheTargetLosesRandomTasks) {
  std::vector<PaperPod> by_name(5, Pod(1000, 1, 1000));
  SeededRandom random(3);
  Arrivals a = BuildArrivals(by_name, 2000, 1.0, random);  // 5 GPUs asked, 2 wanted
  EXPECT_EQ(a.order.size(), 2u);
  EXPECT_EQ(a.shuffled, 2u);
}

TEST(PaperProtocolTest, NodeRanksAreASeededPermutation) {
  SeededRandom r1(9), r2(9), r3(10);
  std::vector<uint32_t> a = NodeRanks(50, r1);
  EXPECT_EQ(a, NodeRanks(50, r2));
  EXPECT_NE(a, NodeRanks(50, r3));
  std::vector<uint32_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);
}

TEST(PaperProtocolTest, TheCurveAveragesTheArrivalsThatRoundToEachPercent) {
  ArrivalCurve c(1);       // one GPU: 10 milli-GPUs are 1 %
  c.Record(10, 10, 0, 0);  // 1.0 % arrived, 1 % allocated
  c.Record(15, 10, 0, 1);  // 1.5 rounds to 2
  c.Record(25, 20, 5, 1);  // 2.5 rounds to 2 (half to even), 2 % allocated
  std::vector<FillPoint> p = c.Points(4);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_DOUBLE_EQ(p[0].unallocated_pct, 99);
  EXPECT_DOUBLE_EQ(p[1].unallocated_pct, 98.5);  // mean of 1 % and 2 %
  EXPECT_DOUBLE_EQ(p[1].fragmentation_pct, 0.25);
  EXPECT_EQ(p[1].failed, 1);
  EXPECT_DOUBLE_EQ(p[2].unallocated_pct, 98.5);  // none at 3: those at 2..4
  EXPECT_DOUBLE_EQ(p[3].unallocated_pct, 98.5);  // none at 3..5: the previous point
  EXPECT_DOUBLE_EQ(p[3].arrived_pct, 4);
}

AlibabaNode TraceNode(std::string name, int gpus) {
  AlibabaNode n;
  n.name = std::move(name);
  n.cpu_milli = 32000;
  n.memory_mib = 262144;
  n.gpus = gpus;
  n.model = "T4";
  return n;
}

AlibabaTask TraceTask(std::string name, int gpus, int64_t milli) {
  AlibabaTask t;
  t.name = std::move(name);
  t.cpu_milli = 4000;
  t.memory_mib = 8192;
  t.num_gpu = gpus;
  t.gpu_milli = milli;
  return t;
}

TEST(PaperFillTest, EveryProfileRunsDeterministicallyUnderTheProtocol) {
  std::vector<AlibabaNode> nodes = {TraceNode("b", 4), TraceNode("a", 2), TraceNode("c", 8)};
  std::vector<AlibabaTask> tasks = {TraceTask("t3", 1, 1000), TraceTask("t1", 1, 500),
                                    TraceTask("t2", 2, 1000), TraceTask("t0", 0, 0),
                                    TraceTask("t4", 1, 300)};
  absl::StatusOr<PaperTrace> t = PaperTrace::Build(nodes, tasks);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->nodes[0].name, "a");  // sorted by name
  EXPECT_EQ(t->pods[0].gpus, 0);     // t0
  EXPECT_EQ(t->gpus, 14);
  for (const std::string& p : ProtocolProfiles()) {
    FillRun a = RunProtocolOnce(*t, p, 5, 130);
    FillRun b = RunProtocolOnce(*t, p, 5, 130);
    ASSERT_EQ(a.points.size(), 130u) << p;
    EXPECT_GT(a.failed, 0) << p;  // 130 % cannot all fit
    EXPECT_LE(a.allocated_pct, 100.0) << p;
    for (size_t i = 0; i < a.points.size(); ++i) {
      EXPECT_EQ(a.points[i].unallocated_pct, b.points[i].unallocated_pct) << p;
      EXPECT_GE(a.points[i].unallocated_pct, 0) << p;
    }
  }
  EXPECT_FALSE(PaperTrace::Build({}, tasks).ok());
  EXPECT_FALSE(PaperTrace::Build(nodes, {}).ok());
}

}  // namespace
}  // namespace paceline::sim::paper
