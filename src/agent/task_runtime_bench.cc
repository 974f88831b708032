// Launch + reap throughput of trivial tasks (`true`), with and without cgroups.
//
//   agent_bench --benchmark_filter=LaunchAndReap
// Each iteration launches N tasks back to back and runs the loop until all N have ended and
// their events are delivered and acknowledged (so checkpoint and outbox fsyncs are included).

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "agent/task_runtime.h"
#include "agent/testing/agent_test_util.h"
#include "benchmark/benchmark.h"
#include "common/check.h"

namespace paceline::agent::testing {
namespace {

void BM_LaunchAndReap(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const bool cgroups = state.range(1) != 0;
  TempDir dir;
  const char* base = std::getenv("PACELINE_BENCH_DIR");  // e.g. /dev/shm: a tmpfs work dir
  std::string work =
      base != nullptr ? absl::StrCat(base, "/agent-bench-", ::getpid()) : dir.Sub("work");
  AgentConfig config = TestConfig(work);
  config.cgroup = cgroups ? CgroupPreference::kAuto : CgroupPreference::kNone;
  config.wrapper_zygote = state.range(2) != 0;
  auto rt = TaskRuntime::Create(config).value();
  PL_CHECK(rt->Recover().ok());
  if (cgroups && rt->host().isolation == CgroupMode::kNone) {
    state.SkipWithError("no writable cgroups on this machine");
    return;
  }
  uint64_t job = 0;
  int64_t tasks = 0;
  for (auto _ : state) {
    ++job;
    for (int i = 0; i < n; ++i) {
      LaunchRequest r = Req(job, i, 1, "true");
      r.spec.resources = Resources::Of(100, 64LL << 20);
      absl::Status s = rt->Launch(r);
      PL_CHECK(s.ok()) << s;
      rt->Poll(absl::Now());  // reap as we go, like a live agent loop
    }
    int ended = 0;
    while (ended < n) {
      rt->RunOnce(absl::Milliseconds(50));
      std::vector<TaskEvent> ev = rt->PendingEvents();
      for (const TaskEvent& e : ev) ended += e.terminal();
      if (!ev.empty()) {
        PL_CHECK(rt->Ack(ev.back().seq).ok());
      }
    }
    tasks += n;
  }
  state.counters["tasks_per_s"] =
      benchmark::Counter(static_cast<double>(tasks), benchmark::Counter::kIsRate);
  state.SetLabel(absl::StrCat(
      cgroups ? absl::StrCat("cgroup ", CgroupModeName(rt->host().isolation)) : "no cgroups",
      config.wrapper_zygote ? ", zygote" : ", exec per wrapper"));
  rt.reset();
  RemoveAgentCgroups(config);
  if (base != nullptr) RemoveTree(work).IgnoreError();
}
BENCHMARK(BM_LaunchAndReap)
    ->ArgNames({"tasks", "cgroups", "zygote"})
    ->Args({500, 0, 1})
    ->Args({500, 1, 1})
    ->Args({500, 0, 0})
    ->Args({500, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

}  // namespace
}  // namespace paceline::agent::testing
