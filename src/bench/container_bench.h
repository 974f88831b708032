#pragma once
// The container benchmark of `paceline bench containers` (docs/benchmarks.md "Containers"):
// a real agent::TaskRuntime in this process — the real paceline-task-wrapper, the real OCI
// runtime (crun) and real cgroups (as root) — on a temporary work dir, driven as the agent's
// loop drives it. Times are from the Launch() call to the runtime's RUNNING event and to its
// terminal event (the events' own timestamps: the agent loop's clock when it handled the
// wrapper's report). RUNNING means the wrapper has started the task's process: for a container
// that is `crun run`, so Launch -> terminal is what a container start really costs.
//
// Phases (each skipped when its count is 0):
//   warm latency   for each command, `runs` plain tasks, then as many container tasks of the
//                  same command (the image already cached), each kind after 3 warm-up runs, one
//                  at a time: the next launch waits until the previous run has ended and is
//                  gone;
//   throughput     `containers` container tasks of one image launched back to back (the loop
//                  polls between launches, as a live agent does), each tiny (cpu 0.001,
//                  memory 16Mi by default): wall time until all have ended, per-container
//                  latency, and CPU per container; then as many plain tasks, the same way, for
//                  reference;
//   cold pull      `cold_runs` times, a fresh runtime with an empty cache launches one
//                  container task whose image must first be fetched: from the registry
//                  `registry` (a real RegistrySource pull through the runtime's ImagePulls,
//                  trusting `registry_ca`), or, without a registry, from the OCI layout
//                  `cold_image_file` through ArchiveSource (the load is then timed from the
//                  start of ArchiveSource::Open, and Launch follows it).
//
// CPU per run: the benchmark process itself (the agent loop, pull threads), the processes below
// it (wrappers, crun, the tasks: /proc of its children, waited-for or not), and what the task
// cgroups were charged (the agent's cgroup, hierarchical; -1 when unreadable).
//
// Errors: INVALID_ARGUMENT for a bad config; FAILED_PRECONDITION when the runtime cannot run
// containers here (no crun, not root); the first failed launch of a latency group, with its
// message; other failures are counted in the report, with the first message.
//
// Thread-safety: RunContainerBench is a blocking call on one thread.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace paceline::bench {

struct ContainerBenchConfig {
  std::string image_file;                                    // OCI layout dir/tar (required)
  std::string image_ref = "bench.local/paceline/busybox:1";  // recorded in the cache as
  std::vector<std::string> commands = {"true", "echo hello"};
  int runs = 200;  // per command, for containers and for plain tasks each
  int warmup = 3;  // runs of each kind before a group, not counted
  int64_t latency_cpu_milli = 1000;
  int64_t latency_memory_bytes = int64_t{64} << 20;

  int containers = 1000;  // the throughput phase
  int64_t throughput_cpu_milli = 1;
  int64_t throughput_memory_bytes = int64_t{16} << 20;

  int cold_runs = 3;
  std::string registry;                         // HOST:PORT; "" = from cold_image_file
  std::string registry_ca;                      // PEM file the pulls trust
  std::string cold_repository = "bench/big:1";  // REPO:TAG in the registry
  std::string cold_image_file;                  // without a registry: an OCI layout dir/tar

  std::string work_dir;  // "" = a temporary directory, removed at the end
  std::string container_runtime = "crun";
  std::string wrapper_path;  // "" = paceline-task-wrapper beside this executable
  absl::Duration run_timeout = absl::Seconds(60);         // one latency or cold run
  absl::Duration throughput_timeout = absl::Minutes(15);  // the whole throughput phase
};

// Milliseconds.
struct LatencySummary {
  int64_t count = 0;
  double p50 = 0, p99 = 0, max = 0, mean = 0;
};
LatencySummary Summarize(std::vector<double> ms);

// CPU time over a phase, in milliseconds per run.
struct CpuPerRun {
  double agent_ms = 0;     // this process
  double below_ms = 0;     // its descendants: wrappers, crun, the tasks
  double cgroups_ms = -1;  // charged to the task cgroups; -1 = unknown
};

struct LatencyGroup {
  std::string command;
  bool container = false;
  LatencySummary launch_call;  // the Launch() call itself (hooks, mount, spawn)
  LatencySummary to_running, to_end;
  CpuPerRun cpu;
  int failed = 0;  // not EXITED with code 0
  std::string first_error;
};

struct ThroughputResult {
  int tasks = 0;             // launched
  absl::Duration launching;  // the time spent inside Launch() calls
  absl::Duration wall;       // first Launch() to the last terminal event
  double per_second = 0;
  LatencySummary to_running, to_end;
  int max_live = 0;  // most runs the runtime held at once
  CpuPerRun cpu;
  int failed = 0;
  std::string first_error;
};

struct ColdResult {
  std::string source;  // "registry https://HOST:PORT/REPO:TAG" or "archive PATH"
  int64_t image_bytes = 0;
  LatencySummary load;  // archive only: Open + Pull into the cache
  LatencySummary to_running, to_end;
  std::vector<double> each_to_running_ms;
  int failed = 0;
  std::string first_error;
};

struct ContainerBenchReport {
  ContainerBenchConfig config;
  std::string isolation;  // the runtime's cgroup mode: "v1", "v2", "none"
  std::string image_digest;
  int64_t image_bytes = 0;
  std::vector<LatencyGroup> latency;
  std::optional<ThroughputResult> throughput, throughput_plain;
  std::optional<ColdResult> cold;
  std::string cold_skipped;  // why the cold phase did not run, when it did not
  absl::Duration wall;
  std::string loadavg_start, loadavg_end;  // /proc/loadavg: the machine may be shared
};

absl::StatusOr<ContainerBenchReport> RunContainerBench(const ContainerBenchConfig& config);
nlohmann::json ToJson(const ContainerBenchReport& r);

}  // namespace paceline::bench
