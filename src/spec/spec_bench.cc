// Benchmarks of the job spec parser (run them from a Release build):
//   BM_ParseStoredJobSpec   ParseJobSpec of a small batch job's canonical text, as a master
//                           restarting reads one per stored job (items = specs)
//   BM_PrintJobSpec         PrintJobSpec of the same spec, as a job's creation stores it
#include <benchmark/benchmark.h>

#include <string>

#include "common/check.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

// The spec `paceline bench scale` submits, printed as the store keeps it.
std::string StoredSpec() {
  absl::StatusOr<JobSpec> spec = ParseJobSpec(
      "name: scale-1\ntype: batch\ninstances: 5000\nsla: {preemptible: true}\ntask:\n"
      "  command: \"true\"\n  resources: {cpu: 1, memory: 1Gi}\n",
      "bench");
  PL_CHECK(spec.ok());
  return PrintJobSpec(*spec);
}

void BM_ParseStoredJobSpec(benchmark::State& state) {
  const std::string text = StoredSpec();
  for (auto _ : state) {
    absl::StatusOr<JobSpec> spec = ParseJobSpec(text, "stored job spec");
    benchmark::DoNotOptimize(spec);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseStoredJobSpec);

void BM_PrintJobSpec(benchmark::State& state) {
  absl::StatusOr<JobSpec> spec = ParseJobSpec(StoredSpec(), "bench");
  PL_CHECK(spec.ok());
  for (auto _ : state) {
    std::string text = PrintJobSpec(*spec);
    benchmark::DoNotOptimize(text);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PrintJobSpec);

}  // namespace
}  // namespace paceline
