// placement_trace_replay: replays the Alibaba GPU trace (cluster-trace-gpu-v2023, the FGD
// paper's workload) through the placement core and compares placement profiles by GPU
// allocation and fragmentation — the "workload inflation" experiment of Weng et al. (ATC '23).
//
// For each profile and seed: the 1,523 nodes of the trace form the cluster; tasks are drawn
// from the task list uniformly at random with replacement (seeded) and submitted one by one
// until the GPU they asked for in total ("arrived") reaches --max_arrival % of the cluster's
// GPU capacity. Tasks never leave; a task that finds no host is counted as failed and dropped.
// At every --step % of arrival the replay records the unallocated GPU share and the cluster's
// fragmentation (sum over nodes of GpuWorkload::Fragmentation against the trace's task
// distribution), both in % of GPU capacity. Every profile scores every feasible host
// (max_candidates = 0), and the gpu_fragmentation scorer measures against the same trace
// distribution.
//
// Usage (from the repository root, Release build):
//   build/h-place-rel/src/placement/placement_trace_replay [flags]
//   flags: [--trace_dir=/work/shared/traces/alibaba-gpu-v2023] [--tasks=openb_pod_list_default.csv]
//       [--nodes=openb_node_list_all_node.csv] [--seeds=3] [--max_arrival=130] [--step=10]
//       [--profiles=fgd,best-fit,random-fit,dot-product,gpu-packing] [--out=FILE.md]
// Prints Markdown tables (and writes them to --out when given).
//
// Under `make bench` (scripts/bench.sh passes --benchmark_* flags) it runs a short replay
// (one seed unless --seeds is given) and skips, successfully, when the trace is not there.

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/check.h"
#include "placement/engine.h"
#include "sim/alibaba_trace.h"

namespace paceline::placement {
namespace {

struct Options {
  std::string trace_dir = "/work/shared/traces/alibaba-gpu-v2023";
  std::string tasks = "openb_pod_list_default.csv";
  std::string nodes = "openb_node_list_all_node.csv";
  int seeds = 3;
  int max_arrival = 130;
  int step = 10;
  std::vector<std::string> profiles = {"fgd", "best-fit", "random-fit", "dot-product",
                                       "gpu-packing"};
  std::string out;
};

struct Point {
  double unallocated = 0;  // % of GPU capacity
  double fragmentation = 0;
};

struct Run {
  std::vector<Point> points;  // one per checkpoint
  int64_t arrived = 0;
  int64_t failed = 0;
  int64_t failed_gpu_tasks = 0;
  double allocated_share = 0;  // % of GPU capacity at the end
  double seconds = 0;
};

ClusterSnapshot BuildCluster(const std::vector<sim::AlibabaNode>& nodes) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    HostSpec h;
    h.id = HostId(i);
    h.name = nodes[i].name;
    h.capacity = nodes[i].capacity();
    h.gpu_models.assign(static_cast<size_t>(nodes[i].gpus), nodes[i].model);
    absl::Status s = snap.AddHost(std::move(h));
    PL_CHECK(s.ok()) << s;
  }
  return snap;
}

double ClusterFragmentation(const ClusterSnapshot& snap, const GpuWorkload& w) {
  double f = 0;
  for (uint32_t s = 0; s < snap.slots(); ++s) {
    if (snap.present(s)) f += w.Fragmentation(snap.host_at(s));
  }
  return f;
}

