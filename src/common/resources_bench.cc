// Micro-benchmarks for the resource vector, the hottest type in the scheduler.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "common/resources.h"
#include "common/units.h"

namespace paceline {
namespace {

std::vector<Resources> RandomVectors(size_t n) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> cpu(0, 64'000), mem(0, int64_t{256} << 30), gpu(0, 8000);
  std::vector<Resources> v;
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) v.push_back(Resources::Of(cpu(rng), mem(rng), mem(rng), gpu(rng)));
  return v;
}

void BM_Add(benchmark::State& state) {
  auto v = RandomVectors(1024);
  Resources sum;
  for (auto _ : state) {
    for (const Resources& r : v) sum += r;
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * v.size());
}
BENCHMARK(BM_Add);

void BM_FitsIn(benchmark::State& state) {
  auto v = RandomVectors(1024);
  Resources cap = Resources::Of(32'000, int64_t{128} << 30, int64_t{128} << 30, 4000);
  for (auto _ : state) {
    int fits = 0;
    for (const Resources& r : v) fits += r.FitsIn(cap);
    benchmark::DoNotOptimize(fits);
  }
  state.SetItemsProcessed(state.iterations() * v.size());
}
BENCHMARK(BM_FitsIn);

void BM_SubtractClamped(benchmark::State& state) {
  auto v = RandomVectors(1024);
  Resources cap = Resources::Of(32'000, int64_t{128} << 30, int64_t{128} << 30, 4000);
  for (auto _ : state) {
    Resources acc;
    for (const Resources& r : v) acc += SubtractClamped(cap, r);
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * v.size());
}
BENCHMARK(BM_SubtractClamped);

void BM_ParseBytes(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ParseBytes("1536Mi"));
}
BENCHMARK(BM_ParseBytes);

void BM_ParseCpu(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ParseCpu("0.25"));
}
BENCHMARK(BM_ParseCpu);

void BM_FormatBytes(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(FormatBytes(int64_t{3} << 29));
}
BENCHMARK(BM_FormatBytes);

}  // namespace
}  // namespace paceline
