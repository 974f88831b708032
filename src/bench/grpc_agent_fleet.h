#pragma once
// GrpcAgentFleet: N emulated hosts (FakeAgent, fake_agent.h), each on its own real
// AgentService.Connect stream to one master — the same protocol, auth and acknowledgements as
// `paceline agent`, without running anything — for scale benchmarks and end-to-end tests.
//
//   GrpcFleetConfig config;
//   config.master_addr = "127.0.0.1:5390";
//   config.token = token;
//   config.hosts = UniformHosts(1000, "fake", Capacity(1000, 1 << 30));
//   ASSIGN_OR_RETURN(std::unique_ptr<GrpcAgentFleet> fleet, GrpcAgentFleet::Start(config));
//   RETURN_IF_ERROR(fleet->WaitRegistered(absl::Seconds(30)));
//   ... submit work; read fleet->counters() ...
//   fleet->Stop();
//
// How: a few threads (config.threads), each owning one gRPC completion queue and a share of
// the hosts, drive every stream with the asynchronous client API (grpc_host_stream.h) and
// tick the agents' timers every few milliseconds. Streams are spread over several channels,
// config.streams_per_channel each; every channel gets its own TCP connection (a local
// subchannel pool and a distinct channel argument), since HTTP/2 servers may limit the
// concurrent streams of one connection (often to 100; Paceline's master sets no limit, and
// 1,000 streams on one channel work). A stream that ends reconnects with a backoff and registers
// again, like the real agent.
//
// Thread-safety: Start, Stop and the destructor from one thread (never from the observer);
// counters() and WaitRegistered from any thread. config.agent.observer is called on the
// fleet's threads.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "bench/fake_agent.h"
#include "bench/fleet_stats.h"
#include "paceline/v1/common.pb.h"

namespace paceline::bench {

struct GrpcFleetConfig {
  std::string master_addr;  // host:port of the master's gRPC API
  std::string token;        // the API token; empty: none
  std::vector<FakeHostSpec> hosts;
  FakeAgentOptions agent;  // shared by every host; its observer must be thread-safe
  int threads = 2;
  int streams_per_channel = 50;
  absl::Duration max_backoff = absl::Seconds(2);  // between a host's reconnection attempts
  absl::Duration tick = absl::Milliseconds(5);    // timer resolution (heartbeats, finishes)
};

// `n` hosts named "<prefix>-00000", "<prefix>-00001", ... with the same capacity and labels
// and the default port range.
std::vector<FakeHostSpec> UniformHosts(
    int n, absl::string_view prefix, const v1::Resources& capacity,
    std::vector<std::pair<std::string, std::string>> labels = {});
// A Resources message of `cpu_milli` millicores and `memory_bytes` bytes.
v1::Resources Capacity(int64_t cpu_milli, int64_t memory_bytes);

class GrpcAgentFleet {
 public:
  // Validates `config`, creates the channels and starts the threads; every host starts
  // connecting at once. Does not wait for the master (see WaitRegistered).
  static absl::StatusOr<std::unique_ptr<GrpcAgentFleet>> Start(GrpcFleetConfig config);
  ~GrpcAgentFleet();  // Stop()s

  // OK once every host holds a stream the master has answered with `registered`;
  // DEADLINE_EXCEEDED after `timeout`, saying how many did and the last stream error.
  absl::Status WaitRegistered(absl::Duration timeout);
  // Cancels every stream (the master sees the hosts disconnect) and joins the threads.
  // Idempotent.
  void Stop();
  FleetCounters counters() const;

 private:
  struct Impl;
  explicit GrpcAgentFleet(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace paceline::bench