Run ReplayOnce(const Options& o, const std::string& profile, uint64_t seed,
               const std::vector<sim::AlibabaNode>& nodes,
               const std::vector<std::shared_ptr<const TaskShape>>& shapes,
               const GpuWorkload& workload) {
  ClusterSnapshot snap = BuildCluster(nodes);
  double capacity = 0;
  for (const auto& n : nodes) capacity += 1000.0 * n.gpus;
  EngineConfig c;
  c.profile = profile;
  c.max_candidates = 0;
  c.seed = seed;
  c.workload = workload;
  auto engine = PlacementEngine::Create(c);
  PL_CHECK(engine.ok()) << engine.status();

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, shapes.size() - 1);
  Run run;
  double arrived_gpu = 0;
  double allocated_gpu = 0;
  int next_point = o.step;
  uint32_t instance = 0;
  auto start = std::chrono::steady_clock::now();
  std::vector<PlacementRequest> one(1);
  while (next_point <= o.max_arrival) {
    const auto& shape = shapes[pick(rng)];
    arrived_gpu += static_cast<double>(shape->gpu_milli());
    ++run.arrived;
    one[0] = PlacementRequest::Single({TaskId{shape->job, instance++}, shape, {}, {}});
    Plan plan = (*engine)->Place(one, snap);
    if (plan.assignments.empty()) {
      ++run.failed;
      run.failed_gpu_tasks += shape->gpu_milli() > 0;
    } else {
      ApplyResult r = ApplyPlan(plan, snap);
      PL_CHECK(r.committed == 1);
      allocated_gpu += static_cast<double>(shape->gpu_milli());
    }
    while (next_point <= o.max_arrival && arrived_gpu >= capacity * next_point / 100.0) {
      run.points.push_back(Point{100.0 * (1 - allocated_gpu / capacity),
                                 100.0 * ClusterFragmentation(snap, workload) / capacity});
      next_point += o.step;
    }
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.allocated_share = 100.0 * allocated_gpu / capacity;
  PL_CHECK(snap.Validate().ok());
  return run;
}

std::string Tables(const Options& o, const std::map<std::string, std::vector<Run>>& runs,
                   size_t num_nodes, size_t num_tasks, double gpus) {
  std::string md;
  auto mean = [](const std::vector<Run>& rs, auto f) {
    double s = 0;
    for (const Run& r : rs) s += f(r);
    return s / static_cast<double>(rs.size());
  };
  absl::StrAppendFormat(&md,
                        "Cluster: %d nodes, %.0f GPUs (%s). Workload: %d tasks (%s), drawn with "
                        "replacement. Mean of %d seeds; every feasible host scored.\n\n",
                        num_nodes, gpus, o.nodes, num_tasks, o.tasks, o.seeds);
  std::string header = "| arrived GPU % |";
  std::string rule = "|---:|";
  for (const std::string& p : o.profiles) {
    absl::StrAppend(&header, " ", p, " |");
    absl::StrAppend(&rule, "---:|");
  }
  for (int table = 0; table < 2; ++table) {
    absl::StrAppend(&md, table == 0 ? "### Unallocated GPU (% of capacity; lower is better)\n\n"
                                    : "### Fragmentation (% of capacity; lower is better)\n\n");
    absl::StrAppend(&md, header, "\n", rule, "\n");
    size_t n = runs.begin()->second.front().points.size();
    for (size_t i = 0; i < n; ++i) {
      absl::StrAppend(&md, "| ", (i + 1) * o.step, " |");
      for (const std::string& p : o.profiles) {
        double v = mean(runs.at(p), [&](const Run& r) {
          return table == 0 ? r.points[i].unallocated : r.points[i].fragmentation;
        });
        absl::StrAppendFormat(&md, " %.1f |", v);
      }
      absl::StrAppend(&md, "\n");
    }
    absl::StrAppend(&md, "\n");
  }
  absl::StrAppend(&md, "### At ", o.max_arrival, "% arrived\n\n",
                  "| profile | GPU allocated % | tasks arrived | failed | failed GPU tasks | "
                  "replay s/seed |\n|---|---:|---:|---:|---:|---:|\n");
  for (const std::string& p : o.profiles) {
    const auto& rs = runs.at(p);
    absl::StrAppendFormat(
        &md, "| %s | %.1f | %.0f | %.0f | %.0f | %.1f |\n", p,
        mean(rs, [](const Run& r) { return r.allocated_share; }),
        mean(rs, [](const Run& r) { return static_cast<double>(r.arrived); }),
        mean(rs, [](const Run& r) { return static_cast<double>(r.failed); }),
        mean(rs, [](const Run& r) { return static_cast<double>(r.failed_gpu_tasks); }),
        mean(rs, [](const Run& r) { return r.seconds; }));
  }
  return md;
}

