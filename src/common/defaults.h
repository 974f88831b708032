#pragma once
// Defaults: every default that more than one process or command relies on, in one place —
// the master's ports and data directory, the scheduling cycle, agent heartbeats, the host
// timeout, the leader's lease and the life of a task's credential. The master, the agent,
// `paceline up` and the CLI all read them from here.
//
// Thread-safety: constants.

#include <cstdint>

#include "absl/time/time.h"

namespace paceline::defaults {

inline constexpr const char* kListenHost = "127.0.0.1";
inline constexpr uint16_t kGrpcPort = 5390;  // the master's gRPC API (clients and agents)
inline constexpr uint16_t kHttpPort = 5391;  // the master's HTTP side (JSON API, /metrics)
inline constexpr const char* kMasterAddr = "127.0.0.1:5390";
inline constexpr const char* kDataDir = "data";  // the master's store, token and master.json

inline constexpr absl::Duration kCycle = absl::Milliseconds(50);  // one scheduling cycle
// A standby answers reads from its copy of the store while it is at most this old.
inline constexpr absl::Duration kStandbyReadBound = absl::Seconds(5);
// One point of the cluster's and the pools' history (an hour of them is kept).
inline constexpr absl::Duration kHistoryPeriod = absl::Seconds(10);
// What the master asks of its agents, and how long a silent host may stay before it is LOST.
inline constexpr absl::Duration kHeartbeatInterval = absl::Seconds(2);
inline constexpr absl::Duration kHostTimeout = absl::Seconds(30);
// How long a leader's lease runs without renewal (several masters on PostgreSQL): a standby
// takes over this long after the leader died. The leader renews every fifth of it, so a leader
// stalled for up to about four fifths of it (2 s) keeps its lease
// (bench/results/failover-lease-2026-11-29.md).
inline constexpr absl::Duration kLease = absl::Milliseconds(2500);
// How long a task's credential is valid (the master's --task-credential-ttl); it is renewed at a
// third of it (masterd/task_credentials.h).
inline constexpr absl::Duration kTaskCredentialTtl = absl::Minutes(10);
// How long a certificate the master signs for a joining or renewing host is valid.
inline constexpr absl::Duration kHostCertValidity = absl::Hours(24 * 365);

}  // namespace paceline::defaults
