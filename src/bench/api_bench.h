#pragma once
// The API benchmark of `paceline bench api`: C concurrent clients, each on its own gRPC
// channel, call CreateJob, GetJob and QueryJobs in a loop against one master for a fixed time;
// the report gives requests per second and latency percentiles per call.
//
// With no address the benchmark starts a master in this process, on a fresh temporary data dir
// (its real SQLite store, durable commits) and free loopback ports, and stops it at the end.
// The jobs it creates stay PENDING (no agent): this measures the API, the event loop and the
// store, not task execution.
//
// Thread-safety: RunApiBench is a blocking call that owns its threads.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace paceline::bench {

struct ApiBenchConfig {
  int clients = 100;
  absl::Duration duration = absl::Seconds(10);
  std::string addr;   // empty: start a master in this process
  std::string token;  // with addr
};

struct CallStats {
  std::string call;
  uint64_t ok = 0;
  uint64_t errors = 0;
  std::string first_error;
  double per_second = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
};

struct ApiBenchReport {
  ApiBenchConfig config;
  absl::Duration wall;
  std::vector<CallStats> calls;  // CreateJob, GetJob, QueryJobs
  double total_per_second = 0;
};

absl::StatusOr<ApiBenchReport> RunApiBench(const ApiBenchConfig& config);
nlohmann::json ToJson(const ApiBenchReport& report);

}  // namespace paceline::bench
