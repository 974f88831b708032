// Placement benchmarks on an in-memory cluster of 50,000 hosts (see bench/results/placement-*).
//
// The cluster: 50,000 hosts of 32 cores / 128Gi / 1Ti, labelled zone=a..e and rack=r0..r499;
// each host starts with a random filler task (0..75% of its cpu and memory), so free
// capacity is spread over the whole range like in a busy cluster. Every benchmark measures
// Place() plus ApplyPlan() (propose + commit) and releases the placed tasks outside the timed
// region, so each iteration sees the same cluster.
//
//   BM_HomogeneousBatch/<profile>   1,000 identical batch tasks (1 core, 2Gi) per Place()
//   BM_ConstrainedBatch/<profile>   100 jobs x 10 instances per Place(); each job: zone in two
//                                   of five zones, rack not_in one rack, max_per_host 1
//   BM_ConstrainedGpuBatch          the same on 50,000 hosts with 8 GPUs each, half of the jobs
//                                   asking 1 GPU (a GPU workload: 256 candidates scored)
//   BM_TaskLabelAntiAffinity        as above with max_per_host 2 counted over a job label
//   BM_Gang10kPlaced                one gang of 10,000 tasks that fits
//   BM_Gang10kRejected              one gang of 10,000 that fails on its last member
//                                   (max_per_host 1 on 9,999 eligible hosts): places 9,999,
//                                   explains, rolls back
//   BM_RevocableOnSlack             1,000 revocable tasks (1 core, 2Gi) on a cluster where regular
//                                   work has taken all the unallocated capacity and each host's
//                                   filler task leaves a random part of what it holds idle (the
//                                   slack): the tasks fit only thanks to the slack
//   BM_ExplainNeverFits             a request bigger than every host: one full explanation
//   BM_FragmentationOfHost/0|1      GpuWorkload::Fragmentation (0) and Stranding (1) on an
//                                   8-GPU host, 25 task types
#include <benchmark/benchmark.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "placement/engine.h"

