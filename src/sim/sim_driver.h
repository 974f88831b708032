#pragma once
// Simulator: runs the real scheduling core (scheduler::SchedulerCore, the class the master
// runs) against simulated hosts and a simulated clock, as fast as the CPU allows, and records
// what happened (SimResult; sim_report.h turns it into JSON and a summary).
//
// The driver does what the master does, in the master's order, with a simulated clock instead
// of absl::Now() and simulated agents instead of gRPC sessions:
//   - pools: SchedulerCore::CreatePool (UpdatePool for "/"), parents first;
//   - hosts: SchedulerCore::RegisterHost at time 0 (no runs to report), then Heartbeat for
//     every host every `heartbeat_every`; the host timeout is 3 x heartbeat_every;
//   - jobs: SchedulerCore::CreateJob at their `at`; a job the core refuses is recorded with
//     the core's message (like a refused `job create`);
//   - cycles: SchedulerCore::RunCycle every `cycle_every`, like the master's loop tick;
//   - Actions: the store batch is what the master would commit (counted, then dropped: the
//     simulation measures the core, not the disk); each launch reaches its simulated agent,
//     which reports RUNNING `start_delay` later and SUCCEEDED (exit 0) `task.duration` after
//     that (never, for a duration of 0); each kill ends the run at once with a KILLED report.
//     Reports go through Heartbeat + OnStatus, as the master's agent stream handler does.
//
// Order within one instant t: runs' reports due at t, then arrivals at t, heartbeats, the
// cycle, the reports the cycle caused at t (start_delay 0, kills), then the interval report.
// Everything is deterministic: the seed feeds the placement engine; events at equal times run
// in the order they were scheduled; results are keyed by ordered containers.
//
// Stops at run_for, or, when run_for is unset, once every job has arrived and ended; a run
// that cannot progress (nothing running or arriving, nothing placed for 10 simulated minutes)
// stops early with `stalled` set.
//
// Thread-safety: single-threaded.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/resources.h"
#include "common/task_state.h"
#include "sim/scenario.h"

namespace paceline::sim {

// One pool at the end of a report interval (the last cycle's entitlement).
struct PoolSample {
  Resources reservation;
  Resources limit;
  Resources entitlement;
  Resources allocation;
  Resources demand;
};

struct IntervalSample {
  absl::Duration t;                              // end of the interval, from the start
  std::map<std::string, PoolSample> pools;       // by path, "/" included
  std::array<uint64_t, kNumTaskStates> tasks{};  // current runs by state, over every job
  uint64_t placements = 0;                       // in this interval
  uint64_t preemptions = 0;   // tasks chosen as preemption victims, this interval
  uint64_t jobs_arrived = 0;  // so far
  Resources allocated;        // the whole cluster (regular + revocable)
};

struct JobOutcome {
  uint64_t id = 0;  // 0 when the core refused the job
  std::string name;
  std::string pool;
  uint32_t instances = 0;
  absl::Duration submitted;
  std::optional<absl::Duration> finished;  // every instance ended
  std::vector<absl::Duration> latencies;   // submit -> first RUNNING, per started instance
  std::string refused;                     // the core's message when it refused the job
};

struct SimResult {
  Resources capacity;  // every simulated host
  uint64_t hosts = 0;
  std::vector<IntervalSample> intervals;
  std::vector<JobOutcome> jobs;  // in arrival order
  absl::Duration end;            // simulated time at the end
  bool stalled = false;
  uint64_t cycles = 0;
  uint64_t placements = 0;
  uint64_t preemptions = 0;
  uint64_t store_writes = 0;  // task, job, pool and host records the master would commit
  double wall_seconds = 0;    // wall time of the run (not deterministic)
  // The CPU time of the run (the process's; the run is single-threaded): less swayed than the
  // wall time by other work on the machine, for comparing two runs' cost.
  double cpu_seconds = 0;
};

// FAILED_PRECONDITION / INVALID_ARGUMENT when the core refuses the scenario's pools, hosts or
// placement profile (the message names which).
absl::StatusOr<SimResult> RunScenario(const Scenario& scenario);

}  // namespace paceline::sim