int Main(int argc, char** argv) {
  Options o;
  bool bench_mode = false;
  bool seeds_given = false;
  for (int i = 1; i < argc; ++i) {
    std::pair<std::string, std::string> kv = absl::StrSplit(argv[i], absl::MaxSplits('=', 1));
    const std::string& k = kv.first;
    const std::string& v = kv.second;
    bool ok = true;
    if (absl::StartsWith(k, "--benchmark_")) {
      bench_mode = true;  // run by scripts/bench.sh alongside the Google Benchmark binaries
    } else if (k == "--trace_dir") {
      o.trace_dir = v;
    } else if (k == "--tasks") {
      o.tasks = v;
    } else if (k == "--nodes") {
      o.nodes = v;
    } else if (k == "--seeds") {
      ok = absl::SimpleAtoi(v, &o.seeds) && o.seeds > 0;
      seeds_given = true;
    } else if (k == "--max_arrival") {
      ok = absl::SimpleAtoi(v, &o.max_arrival) && o.max_arrival > 0;
    } else if (k == "--step") {
      ok = absl::SimpleAtoi(v, &o.step) && o.step > 0;
    } else if (k == "--profiles") {
      o.profiles = absl::StrSplit(v, ',', absl::SkipEmpty());
      ok = !o.profiles.empty();
    } else if (k == "--out") {
      o.out = v;
    } else {
      ok = false;
    }
    if (!ok) {
      std::cerr << "placement_trace_replay: bad flag '" << argv[i]
                << "'; see the header of placement_trace_replay.cc for the flags\n";
      return 2;
    }
  }
  if (bench_mode && !seeds_given) o.seeds = 1;
  auto nodes = sim::ReadAlibabaNodes(o.trace_dir + "/" + o.nodes);
  auto tasks = sim::ReadAlibabaTasks(o.trace_dir + "/" + o.tasks);
  if (!nodes.ok() || !tasks.ok()) {
    if (bench_mode && (nodes.status().code() == absl::StatusCode::kNotFound ||
                       tasks.status().code() == absl::StatusCode::kNotFound)) {
      std::cout << "placement_trace_replay: no trace in " << o.trace_dir << ", skipped\n";
      return 0;
    }
    std::cerr << "placement_trace_replay: " << (nodes.ok() ? tasks.status() : nodes.status())
              << "\n";
    return 1;
  }
  // One shape per distinct task type; the target workload is the trace's distribution.
  GpuWorkload workload;
  std::vector<std::shared_ptr<const TaskShape>> shapes;
  std::map<std::string, std::shared_ptr<const TaskShape>> by_type;
  for (const sim::AlibabaTask& t : *tasks) {
    workload.Add(t.resources(), t.gpu_models);
    std::string key = absl::StrCat(t.resources().ToString(), "|", absl::StrJoin(t.gpu_models, ","));
    auto& shape = by_type[key];
    if (shape == nullptr) {
      TaskShape s;
      s.job = JobId(by_type.size());
      s.resources = t.resources();
      s.gpu_models = t.gpu_models;
      auto made = MakeTaskShape(std::move(s));
      if (!made.ok()) {
        std::cerr << "placement_trace_replay: task " << t.name << ": " << made.status() << "\n";
        return 1;
      }
      shape = *made;
    }
    shapes.push_back(shape);
  }
  double gpus = 0;
  for (const auto& n : *nodes) gpus += n.gpus;
  std::cerr << nodes->size() << " nodes, " << gpus << " GPUs, " << tasks->size() << " tasks, "
            << by_type.size() << " task types\n";

  std::map<std::string, std::vector<Run>> runs;
  for (const std::string& p : o.profiles) {
    for (int s = 1; s <= o.seeds; ++s) {
      Run r = ReplayOnce(o, p, static_cast<uint64_t>(s), *nodes, shapes, workload);
      std::cerr << absl::StrFormat("%-12s seed %d: %.1f%% GPU allocated, %d/%d failed, %.1fs\n", p,
                                   s, r.allocated_share, r.failed, r.arrived, r.seconds);
      runs[p].push_back(std::move(r));
    }
  }
  std::string md = Tables(o, runs, nodes->size(), tasks->size(), gpus);
  std::cout << md;
  if (!o.out.empty()) {
    std::ofstream f(o.out);
    f << md;
    if (!f) {
      std::cerr << "placement_trace_replay: cannot write " << o.out << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace paceline::placement

int main(int argc, char** argv) { return paceline::placement::Main(argc, argv); }
