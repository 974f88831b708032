#pragma once
// AgentDaemon: `paceline agent` — the host agent's session with the master on top of the task
// runtime (agent/task_runtime.h).
//
// One thread, the agent loop, owns the TaskRuntime and the stream's write side; a reader thread
// only reads the stream and hands messages to the loop. The loop:
//   - connects (capped exponential backoff, 100 ms .. 5 s), sends `register` with the host's
//     resources, labels, port range and the runs it has (re-adopted after its own restart);
//   - runs the runtime (reap, kill deadlines, health checks);
//   - applies the master's launch / kill / ack messages;
//   - sends every unacknowledged status update (at least once: after a reconnect everything
//     not acknowledged is sent again; the master ignores duplicates), a heartbeat every
//     interval the master asked for, and every `usage_interval` what each running task and the
//     host use (agent/usage_sampler.h; soft state, not acknowledged).
// Status updates wait in the runtime's durable outbox while the master is unreachable.
// A master that hangs (its process stopped, a network partition) is noticed by gRPC keepalive
// pings on the channel (unanswered for `keepalive_timeout` after `keepalive_time`): the stream
// fails and the loop reconnects with its backoff. A connection attempt never blocks the loop
// for more than a moment: the loop waits for the channel to be ready only briefly each time.
//
// A joined host also has a renewer thread (`renewal_files`), which keeps its certificate renewed
// and hands a new one to the loop.
//
// Thread-safety: Run() on one thread; Stop() from any thread (e.g. a signal waiter).

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "agent/base/agent_config.h"
#include "agentd/agent_metrics.h"
#include "agentd/certificate_renewal.h"
#include "common/defaults.h"

namespace paceline::agentd {

struct AgentDaemonConfig {
  agent::AgentConfig agent;
  // HOST:PORT, or several separated by commas (several masters): tried in turn until the
  // leader accepts the stream; after a lost stream the next one is tried first. A master that
  // refuses the stream naming the leader (common/leader_hint.h) sends the agent there at once,
  // unless that is the master just found dead (standbys name it until the lease runs out);
  // after a refusal the agent asks again within 250 ms, since a master that refuses is up.
  std::string master_addr = defaults::kMasterAddr;
  std::string token;
  // TLS (PEM texts): the cluster's CA to verify the master against, and this agent's client
  // certificate and key. An empty CA: plain text (a master started with --insecure-loopback).
  std::string ca_pem, cert_pem, key_pem;
  // A joined host's credential files (certificate_renewal.h): the agent checks them at start and
  // every `cert_check` (zero: never), and renews the certificate once it is due; a renewed
  // certificate (its own, or one `paceline agent renew` stored) is presented at once: the agent
  // reconnects with it (its tasks keep running; `task exec` sessions end).
  std::optional<CredentialFiles> renewal_files;
  absl::Duration cert_check = absl::Hours(1);
  // GET /metrics (agent_metrics.h): where and how it is served; none: not served. Its host,
  // version, commit, isolation and work dir are filled in at start; after a renewal it serves
  // again with the files read anew.
  std::optional<AgentMetricsOptions> metrics;
  absl::Duration max_backoff = absl::Seconds(5);
  absl::Duration usage_interval = absl::Seconds(5);
  absl::Duration keepalive_time = absl::Seconds(5);
  absl::Duration keepalive_timeout = absl::Seconds(5);
};

class AgentDaemon {
 public:
  explicit AgentDaemon(AgentDaemonConfig config) : config_(std::move(config)) {}
  // Runs until Stop(); returns an error when the runtime cannot start (bad config, work dir
  // locked by another agent, ...). Tasks keep running after it returns.
  absl::Status Run();
  void Stop();

 private:
  struct Impl;
  AgentDaemonConfig config_;
  std::atomic<bool> stop_{false};
  std::atomic<Impl*> impl_{nullptr};
};

}  // namespace paceline::agentd
