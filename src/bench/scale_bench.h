#pragma once
// The scale benchmark of `paceline bench scale`: one master (this process, its durable SQLite
// store, its gRPC API) with many emulated hosts (FakeAgent) that speak the agent protocol
// through the master's own protocol code — in process (InProcessAgentFleet, 50,000 hosts) or
// over real gRPC streams (GrpcAgentFleet, 1,000+ hosts). Clients submit `tasks` tasks as batch
// jobs of mixed sizes through the gRPC API; every task runs until the end (the emulated hosts
// answer a launch with RUNNING at once). Measured:
//   - submitted -> running: tasks/s over the whole run and sustained (10 % to 90 % running),
//     p50/p90/p99/max latency from the CreateJob call to the master's acknowledgement of the
//     task's RUNNING (i.e. durable);
//   - memory: the process's resident set before the jobs and once all run, per task;
//   - CPU per task, by thread: the master's loop and store writer, the emulated hosts, gRPC;
//   - the store: transactions, batches, commit time (mean, p50/p99 within a factor of two, max);
//   - a master restart with every task in the store: time until it serves, until every host has
//     registered again, and that every task is RUNNING again (none lost, none restarted).
//
// Thread-safety: RunScaleBench is a blocking call that owns its threads.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/fleet_stats.h"
#include "bench/thread_cpu.h"
#include "common/defaults.h"
#include "common/duration_histogram.h"

namespace paceline::bench {

enum class FleetTransport { kInProcess, kGrpc };

struct ScaleBenchConfig {
  FleetTransport transport = FleetTransport::kInProcess;
  int hosts = 50000;
  int64_t tasks = 1000000;
  // Job sizes and the share of the tasks submitted in jobs of that size.
  std::vector<std::pair<uint32_t, double>> job_mix = {
      {10, 0.10}, {100, 0.20}, {1000, 0.40}, {5000, 0.30}};
  int clients = 16;  // concurrent CreateJob callers, one connection each
  int fleet_threads = 2;
  // Whether the emulated hosts speak batches (wire/stream_batch.h); false: as agents older
  // than batches, every message alone (to measure what batches buy over gRPC).
  bool batches = true;
  int64_t host_cpu_milli = 32000;
  int64_t host_memory_bytes = int64_t{128} << 30;
  absl::Duration heartbeat_interval = absl::Seconds(10);
  absl::Duration host_timeout = absl::Seconds(60);
  absl::Duration cycle = defaults::kCycle;
  absl::Duration timeout = absl::Minutes(20);  // for all tasks to run, and for the restart
  bool restart = true;
  std::string data_dir;  // empty: a temporary directory, removed at the end
  // The master's store (store/open_store.h): empty for SQLite in data_dir, or postgres://...
  // (the database should be empty: the benchmark creates its jobs and hosts there).
  std::string store;
  uint64_t seed = 1;
};

// The latencies of one kind of call.
struct CallLatency {
  int64_t calls = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
};

struct ScaleBenchReport {
  ScaleBenchConfig config;
  absl::Duration register_time;  // all hosts registered (durably)
  int64_t jobs = 0;
  int64_t submit_errors = 0;
  std::string first_error;
  absl::Duration submit_time;  // first CreateJob sent -> last answered
  absl::Duration run_time;     // first CreateJob sent -> last task RUNNING (acknowledged)
  int64_t running = 0;         // tasks RUNNING and acknowledged at the end
  double tasks_per_second = 0;
  double sustained_tasks_per_second = 0;  // between 10 % and 90 % of the tasks running
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  std::vector<std::pair<double, int64_t>> progress;  // (seconds since start, tasks running)
  int64_t rss_before = 0, rss_after = 0;             // bytes, before the jobs / all running
  double bytes_per_task = 0;
  // In process, the emulated hosts' own records grow with the tasks too: their growth, and
  // the master's bytes per task without it. 0 over gRPC (not measured).
  int64_t fleet_bytes = 0;
  double master_bytes_per_task = 0;
  // CPU of the whole process (master and emulated hosts) from the first CreateJob until every
  // task runs, by thread role (bench/thread_cpu.h).
  ThreadCpu cpu;
  DurationHistogram cycles;  // the master's scheduling cycles over the same span
  // `job list` and `task list JOB` asked every 100 ms over the same span (bench/list_prober.h).
  CallLatency job_list, task_list;
  int64_t list_errors = 0;
  uint64_t commits = 0, batches = 0;
  double commit_mean_ms = 0, commit_p50_ms = 0, commit_p99_ms = 0, commit_max_ms = 0;
  int64_t store_bytes = 0;  // the database files at the end
  // Restart (when config.restart).
  absl::Duration restart_serving;     // Master::Start on the full store
  absl::Duration restart_registered;  // ... until every host registered again
  int64_t running_after_restart = 0;  // tasks the restarted master holds RUNNING
  int64_t rss_after_restart = 0;
  FleetCounters fleet;
  absl::Duration wall;
};

absl::StatusOr<ScaleBenchReport> RunScaleBench(const ScaleBenchConfig& config);
nlohmann::json ToJson(const ScaleBenchReport& report);
// Microseconds of CPU per running task: "total" and each thread role of report.cpu.
std::map<std::string, double> CpuUsPerTask(const ScaleBenchReport& report);

}  // namespace paceline::bench