namespace paceline::placement {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;
constexpr uint32_t kHosts = 50'000;
const char* const kZones[] = {"a", "b", "c", "d", "e"};

// The cluster above; with `gpus`, every host also has 8 GPUs (the filler takes none): T4s, or
// with `two_models` A100s on every fourth host.
ClusterSnapshot* MakeCluster(bool gpus, bool two_models = false) {
  auto* s = new ClusterSnapshot();
  std::mt19937_64 rng(7);
  for (uint32_t i = 0; i < kHosts; ++i) {
    HostSpec h;
    h.id = HostId(i);
    h.name = absl::StrCat("host-", i);
    h.capacity = Resources::Of(32'000, 128 * kGi, 1024 * kGi);
    if (gpus) {
      h.gpu_models.assign(8, two_models && i % 4 == 0 ? "A100" : "T4");
      h.capacity[Dim::kGpu] = 8000;
    }
    h.labels = {{"zone", kZones[i % 5]}, {"rack", absl::StrCat("r", i / 100)}};
    h.ports = {PortRange{31000, 32000}};
    PL_CHECK(s->AddHost(std::move(h)).ok());
  }
  // Filler tasks: job 1, one per host, 0..75% of cpu and memory.
  for (uint32_t i = 0; i < kHosts; ++i) {
    int64_t frac = static_cast<int64_t>(rng() % 76);
    TaskShape f;
    f.job = JobId(1);
    f.resources = Resources::Of(32'000 * frac / 100, 128 * kGi * frac / 100);
    Assignment a;
    a.task = TaskId{JobId(1), i};
    a.host = HostId(i);
    a.shape = *MakeTaskShape(std::move(f));
    PL_CHECK(s->Commit(a).ok());
  }
  return s;
}

const ClusterSnapshot& BaseCluster() {
  static const ClusterSnapshot* snap = MakeCluster(false);
  return *snap;
}

const ClusterSnapshot& GpuCluster() {
  static const ClusterSnapshot* snap = MakeCluster(true);
  return *snap;
}

const ClusterSnapshot& TwoModelCluster() {
  static const ClusterSnapshot* snap = MakeCluster(true, true);
  return *snap;
}

// A profile name, or policy weights (ProfileSpecFromText).
std::unique_ptr<PlacementEngine> MakeEngine(const std::string& profile) {
  absl::StatusOr<ProfileSpec> spec = ProfileSpecFromText(profile);
  PL_CHECK(spec.ok()) << spec.status();
  EngineConfig c;
  c.custom_profile = *spec;
  auto e = PlacementEngine::Create(c);
  PL_CHECK(e.ok()) << e.status();
  return std::move(*e);
}

// Place + commit `requests` each iteration; release what was placed, untimed.
void Run(benchmark::State& state, PlacementEngine& engine, ClusterSnapshot& snap,
         const std::vector<PlacementRequest>& requests, size_t tasks_per_iteration) {
  size_t placed = 0;
  size_t pending = 0;
  uint64_t visited = 0;
  uint64_t scored = 0;
  // Steady state, as in a long-running master: one untimed plan builds the engine's per-class
  // caches (the static filters over every host) first.
  {
    Plan warm = engine.Place(requests, snap);
    ApplyResult r = ApplyPlan(warm, snap);
    PL_CHECK(r.rejected.empty());
    for (const Assignment& a : warm.assignments) PL_CHECK(snap.Release(a.task).ok());
  }
  for (auto _ : state) {
    Plan plan = engine.Place(requests, snap);
    ApplyResult r = ApplyPlan(plan, snap);
    placed += r.committed;
    pending += plan.pending.size();
    visited += plan.stats.hosts_visited;
    scored += plan.stats.candidates_scored;
    state.PauseTiming();
    for (const Assignment& a : plan.assignments) PL_CHECK(snap.Release(a.task).ok());
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * tasks_per_iteration));
  state.counters["placed/iter"] =
      benchmark::Counter(static_cast<double>(placed), benchmark::Counter::kAvgIterations);
  state.counters["pending/iter"] =
      benchmark::Counter(static_cast<double>(pending), benchmark::Counter::kAvgIterations);
  // The work, as counts that do not drift with the machine's speed.
  const double tasks = static_cast<double>(state.iterations() * tasks_per_iteration);
  state.counters["visited/task"] = static_cast<double>(visited) / tasks;
  state.counters["scored/task"] = static_cast<double>(scored) / tasks;
}

void BM_HomogeneousBatch(benchmark::State& state, const std::string& profile) {
  ClusterSnapshot snap = BaseCluster();
  auto engine = MakeEngine(profile);
  TaskShape s;
  s.job = JobId(2);
  s.resources = Resources::Of(1000, 2 * kGi);
  auto shape = *MakeTaskShape(std::move(s));
  std::vector<PlacementRequest> rs;
  for (uint32_t i = 0; i < 1000; ++i) {
    rs.push_back(PlacementRequest::Single({TaskId{JobId(2), i}, shape, {}, {}}));
  }
  Run(state, *engine, snap, rs, rs.size());
}
BENCHMARK_CAPTURE(BM_HomogeneousBatch, default, std::string("default"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HomogeneousBatch, best_fit, std::string("best-fit"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HomogeneousBatch, spread, std::string("spread"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HomogeneousBatch, random_fit, std::string("random-fit"))
    ->Unit(benchmark::kMillisecond);

// 100 jobs of 10 tasks; the even ones ask `gpu_milli` (of any model, or of T4s only for every
// fourth job with `t4_only`).
std::vector<PlacementRequest> ConstrainedJobs(bool task_label, int64_t gpu_milli = 0,
                                              bool t4_only = false) {
  std::mt19937_64 rng(11);
  std::vector<PlacementRequest> rs;
  for (uint64_t j = 0; j < 100; ++j) {
    TaskShape s;
    s.job = JobId(100 + j);
    s.resources = Resources::Of(500 + 100 * static_cast<int64_t>(j % 8), kGi * (1 + j % 4), 0,
                                j % 2 == 0 ? gpu_milli : 0);
    uint64_t z = rng() % 5;
    s.label_constraints.push_back(
        LabelConstraint{"zone", ConstraintOp::kIn, {kZones[z], kZones[(z + 2) % 5]}, 0});
    s.label_constraints.push_back(
        LabelConstraint{"rack", ConstraintOp::kNotIn, {absl::StrCat("r", rng() % 500)}, 0});
    s.job_labels = {{"app", absl::StrCat("svc", j % 20)}};
    if (task_label) {
      s.max_per_host.push_back(MaxPerHostConstraint{2, "app"});
    } else {
      s.max_per_host.push_back(MaxPerHostConstraint{1, ""});
    }
    s.port_names = {"http"};
    if (t4_only && j % 4 == 0) s.gpu_models = {"T4"};
    auto shape = *MakeTaskShape(std::move(s));
    for (uint32_t i = 0; i < 10; ++i) {
      rs.push_back(PlacementRequest::Single({TaskId{shape->job, i}, shape, {}, {}}));
    }
  }
  return rs;
}

void BM_ConstrainedBatch(benchmark::State& state, const std::string& profile) {
  ClusterSnapshot snap = BaseCluster();
  auto engine = MakeEngine(profile);
  auto rs = ConstrainedJobs(false);
  Run(state, *engine, snap, rs, rs.size());
}
BENCHMARK_CAPTURE(BM_ConstrainedBatch, default, std::string("default"))
    ->Unit(benchmark::kMillisecond);
// The same on hosts with 8 GPUs, half of the jobs asking 1 GPU: the workload has GPU tasks, so
// the profile scores up to gpu_max_candidates (256) hosts instead of 16.
void BM_ConstrainedGpuBatch(benchmark::State& state) {
  ClusterSnapshot snap = GpuCluster();
  auto engine = MakeEngine("default");
  auto rs = ConstrainedJobs(false, 1000);
  Run(state, *engine, snap, rs, rs.size());
}
BENCHMARK(BM_ConstrainedGpuBatch)->Unit(benchmark::kMillisecond);
// The same on a cluster of T4s and A100s where a quarter of the GPU jobs need T4s: model
// pressure tells the models apart for the tasks of any model, whose sample is then shared
// between the models (model_sample.h). `no_pressure`: default's weights without it, whose walk
// stops at the first 256 feasible hosts.
void BM_TwoModelGpuBatch(benchmark::State& state, const std::string& profile) {
  ClusterSnapshot snap = TwoModelCluster();
  auto engine = MakeEngine(profile);
  auto rs = ConstrainedJobs(false, 1000, /*t4_only=*/true);
  Run(state, *engine, snap, rs, rs.size());
}
BENCHMARK_CAPTURE(BM_TwoModelGpuBatch, default, std::string("default"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TwoModelGpuBatch, no_pressure,
                  std::string("pack=1+gpu_fragmentation=16+gpu_stranding=32"))
    ->Unit(benchmark::kMillisecond);
// The default profile's weights before gpu_stranding joined it, for the before/after figure.
BENCHMARK_CAPTURE(BM_ConstrainedBatch, former_default, std::string("pack=1+gpu_fragmentation=4"))
    ->Unit(benchmark::kMillisecond);

void BM_TaskLabelAntiAffinity(benchmark::State& state) {
  ClusterSnapshot snap = BaseCluster();
  auto engine = MakeEngine("default");
  auto rs = ConstrainedJobs(true);
  Run(state, *engine, snap, rs, rs.size());
}
BENCHMARK(BM_TaskLabelAntiAffinity)->Unit(benchmark::kMillisecond);

void BM_Gang10kPlaced(benchmark::State& state) {
  ClusterSnapshot snap = BaseCluster();
  auto engine = MakeEngine("default");
  TaskShape s;
  s.job = JobId(3);
  s.resources = Resources::Of(2000, 4 * kGi);
  std::vector<PlacementRequest> rs = {
      PlacementRequest::Gang(JobId(3), 0, 10'000, *MakeTaskShape(std::move(s)))};
  Run(state, *engine, snap, rs, 10'000);
}
BENCHMARK(BM_Gang10kPlaced)->Unit(benchmark::kMillisecond);

void BM_Gang10kRejected(benchmark::State& state) {
  ClusterSnapshot snap = BaseCluster();
  // Zone a has 10,000 hosts; one is drained, so a gang of 10,000 with max_per_host 1 fails on
  // its last member.
  PL_CHECK(snap.SetHostStatus(HostId(0), HostStatus::kDrained).ok());
  auto engine = MakeEngine("default");
  TaskShape s;
  s.job = JobId(4);
  s.resources = Resources::Of(100, kGi / 4);
  s.label_constraints.push_back(LabelConstraint{"zone", ConstraintOp::kIn, {"a"}, 0});
  s.max_per_host.push_back(MaxPerHostConstraint{1, ""});
  std::vector<PlacementRequest> rs = {
      PlacementRequest::Gang(JobId(4), 0, 10'000, *MakeTaskShape(std::move(s)))};
  Plan check = engine->Place(rs, snap);
  PL_CHECK(check.assignments.empty() && check.pending.size() == 1);
  PL_CHECK(check.pending[0].explanation.gang_placed == 9'999)
      << check.pending[0].explanation.OneLine();
  state.SetLabel(check.pending[0].explanation.OneLine());
  Run(state, *engine, snap, rs, 10'000);
}
BENCHMARK(BM_Gang10kRejected)->Unit(benchmark::kMillisecond);

void BM_RevocableOnSlack(benchmark::State& state) {
  ClusterSnapshot snap = BaseCluster();
  // Regular work takes whatever is unallocated; the filler tasks leave 0..100% of what they
  // hold idle.
  std::mt19937_64 rng(13);
  for (uint32_t i = 0; i < kHosts; ++i) {
    const HostState& h = *snap.host(HostId(i));
    TaskShape rest;
    rest.job = JobId(8);
    rest.resources = Resources::Of(h.free().cpu_milli(), h.free().memory_bytes());
    Assignment a;
    a.task = TaskId{JobId(8), i};
    a.host = HostId(i);
    a.shape = *MakeTaskShape(std::move(rest));
    PL_CHECK(snap.Commit(a).ok());
    const Resources filler = snap.TaskUsage(TaskId{JobId(1), i})->resources;
    const int64_t idle = static_cast<int64_t>(rng() % 101);
    PL_CHECK(snap.SetHostSlack(HostId(i), Resources::Of(filler.cpu_milli() * idle / 100,
                                                        filler.memory_bytes() / 100 * idle))
                 .ok());
  }
  auto engine = MakeEngine("default");
  TaskShape s;
  s.job = JobId(7);
  s.resources = Resources::Of(1000, 2 * kGi);
  s.revocable = true;
  auto shape = *MakeTaskShape(std::move(s));
  std::vector<PlacementRequest> rs;
  for (uint32_t i = 0; i < 1000; ++i) {
    rs.push_back(PlacementRequest::Single({TaskId{JobId(7), i}, shape, {}, {}}));
  }
  Plan check = engine->Place(rs, snap);
  PL_CHECK(check.pending.empty() && check.assignments.size() == 1000);
  Run(state, *engine, snap, rs, rs.size());
}
BENCHMARK(BM_RevocableOnSlack)->Unit(benchmark::kMillisecond);

void BM_ExplainNeverFits(benchmark::State& state) {
  ClusterSnapshot snap = BaseCluster();
  auto engine = MakeEngine("default");
  TaskShape s;
  s.job = JobId(5);
  s.resources = Resources::Of(1000, 512 * kGi);
  std::vector<PlacementRequest> rs = {
      PlacementRequest::Single({TaskId{JobId(5), 0}, *MakeTaskShape(std::move(s)), {}, {}})};
  Plan check = engine->Place(rs, snap);
  PL_CHECK(check.pending.size() == 1 && check.pending[0].explanation.never_fits);
  state.SetLabel(check.pending[0].explanation.OneLine());
  Run(state, *engine, snap, rs, 1);
}
BENCHMARK(BM_ExplainNeverFits)->Unit(benchmark::kMillisecond);

void BM_FragmentationOfHost(benchmark::State& state) {
  ClusterSnapshot snap;
  HostSpec h;
  h.id = HostId(0);
  h.capacity = Resources::Of(96'000, 384 * kGi);
  h.gpu_models.assign(8, "G2");
  PL_CHECK(snap.AddHost(std::move(h)).ok());
  GpuWorkload w;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 25; ++i) {
    int64_t gpu = i < 5 ? 1000 * (1 + i % 4) : 50 * (1 + static_cast<int64_t>(rng() % 19));
    w.Add(Resources::Of(1000 * (1 + static_cast<int64_t>(rng() % 16)), kGi * (4 + i), 0, gpu), {},
          1.0 + static_cast<double>(rng() % 100));
  }
  TaskShape s;
  s.job = JobId(6);
  s.resources = Resources::Of(4000, 16 * kGi, 0, 300);
  auto shape = *MakeTaskShape(s);
  for (uint16_t d = 0; d < 5; ++d) {
    Assignment a;
    a.task = TaskId{JobId(6), d};
    a.host = HostId(0);
    a.shape = shape;
    a.gpus = {GpuShare{d, 300}};
    PL_CHECK(snap.Commit(a).ok());
  }
  const HostState& host = *snap.host(HostId(0));
  GpuShares option = {GpuShare{6, 300}};
  const bool stranding = state.range(0) == 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(stranding ? w.Stranding(host, s.resources, option)
                                       : w.Fragmentation(host, s.resources, option));
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(stranding ? "Stranding" : "Fragmentation");
}
BENCHMARK(BM_FragmentationOfHost)->Arg(0)->Arg(1);

}  // namespace
}  // namespace paceline::placement
