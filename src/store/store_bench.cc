// Benchmarks of the store's write path as the master drives it (run them from a Release build):
//   BM_TaskLifecycle/N   one transaction launching N tasks (one batch of N task records and N
//                        LAUNCHING events, as a scheduling cycle writes it), then one transaction
//                        of N batches of one RUNNING change each (as N hosts' reports arrive
//                        between two commits); items = tasks. SQLite in a temporary directory,
//                        in the master's mode (WAL); the store grows through the run, as in a
//                        real cluster.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "records/records.h"
#include "store/sqlite/sqlite_store.h"

namespace paceline::store {
namespace {

constexpr uint32_t kInstancesPerJob = 5000;

records::TaskRecord Task(TaskId id, TaskState state, absl::Time now) {
  records::TaskRecord t;
  t.id = id;
  t.run = 1;
  t.state = state;
  t.host = absl::StrCat("host-", id.instance % 50000);
  if (state == TaskState::kRunning) t.started_at = now;
  return t;
}

records::TaskEvent Event(const records::TaskRecord& t, absl::Time now) {
  return records::TaskEvent{RunId{t.id, t.run}, now, t.state, t.host, "", ""};
}

void BM_TaskLifecycle(benchmark::State& state) {
  const std::string dir = absl::StrCat(std::filesystem::temp_directory_path().string(),
                                       "/paceline-store-bench-", ::getpid());
  std::filesystem::remove_all(dir);
  {
    auto opened = SqliteStore::Open(dir);
    PL_CHECK(opened.ok()) << opened.status();
    std::unique_ptr<SqliteStore> store = *std::move(opened);
    const auto n = static_cast<uint32_t>(state.range(0));
    const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
    uint64_t next = 0;  // tasks launched so far
    for (auto _ : state) {
      records::WriteBatch launch;
      std::vector<TaskId> ids;
      for (uint32_t i = 0; i < n; ++i, ++next) {
        TaskId id{JobId(1 + next / kInstancesPerJob),
                  static_cast<uint32_t>(next % kInstancesPerJob)};
        ids.push_back(id);
        launch.put_tasks.push_back(Task(id, TaskState::kLaunching, now));
        launch.events.push_back(Event(launch.put_tasks.back(), now));
      }
      PL_CHECK(store->Commit(launch).ok());
      std::vector<records::WriteBatch> reports(n);
      std::vector<const records::WriteBatch*> group;
      for (uint32_t i = 0; i < n; ++i) {
        reports[i].put_tasks.push_back(Task(ids[i], TaskState::kRunning, now));
        reports[i].events.push_back(Event(reports[i].put_tasks.back(), now));
        group.push_back(&reports[i]);
      }
      PL_CHECK(store->CommitAll(group).ok());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * n);
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_TaskLifecycle)->Arg(200)->Arg(2000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace paceline::store
