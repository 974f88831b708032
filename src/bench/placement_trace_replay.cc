// placement_trace_replay: replays the Alibaba GPU trace (cluster-trace-gpu-v2023, the FGD
// paper's workload) through the placement core and compares placement profiles by GPU
// allocation and fragmentation — the "workload inflation" experiment of Weng et al. (ATC '23).
// The experiment is `paceline sim --trace alibaba-gpu DIR --fill` (sim/fill.h); this program
// runs it as a benchmark and prints Markdown tables for bench/results.
//
// For each profile and seed: the 1,523 nodes of the trace form the cluster; tasks are drawn
// from the (seeded) shuffled task list uniformly at random with replacement and submitted one by
// one until the GPU they asked for in total ("arrived") reaches --max_arrival % of the cluster's
// GPU capacity. Tasks never leave; a task that finds no host is counted as failed and dropped.
// At every --step % of arrival the replay records the unallocated GPU share and the cluster's
// fragmentation (sum over nodes of GpuWorkload::Fragmentation against the trace's task
// distribution), both in % of GPU capacity. Every profile scores every feasible host
// (max_candidates = 0), and the gpu_fragmentation scorer measures against the same trace
// distribution.
//
// Usage (from the repository root, Release build):
//   build/release/src/bench/placement_trace_replay [flags]
//   flags: [--trace_dir=DIR] [--tasks=openb_pod_list_default.csv]
//       [--nodes=openb_node_list_all_node.csv] [--seeds=3] [--max_arrival=130] [--step=10]
//       [--profiles=fgd,best-fit,random-fit,dot-product,gpu-packing] [--out=FILE.md]
// DIR is the trace's directory; without --trace_dir, $PACELINE_TRACE_DIR.
// Prints Markdown tables (and writes them to --out when given).
//
// Under `make bench` (scripts/bench.sh passes --benchmark_* flags) it runs a short replay
// (one seed unless --seeds is given) and skips, successfully, when the trace is not there.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sim/alibaba_trace.h"
#include "sim/fill.h"

namespace paceline::placement {
namespace {

struct Options {
  std::string trace_dir =
      std::getenv("PACELINE_TRACE_DIR") ? std::getenv("PACELINE_TRACE_DIR") : "";
  std::string tasks = "openb_pod_list_default.csv";
  std::string nodes = "openb_node_list_all_node.csv";
  int seeds = 3;
  int max_arrival = 130;
  int step = 10;
  std::vector<std::string> profiles = {"fgd", "best-fit", "random-fit", "dot-product",
                                       "gpu-packing"};
  std::string out;
};

std::string Tables(const Options& o, const std::map<std::string, std::vector<sim::FillRun>>& runs,
                   size_t num_nodes, size_t num_tasks, double gpus) {
  std::string md;
  auto mean = [](const std::vector<sim::FillRun>& rs, auto f) {
    double s = 0;
    for (const sim::FillRun& r : rs) s += f(r);
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
        double v = mean(runs.at(p), [&](const sim::FillRun& r) {
          return table == 0 ? r.points[i].unallocated_pct : r.points[i].fragmentation_pct;
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
        mean(rs, [](const sim::FillRun& r) { return r.allocated_pct; }),
        mean(rs, [](const sim::FillRun& r) { return static_cast<double>(r.arrived); }),
        mean(rs, [](const sim::FillRun& r) { return static_cast<double>(r.failed); }),
        mean(rs, [](const sim::FillRun& r) { return static_cast<double>(r.failed_gpu_tasks); }),
        mean(rs, [](const sim::FillRun& r) { return r.seconds; }));
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
  double gpus = 0;
  for (const auto& n : *nodes) gpus += n.gpus;
  std::cerr << nodes->size() << " nodes, " << gpus << " GPUs, " << tasks->size() << " tasks\n";

  // The fill runs themselves are paceline sim's fill mode (sim/fill.h).
  sim::FillOptions fill;
  fill.profiles = o.profiles;
  fill.seed = 1;
  fill.repetitions = o.seeds;
  fill.target_percent = o.max_arrival;
  fill.bucket_percent = o.step;
  absl::StatusOr<std::vector<sim::FillRun>> all = sim::RunFillRuns(*nodes, *tasks, fill);
  if (!all.ok()) {
    std::cerr << "placement_trace_replay: " << all.status() << "\n";
    return 1;
  }
  std::map<std::string, std::vector<sim::FillRun>> runs;
  for (sim::FillRun& r : *all) {
    std::cerr << absl::StrFormat("%-12s seed %d: %.1f%% GPU allocated, %d/%d failed, %.1fs\n",
                                 r.profile, r.seed, r.allocated_pct, r.failed, r.arrived,
                                 r.seconds);
    runs[r.profile].push_back(std::move(r));
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
