// Benchmarks of the resource manager's hot paths (run them from a Release build):
//   BM_Entitlement               entitlement over a tree of N pools (depth <= 5, 4 dimensions)
//   BM_AdmissionCycleAdmitAll    one RunCycle admitting 100,000 queued one-task gangs spread
//                                over 1,000 leaf pools
//   BM_AdmissionCycleSteady      one RunCycle over 100,000 queued gangs of which none can be
//                                admitted (half of them throttled by their job, so the scan
//                                visits them; the others wait behind a blocked head)
//   BM_AdmissionCycleBackfill/B  one RunCycle over 1,000 pools, each full of 400 admitted
//                                one-core gangs with limits, a 300-cpu gang waiting and 49
//                                150-cpu gangs with limits behind it that fit neither now nor
//                                beside it: B=0 strict head of line, B=1 backfill (the
//                                reservation's walk over the ends and the look behind it)
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "resmgr/entitlement.h"
#include "resmgr/resource_manager.h"
#include "resmgr/test_builders.h"

namespace paceline::resmgr {
namespace {

using testing::Cores;
using testing::kGi;

const Resources kCapacity =
    Resources::Of(Cores(500'000), 2'000'000 * kGi, 40'000'000 * kGi, Cores(4'000));

// Breadth-first: every pool gets `fanout` children until `pools` exist or depth 5 is reached.
// Each child reserves 1/(fanout+1) of its parent's reservation.
template <typename CreateFn>
void BuildTree(int pools, int fanout, std::mt19937_64& rng, CreateFn create) {
  struct Node {
    std::string path;
    Resources reservation;
    int depth;
  };
  std::vector<Node> frontier = {{"", kCapacity, 0}};
  int created = 0;
  for (size_t i = 0; i < frontier.size() && created < pools; ++i) {
    const Node parent = frontier[i];
    if (parent.depth == 5) break;
    for (int c = 0; c < fanout && created < pools; ++c) {
      PoolSpec spec;
      Resources res;
      for (int d = 0; d < kNumDims; ++d) res.at(d) = parent.reservation.at(d) / (fanout + 1);
      for (Dim d : kAllDims) {
        spec.dim(d) = DimSpec{res[d], kUnlimited, 0.5 + static_cast<double>(rng() % 4)};
      }
      const std::string path = absl::StrCat(parent.path, "/p", c);
      create(path, spec);
      frontier.push_back({path, res, parent.depth + 1});
      ++created;
    }
  }
}

void BM_Entitlement(benchmark::State& state) {
  std::mt19937_64 rng(42);
  PoolTree tree;
  BuildTree(static_cast<int>(state.range(0)), 7, rng,
            [&](const std::string& path, const PoolSpec& spec) {
              PL_CHECK(tree.Create(path, spec).ok()) << path;
            });
  std::vector<Resources> demand(tree.slot_count()), slack(tree.slot_count()),
      allocation(tree.slot_count());
  for (PoolId leaf : tree.layout().leaves) {
    for (int d = 0; d < kNumDims; ++d) {
      demand[leaf.value()].at(d) = static_cast<int64_t>(rng() % 2) *
                                   static_cast<int64_t>(rng() % 4) * kCapacity.at(d) /
                                   static_cast<int64_t>(tree.layout().leaves.size());
      slack[leaf.value()].at(d) = demand[leaf.value()].at(d) / 4;
      allocation[leaf.value()].at(d) = demand[leaf.value()].at(d) / 2;
    }
  }
  EntitlementCalculator calc;
  for (auto _ : state) {
    const Entitlements& e = calc.Compute(tree, {demand, allocation, slack, kCapacity, Resources()});
    benchmark::DoNotOptimize(e.entitlement.data());
  }
  state.counters["pools"] = static_cast<double>(tree.size());
  state.counters["leaves"] = static_cast<double>(tree.layout().leaves.size());
}
BENCHMARK(BM_Entitlement)->Arg(1'000)->Arg(10'000)->Unit(benchmark::kMillisecond);

// 1,000 leaf pools (10 x 100), each reserving 200 cpus and 200Gi.
std::vector<PoolId> MakePools(ResourceManager& rm) {
  std::vector<PoolId> leaves;
  PoolSpec top_spec, leaf_spec;
  top_spec.dim(Dim::kCpu).reservation = Cores(20'000);
  top_spec.dim(Dim::kMemory).reservation = 20'000 * kGi;
  leaf_spec.dim(Dim::kCpu).reservation = Cores(200);
  leaf_spec.dim(Dim::kMemory).reservation = 200 * kGi;
  for (int i = 0; i < 10; ++i) {
    const std::string top = absl::StrCat("/t", i);
    PL_CHECK(rm.CreatePool(top, top_spec).ok());
    for (int j = 0; j < 100; ++j) {
      absl::StatusOr<PoolId> id = rm.CreatePool(absl::StrCat(top, "/l", j), leaf_spec);
      PL_CHECK(id.ok());
      leaves.push_back(*id);
    }
  }
  return leaves;
}

constexpr int kGangs = 100'000;

void BM_AdmissionCycleAdmitAll(benchmark::State& state) {
  std::mt19937_64 rng(7);
  size_t admitted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto rm = std::make_unique<ResourceManager>();
    std::vector<PoolId> leaves = MakePools(*rm);
    const absl::Time now = absl::UnixEpoch();
    for (int i = 0; i < kGangs; ++i) {
      GangRequest g = testing::GangBuilder(i + 1, leaves[i % leaves.size()])
                          .Tasks(1, Resources::Of(Cores(1), kGi))
                          .Priority(static_cast<int32_t>(rng() % 3));
      if (i % 10 == 0) g.sla = SlaClass::kNonPreemptible;
      PL_CHECK(rm->Enqueue(g, now).ok());
    }
    state.ResumeTiming();
    CycleResult r = rm->RunCycle(CycleInput{kCapacity, Resources()}, now + absl::Seconds(1));
    admitted = r.admitted.size();
    state.PauseTiming();
    rm.reset();
    state.ResumeTiming();
  }
  PL_CHECK(admitted == kGangs) << admitted;
  state.counters["admitted"] = static_cast<double>(admitted);
}
BENCHMARK(BM_AdmissionCycleAdmitAll)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_AdmissionCycleSteady(benchmark::State& state) {
  ResourceManager rm;
  std::vector<PoolId> leaves = MakePools(rm);
  const absl::Time now = absl::UnixEpoch();
  // Per pool (entitled to about 500 cpus): one job at its max_running_instances (1 task admitted),
  // whose other 50 gangs are throttled; then a 600-cpu gang that does not fit, and 49 small
  // gangs behind it: 100 queued gangs per pool.
  uint64_t id = 1;
  for (size_t p = 0; p < leaves.size(); ++p) {
    const uint64_t job = p + 1;
    for (uint32_t i = 0; i < 51; ++i) {
      PL_CHECK(rm.Enqueue(testing::GangBuilder(id++, leaves[p])
                              .Job(job, i)
                              .Tasks(1, Resources::Of(Cores(1), kGi))
                              .MaxRunning(1)
                              .Priority(1),
                          now)
                   .ok());
    }
  }
  CycleResult first = rm.RunCycle(CycleInput{kCapacity, Resources()}, now);
  PL_CHECK(first.admitted.size() == leaves.size()) << first.admitted.size();
  for (size_t p = 0; p < leaves.size(); ++p) {
    PL_CHECK(rm.Enqueue(testing::GangBuilder(id++, leaves[p])
                            .Job(1'000'000 + p)
                            .Tasks(1, Resources::Of(Cores(600), kGi)),
                        now)
                 .ok());
    for (int i = 0; i < 49; ++i) {
      const uint64_t gang = id++;
      PL_CHECK(rm.Enqueue(testing::GangBuilder(gang, leaves[p])
                              .Job(2'000'000 + gang)
                              .Tasks(1, Resources::Of(Cores(1), kGi)),
                          now)
                   .ok());
    }
  }
  absl::Time t = now;
  size_t admitted = 0;
  for (auto _ : state) {
    t += absl::Seconds(1);
    CycleResult r = rm.RunCycle(CycleInput{kCapacity, Resources()}, t);
    admitted += r.admitted.size();
  }
  PL_CHECK(admitted == 0) << admitted;
  state.counters["queued"] = static_cast<double>(id - 1 - leaves.size());
}
BENCHMARK(BM_AdmissionCycleSteady)->Unit(benchmark::kMillisecond);

void BM_AdmissionCycleBackfill(benchmark::State& state) {
  ResourceManagerConfig config;
  config.backfill = state.range(0) != 0;
  ResourceManager rm(config);
  std::vector<PoolId> leaves = MakePools(rm);
  const absl::Time now = absl::UnixEpoch();
  std::mt19937_64 rng(11);
  uint64_t id = 1;
  for (size_t p = 0; p < leaves.size(); ++p) {
    for (int i = 0; i < 400; ++i) {
      const absl::Duration limit = absl::Minutes(10 + static_cast<int64_t>(rng() % 110));
      PL_CHECK(rm.Enqueue(testing::GangBuilder(id++, leaves[p])
                              .Tasks(1, Resources::Of(Cores(1), kGi))
                              .Limit(limit),
                          now)
                   .ok());
    }
  }
  CycleResult first = rm.RunCycle(CycleInput{kCapacity, Resources()}, now);
  PL_CHECK(first.admitted.size() == 400 * leaves.size()) << first.admitted.size();
  for (size_t p = 0; p < leaves.size(); ++p) {
    PL_CHECK(rm.Enqueue(testing::GangBuilder(id++, leaves[p])
                            .Tasks(1, Resources::Of(Cores(300), 100 * kGi))
                            .Limit(absl::Hours(1)),
                        now)
                 .ok());
    for (int i = 0; i < 49; ++i) {
      PL_CHECK(rm.Enqueue(testing::GangBuilder(id++, leaves[p])
                              .Tasks(1, Resources::Of(Cores(150), kGi))
                              .Limit(absl::Hours(3)),
                          now)
                   .ok());
    }
  }
  absl::Time t = now;
  size_t admitted = 0;
  for (auto _ : state) {
    t += absl::Milliseconds(1);
    CycleResult r = rm.RunCycle(CycleInput{kCapacity, Resources()}, t);
    admitted += r.admitted.size();
  }
  PL_CHECK(admitted == 0) << admitted;
  absl::StatusOr<std::vector<QueuedGangView>> q = rm.Queue(leaves[0]);
  PL_CHECK(q.ok() && !q->empty());
  PL_CHECK(((*q)[0].reason.code == WaitCode::kReserved) == config.backfill) << (*q)[0].why;
  state.counters["queued"] = static_cast<double>(50 * leaves.size());
}
BENCHMARK(BM_AdmissionCycleBackfill)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace paceline::resmgr
