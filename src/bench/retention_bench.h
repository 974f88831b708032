#pragma once
// The retention benchmark of `paceline bench retention`: `tasks` finished tasks pass through
// the master's core and its durable SQLite store over `span` of simulated time, with
// --retain-terminal `window`. The parts are the master's own: SchedulerCore (jobs, cycles,
// agents' reports), SqliteStore (every change committed as the master commits it, one
// transaction per simulated step), and the retention worker's batch (masterd::RetireBatch:
// read from the store, append to the archive and fsync, delete through the core) every
// `retire_every`. The clock is simulated so that a week passes in minutes; the hosts answer a
// launch with RUNNING at once and the task ends a step later.
//
// Measured:
//   - over simulated time (every `sample_every`): live jobs, tasks and events in the store,
//     the store's size (database + WAL), the archive's size: the store must stay flat once the
//     window has passed;
//   - the core's share of a retirement, which runs on the master's loop and so delays its
//     cycles (PurgeExpired of a batch), and the store's (the reads and the delete commit on the
//     writer thread, which delay other commits): p50/p99/max;
//   - the scheduling cycle's duration in steps with and without a retirement: p50/p99/max;
//   - a restart at the end: opening the store, loading it and rebuilding the core.
//
// Thread-safety: RunRetentionBench is a blocking call on one thread.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace paceline::bench {

struct RetentionBenchConfig {
  int64_t tasks = 10'000'000;
  absl::Duration span = absl::Hours(24 * 7);  // simulated
  absl::Duration window = absl::Hours(12);    // --retain-terminal
  uint32_t job_size = 100;                    // instances per job
  absl::Duration step = absl::Minutes(1);     // simulated time per step: one commit
  absl::Duration retire_every = absl::Minutes(5);
  absl::Duration sample_every = absl::Hours(4);
  size_t batch_jobs = 200;  // as the master's worker
  size_t batch_tasks = 20'000;
  int hosts = 40;        // of 64 cpus each
  std::string data_dir;  // empty: a temporary directory, removed at the end
};

struct Distribution {
  absl::Duration p50, p99, max;
  int64_t count = 0;
};

struct RetentionSample {
  absl::Duration at;  // simulated time since the start
  int64_t live_jobs = 0, live_tasks = 0, live_events = 0;
  int64_t store_bytes = 0;  // database + WAL
  int64_t archive_bytes = 0;
  int64_t finished_tasks = 0;  // so far
};

struct RetentionBenchReport {
  RetentionBenchConfig config;
  std::vector<RetentionSample> samples;
  int64_t finished_tasks = 0, archived_jobs = 0, archived_tasks = 0;
  Distribution cycle_quiet, cycle_retiring;  // the cycles of steps without / with a retirement
  Distribution purge_on_loop;                // PurgeExpired of one batch, in the core
  Distribution retire_on_store;              // one batch's reads and its delete commit
  Distribution commit;                       // every step's commit
  absl::Duration restart;                    // open + load + rebuild the core
  absl::Duration restart_load;               // of which open + load
  int64_t restart_tasks = 0;                 // the task records it loaded
  absl::Duration wall;
};

absl::StatusOr<RetentionBenchReport> RunRetentionBench(const RetentionBenchConfig& config);
nlohmann::json ToJson(const RetentionBenchReport& r);

}  // namespace paceline::bench
