// Benchmarks of the job spec parser (run them from a Release build):
//   BM_ParseStoredJobSpec   ParseJobSpec of a small batch job's canonical text, as a master
//                           restarting reads one per stored job (items = specs)
//   BM_PrintJobSpec         PrintJobSpec of the same spec, as a job's creation stores it
//   BM_TaskRef              JobSpec::TaskRef over every instance of a 1,000,000-instance job
//                           of two roles and 100 overrides, as placement asks for each
//                           instance's task (items = instances)
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

void BM_TaskRef(benchmark::State& state) {
  absl::StatusOr<JobSpec> spec = ParseJobSpec(
      "name: big\ntask: {command: work, resources: {cpu: 1, memory: 1Gi}}\nroles:\n"
      "  - {name: driver, instances: 1, task: {command: drive}}\n"
      "  - {name: worker, instances: 999999}\n",
      "bench");
  PL_CHECK(spec.ok()) << spec.status();
  for (uint32_t i = 0; i < 100; ++i) spec->OverrideTask(i * 9973).kill_grace = absl::Seconds(i);
  for (auto _ : state) {
    int64_t cpu = 0;
    for (uint32_t i = 0; i < spec->instances; ++i) cpu += spec->TaskRef(i).resources.cpu_milli();
    benchmark::DoNotOptimize(cpu);
  }
  state.SetItemsProcessed(state.iterations() * spec->instances);
}
BENCHMARK(BM_TaskRef)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace paceline
