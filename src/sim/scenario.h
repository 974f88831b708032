#pragma once
// Scenario: what `paceline sim SCENARIO.yaml` simulates — hosts, a pool tree, jobs arriving
// over time, and the run's clock settings. docs/sim.md documents every key; in short:
//
//   seed: 7                      # randomness of the placement engine (random-fit) and fill mode
//   run_for: 10m                 # simulated time; optional when every task has a duration
//   report_every: 10s            # one report interval (default 10s)
//   cycle_every: 1s              # scheduling cycle cadence (default 1s)
//   heartbeat_every: 10s         # host heartbeats; a host silent 3x this long is lost
//   start_delay: 0s              # launch sent -> the simulated agent reports RUNNING
//   placement: default           # placement profile (placement/profile.h)
//   backfill: true               # EASY backfill in admission (docs/resource-manager.md)
//   hosts:
//     - {count: 10, name: a, resources: {cpu: 10, memory: 64Gi, gpu: 8}, gpu_model: V100,
//        labels: {zone: a}}
//   pools:
//     /a: {resources: {cpu: {reservation: 20, limit: 100, share: 1}}}   # a pool spec
//   jobs:
//     - {at: 30s, pool: /a, spec: {name: a1, type: batch, instances: 10,
//        task: {resources: {cpu: 1, memory: 1Gi}, duration: 2h}}}     # a job spec
//
// Pools and job specs are read by the pool and job spec parsers (spec/embedded_spec.h), so they
// accept exactly what `paceline pool create` and `paceline job create` accept; a job's
// `task.command` may be left out (simulated tasks run nothing), and `task.duration` — the job
// spec's simulated run time — is how long each task runs once RUNNING (0: until killed).
//
// Parsing is strict like every spec: unknown keys (with a hint), wrong types, bad units and
// impossible values are errors, all of them reported, one per line:
//   FILE:LINE:COLUMN: FIELD.PATH: what is wrong; expected ...
// Cross-checks: host names are unique; a pool's parent is declared (or is /); a job's pool is
// a declared leaf pool; `at` is within run_for; run_for is required when some task runs
// until killed.
//
// Thread-safety: value types and pure functions.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/resources.h"
#include "spec/job_spec.h"
#include "spec/pool_spec.h"

namespace paceline::sim {

struct HostGroup {
  std::string name;         // host names are NAME-0 ... NAME-(count-1)
  bool exact_name = false;  // one host named NAME (trace replay); not from YAML
  uint32_t count = 1;
  Resources resources;    // cpu, memory, disk; gpu = whole devices * 1000
  std::string gpu_model;  // the model of every device (default "gpu")
  std::vector<std::pair<std::string, std::string>> labels;  // sorted by key
  friend bool operator==(const HostGroup&, const HostGroup&) = default;
};

struct ScenarioJob {
  absl::Duration at = absl::ZeroDuration();  // arrival, from the start of the run
  std::string pool;
  JobSpec spec;
  friend bool operator==(const ScenarioJob&, const ScenarioJob&) = default;
};

struct Scenario {
  uint64_t seed = 1;
  // Infinite: until every job that arrived has ended (the parser requires a finite value
  // when some task would run until killed).
  absl::Duration run_for = absl::InfiniteDuration();
  absl::Duration report_every = absl::Seconds(10);
  absl::Duration cycle_every = absl::Seconds(1);
  absl::Duration heartbeat_every = absl::Seconds(10);
  absl::Duration start_delay = absl::ZeroDuration();
  std::string placement = "default";
  bool backfill = true;  // ResourceManagerConfig::backfill
  std::vector<HostGroup> hosts;
  std::map<std::string, PoolSpec> pools;  // by path; parents sort before their children
  std::vector<ScenarioJob> jobs;          // sorted by `at` (stable: file order at equal times)
  friend bool operator==(const Scenario&, const Scenario&) = default;
};

// `file_name` only labels error messages.
absl::StatusOr<Scenario> ParseScenario(absl::string_view yaml_text, absl::string_view file_name);
// NOT_FOUND / FAILED_PRECONDITION when the file cannot be read; parse errors as above.
absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path);

inline constexpr uint32_t kMaxHostsPerGroup = 1'000'000;
inline constexpr size_t kMaxScenarioBytes = 64 << 20;

}  // namespace paceline::sim
