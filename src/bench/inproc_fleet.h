#pragma once
// InProcessAgentFleet: N emulated hosts (FakeAgent, fake_agent.h) attached to a master that
// runs in this process, through the master's own agent protocol code (masterd::AgentConnection,
// the code every real agent's gRPC stream goes through) with an in-memory AgentLink instead of
// a stream. This is how `paceline bench scale` drives 50,000 hosts from one process: a gRPC
// stream per host would cost the master two threads per host (GrpcAgentFleet covers that
// transport at 1,000+ hosts).
//
//   InProcessFleetConfig config;
//   config.hosts = UniformHosts(50000, "sim", Capacity(32000, 128 * kGi));
//   ASSIGN_OR_RETURN(auto fleet, InProcessAgentFleet::Start(&cluster, hb_interval, config));
//   ... submit work; fleet->counters() ...
//   fleet->Detach();                 // the master is going away
//   fleet->Attach(&new_cluster, hb); // registers every host again, with its live runs
//
// How: the hosts are split over config.threads shards. What the master sends a host (launch,
// kill, ack, ...) is queued on its shard (Send never blocks the master's event loop); the
// shard's thread hands it to the host's FakeAgent and passes the answers to the host's
// AgentConnection, and ticks the agents' timers (heartbeats, finishing runs, resends). A
// registration blocks until the master has made it durable, so Attach registers the hosts
// from config.register_threads threads at once, before the shards start.
//
// Thread-safety: Start/Attach/Detach/Stop from one thread; counters() from any thread.

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/fake_agent.h"
#include "bench/fleet_stats.h"
#include "masterd/cluster.h"

namespace paceline::bench {

struct InProcessFleetConfig {
  std::vector<FakeHostSpec> hosts;
  FakeAgentOptions agent;  // shared by every host; its observer must be thread-safe
  int threads = 2;
  int register_threads = 64;
  absl::Duration tick = absl::Milliseconds(20);  // timer resolution
};

class InProcessAgentFleet {
 public:
  // Creates the hosts and Attach()es them to `cluster`.
  static absl::StatusOr<std::unique_ptr<InProcessAgentFleet>> Start(
      masterd::Cluster* cluster, absl::Duration heartbeat_interval, InProcessFleetConfig config);
  ~InProcessAgentFleet();  // Stop()s

  // Registers every host with `cluster` (reporting the runs it has) and starts the shards.
  // The first registration error is returned (the hosts registered so far stay attached).
  absl::Status Attach(masterd::Cluster* cluster, absl::Duration heartbeat_interval);
  // Stops the shards and closes every connection: the hosts are disconnected, their runs go on.
  void Detach();
  void Stop() { Detach(); }
  FleetCounters counters() const;
  size_t live_runs() const;   // over every host
  size_t heap_bytes() const;  // what the emulated hosts hold (FakeAgent::HeapBytes), in all

 private:
  struct Impl;
  explicit InProcessAgentFleet(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace paceline::bench
